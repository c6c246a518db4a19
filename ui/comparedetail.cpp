#include "comparedetail.h"

#include "ckptscope/elementdiff.h"

#include <algorithm>

using namespace ckptscope;

CompareDetail computeCompareDetail(const Document& a, const Document& b,
                                   const TensorDiffEntry& entry, int bins,
                                   const std::atomic<bool>* cancel,
                                   const std::function<void(double)>& progress) {
    CompareDetail d;
    const uint64_t countA = entry.indexA ? a.tensors()[*entry.indexA].dataLen : 0;
    const uint64_t countB = entry.indexB ? b.tensors()[*entry.indexB].dataLen : 0;
    const double total = std::max<double>(1.0, 2.0 * double(countA + countB));
    double done = 0;
    auto step = [&](uint64_t n) {
        return [&, n](double p) {
            if (progress)
                progress((done + p * double(n)) / total);
        };
    };
    auto stats = [&](const Document& doc, std::optional<size_t> index, uint64_t n) {
        std::optional<StatsResult> r;
        if (!index)
            return r;
        StatsOptions o;
        o.cancel = cancel;
        o.progress = step(n);
        r = computeStats(n, tensorReader(doc, *index), o);
        done += double(n);
        return r;
    };
    d.a = stats(a, entry.indexA, countA);
    d.b = stats(b, entry.indexB, countB);
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
        d.overlayA = histogramOver(countA, tensorReader(a, *entry.indexA), *lo, *hi, bins, cancel);
    if (d.b && d.b->stats.min)
        d.overlayB = histogramOver(countB, tensorReader(b, *entry.indexB), *lo, *hi, bins, cancel);
    if (progress)
        progress(1.0);
    return d;
}
