#include "ckptscope/run/serieshistograms.h"

#include "ckptscope/stats/documentstats.h"

namespace ckptscope {

namespace {

// Tensor `index` of a checkpoint's merged summary is in the file whose
// tensors it falls among (merge() appends the files' tensors in order).
std::optional<Histogram> histogramOf(const RunCheckpoint& cp, size_t index,
                                     const SummaryCache* cache, const TaskControl& control) {
    for (const std::string& file : cp.files) {
        std::optional<FileSummary> cached;
        // A file by URL: its identity from the first answer, which opening
        // it then reuses.
        const auto http = isUrl(file) ? std::make_shared<const HttpSource>(file) : nullptr;
        if (cache)
            if (const auto id = http ? std::optional(urlIdentity(*http)) : fileIdentity(file))
                cached = cache->load(*id);
        if (cached) {
            if (index < cached->tensors.size())
                return std::move(cached->tensors[index].histogram);
            index -= cached->tensors.size();
            continue;
        }
        const auto doc =
            http ? Document::open(std::shared_ptr<const ByteSource>(http)) : Document::open(file);
        if (index >= doc->tensors().size()) {
            index -= doc->tensors().size();
            continue;
        }
        StatsOptions so;
        so.bins = kSummaryHistogramBins;
        so.cancel = control.cancel;
        return computeTensorStats(*doc, index, so).histogram;
    }
    return std::nullopt;
}

bool matches(const Histogram& h, const TensorStats& s) {
    uint64_t total = 0;
    for (uint64_t c : h.counts)
        total += c;
    if (total != s.finite)
        return false;
    return total == 0 || (s.min && s.max && h.lo == *s.min && h.hi == *s.max);
}

} // namespace

SeriesHistograms readSeriesHistograms(const Run& run, const TensorSeries& series,
                                      const SummaryCache* cache, const TaskControl& control) {
    SeriesHistograms out;
    out.at.resize(run.checkpoints.size());
    for (size_t c = 0; c < run.checkpoints.size(); ++c) {
        control.throwIfCancelled();
        const TensorSummary* t = series.point(run, c);
        if (!t || t->stats.finite == 0)
            continue;
        const RunCheckpoint& cp = run.checkpoints[c];
        try {
            std::optional<Histogram> h = histogramOf(cp, *series.at[c], cache, control);
            if (h && matches(*h, t->stats))
                out.at[c] = std::move(h);
            else
                out.problems.push_back(cp.path + ": changed since the run was read");
        } catch (const Cancelled&) {
            throw;
        } catch (const OpenError& e) {
            out.problems.push_back(e.what()); // names the file
        } catch (const std::exception& e) {
            out.problems.push_back(cp.path + ": " + e.what());
        }
    }
    return out;
}

} // namespace ckptscope
