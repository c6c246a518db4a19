#include "stats/slicedbins.h"

#ifdef CKPTSCOPE_STATS_AVX2

#include <cstring>

namespace ckptscope::stats {

SlicedBins::SlicedBins(unsigned n) : bins(n), streams(n > 32 ? 2 : 1) {}

namespace {

// Adds weight × (lanes with bit b set) to counts[b], for the 32 bits.
CKPTSCOPE_AVX512 void addBits(const uint32_t* vector, uint64_t weight, uint64_t* counts) {
    const __m512i x = _mm512_load_si512(vector);
    for (unsigned b = 0; b < 32; ++b)
        counts[b] += weight * uint64_t(__builtin_popcount(
                                  _mm512_test_epi32_mask(x, _mm512_set1_epi32(int(1u << b)))));
}

} // namespace

CKPTSCOPE_AVX512 void SlicedBins::foldSixteens() {
    for (unsigned g = 0; g < streams; ++g) {
        __m512i ones = _mm512_load_si512(level2[g][0]), twos = _mm512_load_si512(level2[g][1]),
                fours = _mm512_load_si512(level2[g][2]), eights = _mm512_load_si512(level2[g][3]);
        __m512i in[16];
        for (unsigned k = 0; k < 16; ++k)
            in[k] = _mm512_load_si512(sixteens[g][k]);
        __m512i twosA, twosB, foursA, foursB, eightsA, eightsB, carry;
        carrySave(twosA, ones, ones, in[0], in[1]);
        carrySave(twosB, ones, ones, in[2], in[3]);
        carrySave(foursA, twos, twos, twosA, twosB);
        carrySave(twosA, ones, ones, in[4], in[5]);
        carrySave(twosB, ones, ones, in[6], in[7]);
        carrySave(foursB, twos, twos, twosA, twosB);
        carrySave(eightsA, fours, fours, foursA, foursB);
        carrySave(twosA, ones, ones, in[8], in[9]);
        carrySave(twosB, ones, ones, in[10], in[11]);
        carrySave(foursA, twos, twos, twosA, twosB);
        carrySave(twosA, ones, ones, in[12], in[13]);
        carrySave(twosB, ones, ones, in[14], in[15]);
        carrySave(foursB, twos, twos, twosA, twosB);
        carrySave(eightsB, fours, fours, foursA, foursB);
        carrySave(carry, eights, eights, eightsA, eightsB);
        _mm512_store_si512(level2[g][0], ones);
        _mm512_store_si512(level2[g][1], twos);
        _mm512_store_si512(level2[g][2], fours);
        _mm512_store_si512(level2[g][3], eights);
        alignas(64) uint32_t weight256[16];
        _mm512_store_si512(weight256, carry);
        addBits(weight256, 256, counts + 32 * g);
    }
    held = 0;
}

void SlicedBins::drainInto(uint64_t* out) {
    for (unsigned g = 0; g < streams; ++g) {
        uint64_t* const c = counts + 32 * g;
        for (unsigned k = 0; k < held; ++k)
            addBits(sixteens[g][k], 16, c);
        for (unsigned j = 0; j < 4; ++j) {
            addBits(level1[g][j], uint64_t(1) << j, c);
            addBits(level2[g][j], uint64_t(16) << j, c);
        }
    }
    held = 0;
    std::memset(level1, 0, sizeof level1);
    std::memset(level2, 0, sizeof level2);
    for (unsigned k = 0; k < bins; ++k) {
        out[k] += counts[k];
        counts[k] = 0;
    }
}

} // namespace ckptscope::stats

#endif // CKPTSCOPE_STATS_AVX2
