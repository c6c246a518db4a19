#include "compare/comparedetail.h"

#include "ckptscope/diff/elementdiff.h"

#include <algorithm>
#include <cstring>

using namespace ckptscope;

namespace {

// One side's values: how many, and how to read them (none: no such side).
struct Side {
    uint64_t count = 0;
    std::optional<ValueReader> reader;
};

CompareDetail computeDetail(const Side& sa, const Side& sb, int bins,
                            const std::atomic<bool>* cancel,
                            const std::function<void(double)>& progress) {
    CompareDetail d;
    const double total = std::max<double>(1.0, 2.0 * double(sa.count + sb.count));
    double done = 0;
    auto stats = [&](const Side& side) {
        std::optional<StatsResult> r;
        if (!side.reader)
            return r;
        StatsOptions o;
        o.cancel = cancel;
        o.progress = [&, n = side.count](double p) {
            if (progress)
                progress((done + p * double(n)) / total);
        };
        r = computeStats(side.count, *side.reader, o);
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
        d.overlayA = histogramOver(sa.count, *sa.reader, *lo, *hi, bins, cancel);
    if (d.b && d.b->stats.min)
        d.overlayB = histogramOver(sb.count, *sb.reader, *lo, *hi, bins, cancel);
    if (progress)
        progress(1.0);
    return d;
}

Side blobSide(const std::vector<uint8_t>* bytes) {
    Side s;
    if (!bytes || bytes->size() % 4 != 0)
        return s;
    s.count = bytes->size() / 4;
    s.reader = [bytes](uint64_t first, uint64_t n, float* out) {
        std::memcpy(out, bytes->data() + first * 4, size_t(n) * 4);
    };
    return s;
}

} // namespace

CompareDetail computeCompareDetail(const Document& a, const Document& b,
                                   const TensorDiffEntry& entry, int bins,
                                   const std::atomic<bool>* cancel,
                                   const std::function<void(double)>& progress) {
    auto side = [](const Document& doc, std::optional<size_t> index) {
        Side s;
        if (index) {
            s.count = doc.tensors()[*index].dataLen;
            s.reader = tensorReader(doc, *index);
        }
        return s;
    };
    return computeDetail(side(a, entry.indexA), side(b, entry.indexB), bins, cancel, progress);
}

CompareDetail computeBlobDetail(const std::vector<uint8_t>* a, const std::vector<uint8_t>* b,
                                int bins, const std::atomic<bool>* cancel,
                                const std::function<void(double)>& progress) {
    return computeDetail(blobSide(a), blobSide(b), bins, cancel, progress);
}
