#pragma once

#include "ckptscope/stats/tensorstats.h"

#include <vector>

namespace ckptscope {

// A histogram's counts moved onto `bins` equal bins over [lo, hi] (a range
// shared by several histograms, so they can be drawn side by side), as
// shares of its total: each source bin's count is split over the target
// bins in proportion to their overlap, as if its values were spread evenly
// (a share is therefore exact only to the source bin width). A histogram
// whose values are all equal (lo == hi) goes whole into the bin of that
// value. Empty (all zero) for an empty histogram or bins < 1 or hi <= lo.
std::vector<double> rebinHistogram(const Histogram& h, double lo, double hi, int bins);

} // namespace ckptscope
