#pragma once

#include "common/simd.h"

#include <cstdint>

// Histogram counting of up to 128 bins (96 with AVX2) without a memory
// increment per value (AVX-512, or AVX2, chosen at run time). Each value
// becomes a one-hot word (bit k: bin k; 32 bins a word, so 64 bins take two
// "streams", 128 four), a vector
// of them at a time (sixteen with AVX-512, eight with AVX2). Carry-save
// adders (Harley–Seal) add sixteen such vectors into one of weight 16,
// sixteen of those into one of weight 256, and only that is turned into
// counts. Per vector that is about a dozen instructions, where
// incrementing counters takes a dependent load-add-store per value; binning
// stopped being the largest part of `stats` and `diff`
// (docs/PERFORMANCE.md). No packaged library counts histograms this way.
#ifdef CKPTSCOPE_STATS_AVX2

namespace ckptscope::stats {

struct SlicedBins {
    // Up to 128 bins (four streams) with AVX-512, 96 with AVX2: its sixteen
    // registers hold three streams' carry-save state; with four, spilled,
    // it counted no faster than tables of counters (0.47 ns a value).
    static constexpr unsigned kMaxBins = 128, kMaxNarrowBins = 96;
    static constexpr unsigned maxBins(bool wide) { return wide ? kMaxBins : kMaxNarrowBins; }

    // `wide`: counted by AVX-512, sixteen lanes a vector; else by AVX2, eight
    // lanes, in the first half of each state vector below (the rest stays 0).
    SlicedBins(unsigned bins, bool wide);

    unsigned bins;
    unsigned streams; // 32 bins each
    bool wide;
    unsigned held = 0; // weight-16 vectors in `sixteens`
    // Carry-save state, per stream: ones, twos, fours, eights (of 1 and of 16).
    alignas(64) uint32_t level1[4][4][16] = {};
    alignas(64) uint32_t level2[4][4][16] = {};
    alignas(64) uint32_t sixteens[4][16][16] = {};
    uint64_t counts[kMaxBins] = {}; // counted so far, carry-save state excluded

    // Adds everything counted, the carry-save state included, to out[0..bins)
    // and starts again from zero.
    void drainInto(uint64_t* out);
};

// Adds weight × (lanes with bit b set) to counts[b], for the 32 bits, over
// the sixteen lanes of `vector` (a drain: rare).
void addBits(const uint32_t* vector, uint64_t weight, uint64_t* counts);

// The counting, once per instruction set: slicedcounting.inc compiled with
// each one's vector type and primitives (the same source, so the same
// counts; a template cannot carry the target attribute per instantiation).

// AVX-512: sixteen lanes, ternary logic.
namespace sliced512 {
#define CKPTSCOPE_SLICED_TARGET CKPTSCOPE_AVX512
#define CKPTSCOPE_SLICED_INLINE CKPTSCOPE_SLICED_TARGET __attribute__((always_inline)) inline
using Vec = __m512i;
constexpr unsigned kLanes = 16;
CKPTSCOPE_SLICED_INLINE Vec splat(int x) {
    return _mm512_set1_epi32(x);
}
// a << count per lane; a count past 31 (a negative one too) gives 0.
CKPTSCOPE_SLICED_INLINE Vec shiftLeft(Vec a, Vec count) {
    return _mm512_sllv_epi32(a, count);
}
CKPTSCOPE_SLICED_INLINE Vec minus(Vec a, Vec b) {
    return _mm512_sub_epi32(a, b);
}
CKPTSCOPE_SLICED_INLINE Vec loadState(const uint32_t* p) {
    return _mm512_load_si512(p);
}
CKPTSCOPE_SLICED_INLINE void storeState(uint32_t* p, Vec x) {
    _mm512_store_si512(p, x);
}
// a + b + c per bit: `low` the sum bit, `high` the carry.
CKPTSCOPE_SLICED_INLINE void carrySave(Vec& high, Vec& low, Vec a, Vec b, Vec c) {
    low = _mm512_ternarylogic_epi32(a, b, c, 0x96);
    high = _mm512_ternarylogic_epi32(a, b, c, 0xe8);
}
// Adds weight × (lanes with bit b set) to counts[b], for the 32 bits (a
// fold's carry: branch-free, where addBits' loop mispredicts).
CKPTSCOPE_SLICED_INLINE void addLaneBits(Vec x, uint64_t weight, uint64_t* counts) {
    for (unsigned b = 0; b < 32; ++b)
        counts[b] += weight * uint64_t(__builtin_popcount(
                                  _mm512_test_epi32_mask(x, _mm512_set1_epi32(int(1u << b)))));
}
#include "stats/slicedcounting.inc"
#undef CKPTSCOPE_SLICED_INLINE
#undef CKPTSCOPE_SLICED_TARGET
} // namespace sliced512

// AVX2: eight lanes, the carry-save adder in five logic instructions.
namespace sliced256 {
#define CKPTSCOPE_SLICED_TARGET __attribute__((target("avx2,fma")))
#define CKPTSCOPE_SLICED_INLINE CKPTSCOPE_SLICED_TARGET __attribute__((always_inline)) inline
using Vec = __m256i;
constexpr unsigned kLanes = 8;
CKPTSCOPE_SLICED_INLINE Vec splat(int x) {
    return _mm256_set1_epi32(x);
}
CKPTSCOPE_SLICED_INLINE Vec shiftLeft(Vec a, Vec count) {
    return _mm256_sllv_epi32(a, count);
}
CKPTSCOPE_SLICED_INLINE Vec minus(Vec a, Vec b) {
    return _mm256_sub_epi32(a, b);
}
CKPTSCOPE_SLICED_INLINE Vec loadState(const uint32_t* p) {
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
}
CKPTSCOPE_SLICED_INLINE void storeState(uint32_t* p, Vec x) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(p), x);
}
CKPTSCOPE_SLICED_INLINE void carrySave(Vec& high, Vec& low, Vec a, Vec b, Vec c) {
    const Vec ab = _mm256_xor_si256(a, b);
    low = _mm256_xor_si256(ab, c);
    high = _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(ab, c));
}
CKPTSCOPE_SLICED_INLINE void addLaneBits(Vec x, uint64_t weight, uint64_t* counts) {
    for (unsigned b = 0; b < 32; ++b) // bit b to each lane's sign
        counts[b] +=
            weight * uint64_t(__builtin_popcount(unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(
                         _mm256_sll_epi32(x, _mm_cvtsi32_si128(31 - int(b))))))));
}
#include "stats/slicedcounting.inc"
#undef CKPTSCOPE_SLICED_INLINE
#undef CKPTSCOPE_SLICED_TARGET
} // namespace sliced256

} // namespace ckptscope::stats

#endif // CKPTSCOPE_STATS_AVX2
