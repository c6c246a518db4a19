#pragma once

#include "ckptscope/formats/dtype.h"
#include "ckptscope/stats/tensorstats.h"

#include <cstdint>
#include <functional>

namespace ckptscope::stats {

// Supplies stored elements: fill `out` with the raw bytes of values
// [first, first + n).
using RawReader = std::function<void(uint64_t first, uint64_t n, void* out)>;

// Counts, extremes and moments of an integer tensor (U8 … I64) from exact
// integer sums: min and max as stored (also in intMin, intMax); sum and sum
// of squares in 128/256 bits, turned into mean, std and L2 in double once at
// the end. One thread; progress runs to 1 / passes.
TensorStats integerStats(Dtype dtype, uint64_t count, const RawReader& reader,
                         const StatsOptions& options, double passes);

} // namespace ckptscope::stats
