#include "ckptscope/stats/histogrampercentiles.h"

#include <algorithm>
#include <cmath>

namespace ckptscope {

std::optional<double> histogramPercentile(const Histogram& h, double p) {
    uint64_t total = 0;
    for (uint64_t c : h.counts)
        total += c;
    if (total == 0 || !(p >= 0) || p > 100)
        return std::nullopt;
    if (p == 0)
        return h.lo;
    if (p == 100)
        return h.hi;
    if (!std::isfinite(h.hi - h.lo)) {
        // lo near −max, hi near max: on halved edges, doubled back.
        return 2 * *histogramPercentile(h.halved(), p);
    }
    const uint64_t rank = uint64_t(std::llround(p / 100.0 * double(total - 1)));
    const double width = (h.hi - h.lo) / double(h.counts.size());
    uint64_t before = 0;
    for (size_t k = 0; k < h.counts.size(); ++k) {
        const uint64_t c = h.counts[k];
        if (rank < before + c) {
            // The (rank − before)-th of c values spread evenly over the bin.
            const double within = (double(rank - before) + 0.5) / double(c);
            const double v = h.lo + (double(k) + within) * width;
            return std::clamp(v, h.lo, h.hi);
        }
        before += c;
    }
    return h.hi; // not reached: rank < total
}

} // namespace ckptscope
