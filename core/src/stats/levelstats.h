#pragma once

#include "ckptscope/formats/dtype.h"
#include "ckptscope/stats/tensorstats.h"

#include "stats/integerstats.h"
#include "stats/statskernels.h"

#include <cstdint>

// Statistics of block-quantized tensors by counting levels: a Q1_0 block's
// values are ±d, so a tensor is a tally of (level, how many) pairs and the
// moments, extremes and histogram are computed over those. The same results
// as decoding every value and scanning it (computeStats): counts, extremes
// and histogram bit for bit, sums up to their rounding order (closer to the
// exact sums: each level's product with its count is exact).
namespace ckptscope::stats {

// True for the types counted by levels (Q1_0).
bool countsLevels(Dtype dtype);

// Precondition: countsLevels(dtype), count a whole number of blocks; `read`
// (integerstats.h's RawReader) is asked for whole blocks.
// Kernel::Scalar: no vector code; otherwise AVX2 where the CPU has it. Throws
// Cancelled; reader exceptions propagate.
// A worker adds its tally to the tensor's before it holds kFoldBlocks
// blocks (its per-pattern counts are packed in one word); tests pass a
// smaller `foldBlocks`.
constexpr uint64_t kFoldBlocks = (uint64_t(1) << 24) - 1;
StatsResult levelStats(Dtype dtype, uint64_t count, const RawReader& read,
                       const StatsOptions& options, Kernel kernel = Kernel::Auto,
                       uint64_t foldBlocks = kFoldBlocks);

} // namespace ckptscope::stats
