#include "compare/comparedetail.h"

#include "ckptscope/diff/elementdiff.h"
#include "ckptscope/stats/documentstats.h"

#include <algorithm>
#include <cstring>
#include <memory>

using namespace ckptscope;

namespace {

// One side's values: how many, their statistics, and their histogram over
// given bins (none: no such side).
struct Side {
    uint64_t count = 0;
    std::function<StatsResult(const StatsOptions&)> stats;
    std::function<Histogram(double lo, double hi, int bins, const TaskControl&)> overlay;
};

// A side's overlay: its values read by `reader` counted on given bins.
template <typename Reader> auto overlayOver(uint64_t count, Reader reader) {
    return [reader, count](double lo, double hi, int binCount, const TaskControl& control) {
        return histogramOver(count, reader, lo, hi, binCount, control);
    };
}

CompareDetail computeDetail(const Side& sa, const Side& sb, int bins,
                            const std::atomic<bool>* cancel,
                            const std::function<void(double)>& progress) {
    CompareDetail d;
    const double total = std::max<double>(1.0, 2.0 * double(sa.count + sb.count));
    double done = 0;
    auto stats = [&](const Side& side) {
        std::optional<StatsResult> r;
        if (!side.stats)
            return r;
        StatsOptions o;
        o.cancel = cancel;
        o.progress = [&, n = side.count](double p) {
            if (progress)
                progress((done + p * double(n)) / total);
        };
        r = side.stats(o);
        done += double(side.count);
        return r;
    };
    d.a = stats(sa);
    d.b = stats(sb);
    // The union of the finite ranges: the same bins for both sides.
    std::optional<double> lo, hi;
    for (const auto* s : {&d.a, &d.b})
        if (*s && (*s)->stats.min) {
            lo = std::min(lo.value_or(*(*s)->stats.min), *(*s)->stats.min);
            hi = std::max(hi.value_or(*(*s)->stats.max), *(*s)->stats.max);
        }
    if (!lo)
        return d;
    if (d.a && d.a->stats.min)
        d.overlayA = sa.overlay(*lo, *hi, bins, cancel);
    if (d.b && d.b->stats.min)
        d.overlayB = sb.overlay(*lo, *hi, bins, cancel);
    if (progress)
        progress(1.0);
    return d;
}

Side blobSide(const std::vector<uint8_t>* bytes) {
    Side s;
    if (!bytes || bytes->size() % 4 != 0)
        return s;
    s.count = bytes->size() / 4;
    const ValueReader read = [bytes](uint64_t first, uint64_t n, float* out) {
        std::memcpy(out, bytes->data() + first * 4, size_t(n) * 4);
    };
    s.stats = [read, n = s.count](const StatsOptions& o) { return computeStats(n, read, o); };
    s.overlay = overlayOver(s.count, read);
    return s;
}

} // namespace

CompareDetail computeCompareDetail(const Document& a, const Document& b,
                                   const TensorDiffEntry& entry, int bins,
                                   const std::atomic<bool>* cancel,
                                   const std::function<void(double)>& progress,
                                   uint64_t keptBytes) {
    const uint64_t keptValues = keptBytes / sizeof(float);
    auto side = [keptValues](const Document& doc, std::optional<size_t> index) {
        Side s;
        if (!index || !hasStatistics(doc.tensors()[*index].dtype))
            return s; // complex or quantized values: no statistics, no overlay (the diff has Δ)
        const size_t i = *index;
        const Dtype dtype = doc.tensors()[i].dtype;
        s.count = doc.tensors()[i].dataLen;
        // Each dtype's own statistics (F64 in double, integers exact), as
        // on the main window's Statistics page; the overlay in double where
        // f32 would round or overflow.
        if (statsReadStored(doc, i) && s.count <= keptValues) {
            // The statistics read the stored bytes (codes summed, levels
            // counted): read them once, and the overlay decodes them.
            auto stored = std::make_shared<std::vector<uint8_t>>();
            s.stats = [&doc, i, stored](const StatsOptions& o) {
                const TensorEntry& t = doc.tensors()[i];
                stored->resize(size_t(
                    dtypeBytes(t.dtype, t.dataLen).value_or(0))); // what readRawValues writes
                doc.readRawValues(i, 0, t.dataLen, stored->data());
                return computeTensorStats(doc, i, *stored, o);
            };
            const ValueReader fromStored = [stored, dtype](uint64_t first, uint64_t n, float* out) {
                // (whole blocks: histogramOver reads kBlock values at a time)
                convertToF32(dtype, stored->data() + *dtypeBytes(dtype, first), size_t(n), out);
            };
            s.overlay = overlayOver(s.count, fromStored);
            return s;
        }
        if (statsDecodeF32(doc, i) && s.count <= keptValues) {
            // The statistics' pass keeps what it decodes, and the overlay
            // bins that: one decode of the tensor, not two (quantized types).
            auto kept = std::make_shared<std::vector<float>>();
            const ValueReader decodeAndKeep = [&doc, i, kept](uint64_t first, uint64_t n,
                                                              float* out) {
                float* at = kept->data() + first;
                doc.readValues(i, first, n, at);
                std::memcpy(out, at, size_t(n) * sizeof(float));
            };
            s.stats = [kept, decodeAndKeep, n = s.count](const StatsOptions& o) {
                kept->resize(size_t(n));
                return computeStats(n, decodeAndKeep, o);
            };
            const ValueReader fromKept = [kept](uint64_t first, uint64_t n, float* out) {
                std::memcpy(out, kept->data() + first, size_t(n) * sizeof(float));
            };
            s.overlay = overlayOver(s.count, fromKept);
            return s;
        }
        s.stats = [&doc, i](const StatsOptions& o) { return computeTensorStats(doc, i, o); };
        if (dtype == Dtype::F64 || isInteger(dtype))
            s.overlay = overlayOver(s.count, tensorReaderF64(doc, i));
        else
            s.overlay = overlayOver(s.count, tensorReader(doc, i));
        return s;
    };
    return computeDetail(side(a, entry.indexA), side(b, entry.indexB), bins, cancel, progress);
}

CompareDetail computeBlobDetail(const std::vector<uint8_t>* a, const std::vector<uint8_t>* b,
                                int bins, const std::atomic<bool>* cancel,
                                const std::function<void(double)>& progress) {
    return computeDetail(blobSide(a), blobSide(b), bins, cancel, progress);
}
