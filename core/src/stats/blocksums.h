#pragma once

#include "ckptscope/formats/dtype.h"

#include "stats/statskernels.h"

#include <cstdint>

// Pass 1 of Q8_0, Q4_0, Q6_K, Q3_K and Q2_K statistics from sums of their codes,
// no value decoded. A block's values are d · q for one scale d and integer
// codes q (Q8_0: int8 under an f16 d, 32 a block; Q4_0: nibble − 8 under an
// f16 d; Q6_K and Q3_K: a 6-bit code − 32 or a 3-bit one − 4 under f16 d
// times a signed scale, 16 a sub-block), each exact in f32 (the scale
// carries at most 18 significant bits, q at most 7), so the block's sum and
// M2 follow from Σq and Σq² (exactly in double for Q8_0 and Q4_0), its
// zeros from the codes that are 0, and its extremes from its least and
// greatest code, looked for only when d times the codes' whole range passes
// the extremes found so far. A block whose d is Inf or NaN (every value
// non-finite) is decoded and scanned. Q2_K (codes 0..3 times d · scale,
// less dmin · min) has sums of its own (lowbitsums.h). Pass 2, the
// histogram, decodes: each value needs its bin.
namespace ckptscope::stats {

// True for the types whose pass 1 sums block codes on this CPU (Q8_0, Q4_0,
// Q6_K, Q3_K and Q2_K, with AVX2 and F16C; the plain loops measured no
// faster than decoding). Q3_K's and Q2_K's sums with AVX2 are
// lowbitsums.h's, over whole super-blocks.
bool sumsBlockCodes(Dtype dtype);

// One block of such a type: its bytes and values.
struct CodeBlock {
    uint64_t bytes, values;
};
// Precondition: Q8_0, Q4_0, Q6_K, Q3_K or Q2_K.
CodeBlock codeBlockOf(Dtype dtype);

// The first finite value of the block of ggml type `ggmlId` (of `values`
// values, at most 256) at `raw`, else 0: the shift of the code-sum passes'
// Partials, as scanBlock shifts by a block's first finite value.
double firstFiniteOfBlock(uint32_t ggmlId, const uint8_t* raw, uint64_t values);

// Adds the `values` values (at most 256) of the block of ggml type `ggmlId`
// at b to p, decoded and scanned with p's shift: the code sums' way out for
// a block whose scale is Inf or NaN, or whose levels are not exact (rare).
void addDecoded(Partial& p, const uint8_t* b, uint32_t ggmlId, uint64_t values, Kernel kernel);

// True when d1 * q - m1 is exact in f32 for every code q of 0..maxCode
// (then so is d1 * q): the test Q4_K's, Q5_K's and Q2_K's code sums make
// of a sub-block's levels before summing them.
bool exactLevels(float d1, float m1, int maxCode);

// The Partial of `blocks` whole blocks at `raw`, its sums shifted by the
// first finite value of the first block (0 if it has none). Kernel::Scalar:
// no vector code (Q2_K's blocks are then decoded).
Partial blockCodesPartial(Dtype dtype, const uint8_t* raw, uint64_t blocks,
                          Kernel kernel = Kernel::Auto);

} // namespace ckptscope::stats
