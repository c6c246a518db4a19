#pragma once

#include "ckptscope/formats/dtype.h"

#include "stats/statskernels.h"

#include <cstdint>

// Pass 1 of Q3_K and Q2_K statistics from integer sums over each whole
// super-block (AVX2 and F16C). Value i of a super-block is d · a_i − dmin ·
// b_i for integers a_i = scale_j · c_i (c_i its code, Q3_K's centred: u − 4)
// and b_i = min_j (Q2_K's; none for Q3_K), j its sub-block of 16, each value
// exact in f32 (Q3_K always; Q2_K when its levels are, checked). So the
// super-block's sum is d Σa − dmin Σb, its Σx² d² Σa² − 2 d dmin Σab + dmin²
// Σb², and its M2 the same with n Σa² − (Σa)² and the like, each an exact
// integer (Q3_K's M2 exact: no b, d² times its bracket within 53 bits). The integer sums
// come from the codes by vpmaddubsw against each byte's scale, so a
// super-block costs one update of the double sums where per-sub-block sums
// cost sixteen. Zeros and extremes as blocksums.h: the extremes looked up in
// the codes only for sub-blocks whose levels could pass those found so far.
namespace ckptscope::stats {

// Adds `superBlocks` whole super-blocks of Q3_K or Q2_K at `raw` to p, its
// shift already set. A super-block with a non-finite scale, or Q2_K levels
// that are not exact in f32, is decoded and scanned (addDecoded).
// Precondition: simd::useF16C().
void addLowBitSuperBlocks(Partial& p, Dtype dtype, const uint8_t* raw, uint64_t superBlocks,
                          Kernel kernel);

} // namespace ckptscope::stats
