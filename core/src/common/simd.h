#pragma once

// CPU features chosen at run time and the AVX helpers shared by the value
// decoders (formats/), the statistics and the comparison.
#include <cstdint>
#include <cstring>

namespace ckptscope {
// The i-th T at v, which need not be aligned for T (values in a file's map).
template <typename T> inline T valueAt(const T* v, uint64_t i) {
    T f;
    std::memcpy(&f, reinterpret_cast<const unsigned char*>(v) + i * sizeof(T), sizeof(T));
    return f;
}
} // namespace ckptscope

namespace ckptscope::simd {
// AVX2 + FMA on this CPU, and not turned off by CKPTSCOPE_SIMD=0. The
// statistics and the comparison (elementdiff.cpp) both ask this. False where
// CKPTSCOPE_STATS_AVX2 is not defined, so callers need no guard of their own.
bool useAvx2();
// AVX-512 F, DQ, BW and VL on this CPU, and CKPTSCOPE_SIMD neither "0" nor
// "avx2" (tests and benchmarks force the narrower paths with it).
bool useAvx512();
// F16C besides useAvx2() (the F16 decoder and the block sums' scales).
bool useF16C();
} // namespace ckptscope::simd

// Whether the statistics and the comparison may use AVX2 (x86-64 with GCC or Clang: chosen at
// run time by useAvx2()).
#if defined(__x86_64__) && defined(__GNUC__)
#define CKPTSCOPE_STATS_AVX2 1

#include <immintrin.h>

#include <cstring>

namespace ckptscope::simd {
// Between these, GCC 12 does not warn of the operand its AVX-512 headers
// leave undefined on purpose in every unmasked intrinsic (`__Y = __Y`).
#if defined(__GNUC__) && !defined(__clang__)
#define CKPTSCOPE_AVX512_BEGIN                                                                     \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")           \
        _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define CKPTSCOPE_AVX512_END _Pragma("GCC diagnostic pop")
#else
#define CKPTSCOPE_AVX512_BEGIN
#define CKPTSCOPE_AVX512_END
#endif

// Functions that use AVX-512 (F, DQ, BW, VL) besides AVX2 + FMA.
#define CKPTSCOPE_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")))

// Lanes of an AVX-512 register, combined in a fixed order. (GCC 12's
// _mm512_reduce_* intrinsics draw -Wuninitialized from its own headers.)
template <typename T, typename V, typename Op> CKPTSCOPE_AVX512 inline T combineLanes(V x, Op op) {
    constexpr int n = int(sizeof(V) / sizeof(T));
    alignas(64) T lane[n];
    std::memcpy(lane, &x, sizeof x);
    for (int width = n / 2; width > 0; width /= 2)
        for (int k = 0; k < width; ++k)
            lane[k] = op(lane[k], lane[k + width]);
    return lane[0];
}

// Sixteen int32 lanes (lo: 0-7, hi: 8-15) as sixteen int8 bytes in that
// order, each saturated to −128..127.
__attribute__((target("avx2"), always_inline)) inline __m128i packBytes16(__m256i lo, __m256i hi) {
    const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(lo, hi), _mm256_setzero_si256());
    return _mm256_castsi256_si128(
        _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

// The sum of the four lanes.
__attribute__((target("avx2,fma"))) inline double hsum(__m256d x) {
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(x), _mm256_extractf128_pd(x, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}
} // namespace ckptscope::simd
#endif
