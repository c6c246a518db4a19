#pragma once

#include "ckptscope/diff/elementdiff.h"
#include "ckptscope/formats/dtype.h"

#include "stats/integerstats.h"

#include <cstdint>

namespace ckptscope {

// Two integer (or BOOL) tensors compared exactly: each difference b − a is
// taken in 128-bit integers, so values that differ by one are told apart at
// any magnitude (through f32, I32 values above 2^24 compared equal; through
// double, I64 above 2^53). An element differs when b − a ≠ 0 with zero
// tolerances, else when the double of |b − a| passes atol + rtol |a|. The
// figures are doubles of the exact differences and values; the histogram
// bins the doubles of b − a. One thread, a second pass only for the
// histogram.
ElementDiff compareIntegers(Dtype dtypeA, Dtype dtypeB, uint64_t count,
                            const stats::RawReader& readA, const stats::RawReader& readB,
                            const DiffOptions& options);

} // namespace ckptscope
