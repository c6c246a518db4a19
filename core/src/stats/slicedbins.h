#pragma once

#include "common/simd.h"

#include <cstdint>

// Histogram counting of up to 64 bins without a memory increment per value
// (AVX-512, chosen at run time). Each value becomes a one-hot word (bit k:
// bin k; 32 bins a word, so 64 bins take two "streams"), sixteen words a
// vector. Carry-save adders (Harley–Seal) add sixteen such vectors into one
// of weight 16, sixteen of those into one of weight 256, and only that is
// turned into counts. Per 16 values that is about a dozen vector
// instructions, where incrementing counters takes 16 dependent
// load-add-stores; binning stopped being the largest part of `stats` and
// `diff` (docs/PERFORMANCE.md). No packaged library counts histograms this
// way.
#ifdef CKPTSCOPE_STATS_AVX2

namespace ckptscope::stats {

struct SlicedBins {
    static constexpr unsigned kMaxBins = 64;

    explicit SlicedBins(unsigned bins);

    unsigned bins;
    unsigned streams;  // 32 bins each
    unsigned held = 0; // weight-16 vectors in `sixteens`
    // Carry-save state, per stream: ones, twos, fours, eights (of 1 and of 16).
    alignas(64) uint32_t level1[2][4][16] = {};
    alignas(64) uint32_t level2[2][4][16] = {};
    alignas(64) uint32_t sixteens[2][16][16] = {};
    uint64_t counts[kMaxBins] = {}; // counted so far, carry-save state excluded

    // Folds the sixteen held weight-16 vectors into level 2 and its weight-256
    // carry into `counts`.
    void foldSixteens();
    // Adds everything counted, the carry-save state included, to out[0..bins)
    // and starts again from zero.
    void drainInto(uint64_t* out);
};

// a + b + c per bit: `low` the sum bit, `high` the carry.
CKPTSCOPE_AVX512 __attribute__((always_inline)) inline void
carrySave(__m512i& high, __m512i& low, __m512i a, __m512i b, __m512i c) {
    low = _mm512_ternarylogic_epi32(a, b, c, 0x96);
    high = _mm512_ternarylogic_epi32(a, b, c, 0xe8);
}

// Bin indices of sixteen values and the lanes to count (clear: the lane is
// past the end, or its value was counted another way).
struct SixteenBins {
    __m512i bin;
    __mmask16 take;
};

#define CKPTSCOPE_SLICED_INLINE CKPTSCOPE_AVX512 __attribute__((always_inline)) inline

// Two vectors of values from next() into `ones`, their carry into `carry`.
template <unsigned Streams, class Next>
CKPTSCOPE_SLICED_INLINE void countTwo(__m512i* ones, __m512i* carry, Next& next) {
    const __m512i one = _mm512_set1_epi32(1), width = _mm512_set1_epi32(32);
    const SixteenBins x = next(), y = next();
    __m512i bx = x.bin, by = y.bin;
    for (unsigned g = 0; g < Streams; ++g) {
        carrySave(carry[g], ones[g], ones[g], _mm512_maskz_sllv_epi32(x.take, one, bx),
                  _mm512_maskz_sllv_epi32(y.take, one, by));
        bx = _mm512_sub_epi32(bx, width); // bins of the next stream; below 0: shifted out
        by = _mm512_sub_epi32(by, width);
    }
}

// Four vectors: the carries of two pairs into `twos`, its carry into `carry`.
template <unsigned Streams, class Next>
CKPTSCOPE_SLICED_INLINE void countFour(__m512i* ones, __m512i* twos, __m512i* carry, Next& next) {
    __m512i a[Streams], b[Streams];
    countTwo<Streams>(ones, a, next);
    countTwo<Streams>(ones, b, next);
    for (unsigned g = 0; g < Streams; ++g)
        carrySave(carry[g], twos[g], twos[g], a[g], b[g]);
}

// Eight vectors, up to the carry of `fours`.
template <unsigned Streams, class Next>
CKPTSCOPE_SLICED_INLINE void countEight(__m512i* ones, __m512i* twos, __m512i* fours,
                                        __m512i* carry, Next& next) {
    __m512i a[Streams], b[Streams];
    countFour<Streams>(ones, twos, a, next);
    countFour<Streams>(ones, twos, b, next);
    for (unsigned g = 0; g < Streams; ++g)
        carrySave(carry[g], fours[g], fours[g], a[g], b[g]);
}

// Stream g's carry-save state (ones, twos, fours, eights) into registers,
// and back.
CKPTSCOPE_SLICED_INLINE void loadCarries(const SlicedBins& c, unsigned g, __m512i& ones,
                                         __m512i& twos, __m512i& fours, __m512i& eights) {
    ones = _mm512_load_si512(c.level1[g][0]);
    twos = _mm512_load_si512(c.level1[g][1]);
    fours = _mm512_load_si512(c.level1[g][2]);
    eights = _mm512_load_si512(c.level1[g][3]);
}
CKPTSCOPE_SLICED_INLINE void storeCarries(SlicedBins& c, unsigned g, __m512i ones, __m512i twos,
                                          __m512i fours, __m512i eights) {
    _mm512_store_si512(c.level1[g][0], ones);
    _mm512_store_si512(c.level1[g][1], twos);
    _mm512_store_si512(c.level1[g][2], fours);
    _mm512_store_si512(c.level1[g][3], eights);
}

// Counts `batches` × 256 values; next() gives the bins of the next sixteen.
template <unsigned Streams, class Next>
CKPTSCOPE_SLICED_INLINE void countBatches(SlicedBins& c, uint64_t batches, Next& next) {
    __m512i ones[Streams], twos[Streams], fours[Streams], eights[Streams];
    for (unsigned g = 0; g < Streams; ++g)
        loadCarries(c, g, ones[g], twos[g], fours[g], eights[g]);
    for (uint64_t t = 0; t < batches; ++t) {
        __m512i a[Streams], b[Streams];
        countEight<Streams>(ones, twos, fours, a, next);
        countEight<Streams>(ones, twos, fours, b, next);
        for (unsigned g = 0; g < Streams; ++g) {
            __m512i sixteen;
            carrySave(sixteen, eights[g], eights[g], a[g], b[g]);
            _mm512_store_si512(c.sixteens[g][c.held], sixteen);
        }
        if (++c.held == 16)
            c.foldSixteens();
    }
    for (unsigned g = 0; g < Streams; ++g)
        storeCarries(c, g, ones[g], twos[g], fours[g], eights[g]);
}

// Counts n values: whole batches of 256 from full(), then the rest from
// tail(), which starts at value n - n % 256 and clears `take` past the end.
// Vectors beyond the last count nothing.
template <class Full, class Tail> struct PaddedBins {
    Tail& tail;
    uint64_t left; // vectors tail() still has
    CKPTSCOPE_SLICED_INLINE SixteenBins operator()() {
        if (left == 0)
            return SixteenBins{_mm512_setzero_si512(), 0};
        --left;
        return tail();
    }
};

template <class Full, class Tail>
CKPTSCOPE_SLICED_INLINE void countValues(SlicedBins& c, uint64_t n, Full& full, Tail& tail) {
    PaddedBins<Full, Tail> padded{tail, (n % 256 + 15) / 16};
    if (c.streams == 1) {
        countBatches<1>(c, n / 256, full);
        countBatches<1>(c, padded.left ? 1 : 0, padded);
    } else {
        countBatches<2>(c, n / 256, full);
        countBatches<2>(c, padded.left ? 1 : 0, padded);
    }
}

} // namespace ckptscope::stats

#endif // CKPTSCOPE_STATS_AVX2
