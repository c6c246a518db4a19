#pragma once

#include "ckptscope/formats/dtype.h"
#include "ckptscope/stats/tensorstats.h"

#include <cstdint>
#include <functional>

namespace ckptscope::stats {

// Supplies stored elements: fill `out` with the raw bytes of values
// [first, first + n).
using RawReader = std::function<void(uint64_t first, uint64_t n, void* out)>;

// Calls f(T()) with the stored C type of an integer dtype (U8 … I64;
// BOOL as uint8_t) and returns what it returns.
template <typename F> decltype(auto) withIntegerType(Dtype dtype, F&& f) {
    switch (dtype) {
    case Dtype::I8:
        return f(int8_t());
    case Dtype::U16:
        return f(uint16_t());
    case Dtype::I16:
        return f(int16_t());
    case Dtype::U32:
        return f(uint32_t());
    case Dtype::I32:
        return f(int32_t());
    case Dtype::U64:
        return f(uint64_t());
    case Dtype::I64:
        return f(int64_t());
    default: // U8, BOOL
        return f(uint8_t());
    }
}

// Counts, extremes and moments of an integer tensor (U8 … I64) from exact
// integer sums: min and max as stored (also in intMin, intMax); sum and sum
// of squares in 128/256 bits, turned into mean, std and L2 in double once at
// the end. One thread; progress runs to 1 / passes.
TensorStats integerStats(Dtype dtype, uint64_t count, const RawReader& reader,
                         const StatsOptions& options, double passes);

} // namespace ckptscope::stats
