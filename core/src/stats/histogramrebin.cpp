#include "ckptscope/stats/histogramrebin.h"

#include <algorithm>
#include <cmath>

namespace ckptscope {

std::vector<double> rebinHistogram(const Histogram& h, double lo, double hi, int bins) {
    std::vector<double> out(size_t(std::max(bins, 0)), 0.0);
    uint64_t total = 0;
    for (uint64_t c : h.counts)
        total += c;
    if (total == 0 || bins < 1 || !(hi > lo))
        return out;
    if (!std::isfinite(hi - lo) || !std::isfinite(h.hi - h.lo)) {
        // A width past the double range: on halved edges (every share is a
        // ratio of widths).
        return rebinHistogram(h.halved(), lo / 2, hi / 2, bins);
    }
    const double width = (hi - lo) / double(bins);
    auto target = [&](double v) {
        const double pos = (v - lo) / width;
        return size_t(std::clamp(pos, 0.0, double(bins - 1)));
    };
    if (!(h.hi > h.lo)) {
        out[target(h.lo)] = 1.0;
        return out;
    }
    const double srcWidth = (h.hi - h.lo) / double(h.counts.size());
    for (size_t k = 0; k < h.counts.size(); ++k) {
        if (h.counts[k] == 0)
            continue;
        const double a = h.lo + double(k) * srcWidth, b = a + srcWidth;
        const double share = double(h.counts[k]) / double(total);
        // Source bin [a, b) over target bins [lo + j·width, lo + (j+1)·width).
        for (size_t j = target(a); j <= target(b) && j < out.size(); ++j) {
            const double ta = j == 0 ? -INFINITY : lo + double(j) * width;
            const double tb = j + 1 == out.size() ? INFINITY : lo + double(j + 1) * width;
            const double overlap = std::min(b, tb) - std::max(a, ta);
            if (overlap > 0)
                out[j] += share * overlap / srcWidth;
        }
    }
    return out;
}

} // namespace ckptscope
