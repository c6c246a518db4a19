#pragma once

#include "stats/bincounter.h"

#include <cstdint>

// Pass 2 of a Q4_K tensor's statistics (codesums.h): its histogram counted
// from the codes, without decoding a value. Per sub-block the bins of its
// sixteen levels are found once; up to 64 bins each code takes its level's
// bin into SlicedBins (AVX-512: one-hot words by a permutation; AVX2: bins by
// a vpshufb of a byte table), beyond that each sub-block's count of each
// code is added to its level's bin. The bins are binOf's of the values the
// decoder computes, bit for bit.
namespace ckptscope::stats {

// Whether binQ4K counts for `counter`: a counter in Sliced mode (AVX-512,
// or AVX2 with F16C: its level bins as a byte table applied by vpshufb) or
// in Lanes mode with values in range (AVX-512, or AVX2 with F16C: each
// sub-block's count of each code). Else pass 2 decodes the values.
bool canBinQ4K(const BinCounter<float>& counter);
// Bins the values of `superBlocks` Q4_K super-blocks at `raw` into counter,
// which canBinQ4K accepts.
void binQ4K(BinCounter<float>& counter, const uint8_t* raw, uint64_t superBlocks);

} // namespace ckptscope::stats
