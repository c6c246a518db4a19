#pragma once

#include "common/simd.h"
#include "formats/gguf/ggmlblocks.h"

#include <cstdint>

// A Q4_K super-block as both passes of its statistics read it (codesums.cpp,
// q4kbinner.cpp), as ggml-common.h's block_q4_K: f16 d, f16 dmin, 12 bytes
// of 6-bit scales and mins, 128 bytes of codes; eight sub-blocks of 32
// values, codes of sub-blocks 2k and 2k + 1 in the low and high nibbles of
// bytes 32k..32k+31.
namespace ckptscope::stats::q4k {

constexpr uint64_t kSuperBytes = 144, kSuperValues = 256;

// The value of code q as the decoder computes it (the files that include
// this, as the decoders, are compiled with -ffp-contract=off: no FMA).
inline float level(float d1, float m1, int q) {
    return d1 * float(q) - m1;
}

// The 6-bit scales and mins of the eight sub-blocks as bytes (the
// scaleMinK4 layout, four bytes at a time).
struct ScalesMins {
    uint64_t scales, mins;
};
inline ScalesMins scalesMinsK4(const uint8_t* q) {
    const uint32_t w0 = gguf::blocks::u32At(q), w1 = gguf::blocks::u32At(q + 4),
                   w2 = gguf::blocks::u32At(q + 8);
    const uint32_t scHigh = (w2 & 0x0f0f0f0fu) | ((w0 >> 2) & 0x30303030u);
    const uint32_t minHigh = ((w2 >> 4) & 0x0f0f0f0fu) | ((w1 >> 2) & 0x30303030u);
    return {(w0 & 0x3f3f3f3fu) | uint64_t(scHigh) << 32, (w1 & 0x3f3f3f3fu) | uint64_t(minHigh)
                                                                                  << 32};
}

// True when d or dmin is infinite or NaN.
inline bool specialScales(const uint8_t* b) {
    return (gguf::blocks::u16At(b) & 0x7C00) == 0x7C00 ||
           (gguf::blocks::u16At(b + 2) & 0x7C00) == 0x7C00;
}

#ifdef CKPTSCOPE_STATS_AVX2
// scalesOf (below) with AVX2 and F16C.
__attribute__((target("avx2,fma,f16c"), always_inline)) inline void
scalesOfAvx2(const uint8_t* b, __m256& d1, __m256& m1) {
    const __m128 both = _mm_cvtph_ps(_mm_cvtsi32_si128(int(gguf::blocks::u32At(b))));
    const ScalesMins sm = scalesMinsK4(b + 4);
    d1 = _mm256_mul_ps(_mm256_broadcastss_ps(both),
                       _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
                           _mm_cvtsi64_si128(static_cast<long long>(sm.scales)))));
    m1 = _mm256_mul_ps(_mm256_broadcastss_ps(_mm_movehdup_ps(both)),
                       _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
                           _mm_cvtsi64_si128(static_cast<long long>(sm.mins)))));
}

CKPTSCOPE_AVX512_BEGIN
// d1 = d * scale and m1 = dmin * min of the eight sub-blocks, as the decoder
// computes them (f16 to f32 by the CPU: exact, and no call in a vector loop).
CKPTSCOPE_AVX512 inline void scalesOf(const uint8_t* b, __m256& d1, __m256& m1) {
    const __m512 both = _mm512_cvtph_ps(
        _mm256_castsi128_si256(_mm_cvtsi32_si128(static_cast<int>(gguf::blocks::u32At(b)))));
    const __m256 d = _mm512_castps512_ps256(_mm512_permutexvar_ps(_mm512_setzero_si512(), both));
    const __m256 dmin = _mm512_castps512_ps256(_mm512_permutexvar_ps(_mm512_set1_epi32(1), both));
    const ScalesMins sm = scalesMinsK4(b + 4);
    d1 = _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
                              _mm_cvtsi64_si128(static_cast<long long>(sm.scales)))));
    m1 = _mm256_mul_ps(dmin, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
                                 _mm_cvtsi64_si128(static_cast<long long>(sm.mins)))));
}
CKPTSCOPE_AVX512_END
#endif

} // namespace ckptscope::stats::q4k
