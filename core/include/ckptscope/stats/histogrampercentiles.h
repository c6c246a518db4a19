#pragma once

#include "ckptscope/stats/tensorstats.h"

#include <array>
#include <optional>

namespace ckptscope {

// The percentiles of TensorBoard's distribution charts: nested bands
// 0–100, 7–93, 16–84, 31–69 around the median.
inline constexpr std::array<double, 9> kDistributionPercentiles = {0,  7,  16, 31, 50,
                                                                   69, 84, 93, 100};

// The p-th percentile (0..100) of the values a histogram counted, taken as
// the value of rank round(p/100 · (n − 1)) among the n binned values in
// ascending order. The bin holding that rank is found exactly from the
// counts; inside it the value is placed as if the bin's values were spread
// evenly, so the result is within one bin width of the true value (the bin
// edges are lo + k·(hi − lo)/bins). p = 0 gives lo and p = 100 gives hi, the
// exact finite minimum and maximum. Nothing when no value was binned.
std::optional<double> histogramPercentile(const Histogram& histogram, double p);

} // namespace ckptscope
