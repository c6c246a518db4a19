#pragma once

#include "stats/bincounter.h"

#include <cstdint>

// Pass 2 of a Q4_K tensor's statistics (codesums.h): its histogram counted
// from the codes, without decoding a value. Per sub-block the bins of its
// sixteen levels become one-hot words, and each code takes its level's word
// by a permutation into SlicedBins; the bins are binOf's of the values the
// decoder computes, bit for bit.
namespace ckptscope::stats {

// Bins the values of `superBlocks` Q4_K super-blocks at `raw` into counter
// when its mode is Sliced (AVX-512, at most 64 bins); else false, nothing
// counted.
bool binQ4K(BinCounter<float>& counter, const uint8_t* raw, uint64_t superBlocks);

} // namespace ckptscope::stats
