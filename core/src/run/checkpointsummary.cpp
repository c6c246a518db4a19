#include "ckptscope/run/checkpointsummary.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/stats/documentstats.h"

#include <cstring>

namespace ckptscope {

namespace {

// The updates of a state's parameters; progress stays with the caller's
// statistics (the moments are read after them).
std::vector<ParameterUpdate> updatesOf(const OptimizerCheckpoint& state,
                                       const SummaryOptions& options) {
    return computeParameterUpdates(state, TaskControl(options.cancel));
}

bool sameStats(const TensorStats& a, const TensorStats& b) {
    return a.count == b.count && a.finite == b.finite && a.nan == b.nan && a.posInf == b.posInf &&
           a.negInf == b.negInf && a.zeros == b.zeros && a.min == b.min && a.max == b.max &&
           a.mean == b.mean && a.std == b.std && a.l2 == b.l2 && a.finiteSum == b.finiteSum;
}

bool sameHistogram(const Histogram& a, const Histogram& b) {
    return a.lo == b.lo && a.hi == b.hi && a.counts == b.counts;
}

// Runs one statistics job with the summary's bins, naming the file in any
// read error.
template <typename Job>
auto statsOf(const Document& doc, const SummaryOptions& options, const Job& job) {
    StatsOptions so;
    so.bins = kSummaryHistogramBins;
    so.cancel = options.cancel;
    so.progress = options.progress;
    try {
        return job(so);
    } catch (const Cancelled&) {
        throw;
    } catch (const OpenError&) {
        throw;
    } catch (const std::exception& e) {
        // SourceChangedError, CheckpointError, IoError: all name the file.
        throw OpenError(doc.path(), e.what());
    }
}

} // namespace

bool TensorSummary::operator==(const TensorSummary& o) const {
    return name == o.name && sameStats(stats, o.stats) && sameHistogram(histogram, o.histogram);
}

bool BlobSummary::operator==(const BlobSummary& o) const {
    return name == o.name && bytes == o.bytes && stats.has_value() == o.stats.has_value() &&
           (!stats || sameStats(*stats, *o.stats)) && sameHistogram(histogram, o.histogram);
}

bool FileSummary::operator==(const FileSummary& o) const {
    return format == o.format && metadata == o.metadata && tensors == o.tensors &&
           gradientStep == o.gradientStep && graph == o.graph && blobs == o.blobs &&
           updates == o.updates && pairedWith == o.pairedWith;
}

void FileSummary::dropHistograms() {
    for (TensorSummary& t : tensors)
        t.histogram = Histogram{};
    for (BlobSummary& b : blobs)
        b.histogram = Histogram{};
}

uint64_t summaryBytes(const Document& doc) {
    uint64_t total = 0;
    if (const GradientCheckpoint* g = doc.gradient()) {
        for (const auto& entry : g->optimizerState)
            total += entry.second.size();
        return total;
    }
    for (const TensorEntry& t : doc.tensors())
        total += dtypeBytes(t.dtype, t.dataLen).value_or(0); // dataLen fits the file
    return total;
}

FileSummary summarizeDocument(const Document& doc, const SummaryOptions& options) {
    FileSummary s;
    s.format = doc.format();
    s.metadata = doc.metadata();
    uint64_t done = 0;
    const uint64_t total = summaryBytes(doc);
    if (const GradientCheckpoint* g = doc.gradient()) {
        s.gradientStep = g->step;
        s.graph.nodes = g->graph.nodeCount();
        s.graph.edges = g->graph.edgeCount();
        for (const auto& [id, node] : g->graph.nodes()) {
            s.graph.forwardDone += node.outputCid.has_value();
            s.graph.backwardDone += node.gradientCid.has_value();
        }
        for (const auto& [name, bytes] : g->optimizerState) {
            BlobSummary b;
            b.name = name;
            b.bytes = bytes.size();
            if (bytes.size() % 4 == 0) {
                const uint8_t* data = bytes.data();
                const uint64_t count = bytes.size() / 4; // (clang: no captured bindings)
                StatsResult r = statsOf(doc, options, [count, data](StatsOptions so) {
                    so.progress = nullptr;
                    return computeStats(
                        count,
                        [data](uint64_t first, uint64_t n, float* out) {
                            std::memcpy(out, data + first * 4, size_t(n) * 4);
                        },
                        so);
                });
                b.stats = r.stats;
                b.histogram = std::move(r.histogram);
            }
            done += bytes.size();
            options.report(done, total);
            s.blobs.push_back(std::move(b));
        }
        return s;
    }
    // Tensor formats: the statistics `stats --json` gives (F64 in double,
    // every other dtype through f32), small tensors one per core.
    // Complex and quantized tensors have no statistics (hasStatistics): not
    // in the series.
    std::vector<size_t> indices;
    for (size_t i = 0; i < doc.tensors().size(); ++i)
        if (hasStatistics(doc.tensors()[i].dtype))
            indices.push_back(i);
    std::vector<StatsResult> results = statsOf(
        doc, options, [&](const StatsOptions& so) { return computeTensorStats(doc, indices, so); });
    s.tensors.reserve(results.size());
    for (size_t k = 0; k < results.size(); ++k)
        s.tensors.push_back(
            {doc.tensors()[indices[k]].name, results[k].stats, std::move(results[k].histogram)});
    // A file holding its model and optimizer state (Lightning): the updates
    // too. (A non-owning pointer: the caller holds the document.)
    const std::shared_ptr<const Document> self(std::shared_ptr<const Document>(), &doc);
    if (const auto state = findOptimizerCheckpoint(self, self))
        s.updates = updatesOf(*state, options);
    options.report(1.0);
    return s;
}

FileSummary summarizeOptimizer(std::shared_ptr<const Document> model,
                               std::shared_ptr<const Document> optimizer,
                               const SummaryOptions& options) {
    FileSummary s;
    s.format = optimizer->format();
    if (const auto state = findOptimizerCheckpoint(std::move(model), std::move(optimizer)))
        s.updates = updatesOf(*state, options);
    options.report(1.0);
    return s;
}

} // namespace ckptscope
