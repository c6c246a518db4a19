// addLowBitSuperBlocks (lowbitsums.h): Q3_K's and Q2_K's pass 1 by integer
// sums over whole super-blocks.
#include "stats/lowbitsums.h"

#include "common/simd.h"
#include "formats/gguf/ggmlblocks.h"
#include "stats/blocksums.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#ifdef CKPTSCOPE_STATS_AVX2
#include <immintrin.h>
#endif

namespace ckptscope::stats {

#ifdef CKPTSCOPE_STATS_AVX2
namespace {

#define LOWBIT_AVX2 __attribute__((target("avx2,fma,f16c")))
#define LOWBIT_INLINE LOWBIT_AVX2 __attribute__((always_inline)) inline

constexpr uint64_t kValues = 256; // per super-block, sixteen sub-blocks of 16

// Q3_K (block_q3_K): hmask[32], qs[64], 6-bit scales − 32 packed in 12
// bytes, f16 d at 108. Code u: two bits of qs, plus 4 where hmask's bit is
// set; value d · scale · (u − 4).
struct Q3 {
    static constexpr uint64_t kBytes = 110, kDAt = 108;
    static constexpr uint32_t kGgml = 11;
    static constexpr bool kMins = false;
    // (u − 4)² by u, a vpshufb table.
    static constexpr uint8_t kSquares[16] = {16, 9, 4, 1, 0, 1, 4, 9};
    // The 16 codes of sub-block j, unsigned (decodeQ3_K's order: sub-blocks
    // 2g and 2g + 1 take bit g of hmask and field g % 4 of qs' half g / 4).
    static LOWBIT_INLINE __m128i codes16(const uint8_t* b, int j) {
        const int group = j / 2, at = 16 * (j % 2);
        const __m128i qs =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 32 + 32 * (group / 4) + at));
        const __m128i hm = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + at));
        const __m128i low =
            _mm_and_si128(_mm_srl_epi16(qs, _mm_cvtsi32_si128(2 * (group % 4))), _mm_set1_epi8(3));
        const __m128i high =
            _mm_and_si128(_mm_srl_epi16(hm, _mm_cvtsi32_si128(group)), _mm_set1_epi8(1));
        return _mm_or_si128(low, _mm_slli_epi16(high, 2));
    }
    static float level(float d1, float, int u) { return d1 * float(u - 4); }
};

// Q2_K (block_q2_K): scales[16] (4-bit scale, 4-bit min above it), qs[64],
// f16 d at 80, f16 dmin at 82. Value d · scale · u − dmin · min.
struct Q2 {
    static constexpr uint64_t kBytes = 84, kDAt = 80;
    static constexpr uint32_t kGgml = 10;
    static constexpr bool kMins = true;
    static LOWBIT_INLINE __m128i codes16(const uint8_t* b, int j) {
        const __m128i qs =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 + 32 * (j / 8) + 16 * (j % 2)));
        return _mm_and_si128(_mm_srl_epi16(qs, _mm_cvtsi32_si128(2 * (j % 8 / 2))),
                             _mm_set1_epi8(3));
    }
    // As decodeQ2_K computes it: dl * q - ml.
    static float level(float d1, float m1, int u) { return d1 * float(u) - m1; }
};

// The sixteen signed scales of Q3_K (ggml's unpacking of the 12 bytes at
// `packed`: low nibbles from bytes 0-7, two high bits from bytes 8-11).
LOWBIT_INLINE __m128i q3Scales(const uint8_t* packed) {
    const __m128i nibble = _mm_set1_epi8(0x0F);
    const __m128i lo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(packed));
    const __m128i low =
        _mm_unpacklo_epi64(_mm_and_si128(lo, nibble), _mm_and_si128(_mm_srli_epi16(lo, 4), nibble));
    // Byte k: bits 2(k / 4) of byte 8 + k % 4.
    const __m128i hb = _mm_set1_epi32(int(gguf::blocks::u32At(packed + 8)));
    const __m128i high =
        _mm_and_si128(_mm_srlv_epi32(hb, _mm_setr_epi32(0, 2, 4, 6)), _mm_set1_epi8(3));
    return _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32));
}

// The super-block's integer sums while its codes are read: a1 Σ scale · u
// (Q3_K: int16, by pairs), a2 (int32) Σ scale² · square, ab (Q2_K, int32)
// Σ scale · min · u, zeros the codes equal to their sub-block's zero code
// (Q3_K: bytes; Q2_K: int32, code 0's only).
struct Acc {
    __m256i a1, a2, ab, zeros;
};

// What Q3_K's code loop takes of a super-block, the sixteen of each in
// both 128-bit lanes, to be spread by vpshufb over their sub-block's bytes:
// scales and each sub-block's zero code (−1: none; see q3ZeroCodes); and
// the squares table.
struct Spread {
    __m256i scales, zeroCodes, squares;
};

// Q3_K's vector g of half h: 32 codes, sub-block 8h + 2g in the low
// 128-bit lane, 8h + 2g + 1 in the high one: each code times its
// sub-block's scale (vpmaddubsw against the scales spread over the bytes),
// its square by table times the scale², the codes equal to the zero code.
template <int H, int G>
LOWBIT_INLINE void addQ3Vector(__m256i qs, __m256i hm, const Spread& in, Acc& acc) {
    const __m256i u = _mm256_or_si256(
        _mm256_and_si256(_mm256_srli_epi16(qs, 2 * G), _mm256_set1_epi8(3)),
        _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hm, 4 * H + G), _mm256_set1_epi8(1)),
                          2));
    const __m256i spread = _mm256_set_m128i(_mm_set1_epi8(char(8 * H + 2 * G + 1)),
                                            _mm_set1_epi8(char(8 * H + 2 * G)));
    const __m256i scale = _mm256_shuffle_epi8(in.scales, spread);
    const __m256i scale16 = _mm256_srai_epi16(scale, 8);               // both bytes hold the scale
    acc.a1 = _mm256_add_epi16(acc.a1, _mm256_maddubs_epi16(u, scale)); // scale · (u + u')
    acc.a2 = _mm256_add_epi32(
        acc.a2, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_shuffle_epi8(in.squares, u), scale),
                                  scale16));
    acc.zeros =
        _mm256_sub_epi8(acc.zeros, _mm256_cmpeq_epi8(u, _mm256_shuffle_epi8(in.zeroCodes, spread)));
}

template <int H> LOWBIT_INLINE void addQ3Half(const uint8_t* b, const Spread& in, Acc& acc) {
    const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32 + 32 * H));
    const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    addQ3Vector<H, 0>(qs, hm, in, acc);
    addQ3Vector<H, 1>(qs, hm, in, acc);
    addQ3Vector<H, 2>(qs, hm, in, acc);
    addQ3Vector<H, 3>(qs, hm, in, acc);
}

// Q2_K's code loop works per sub-block, not per byte: each of its 32-byte
// halves holds four codes a byte (field g: sub-block 8h + 2g, or + 1 in the
// high 128-bit lane), and the sums of the codes (vpsadbw) and of a table of
// them (u² for u > 0, 128 for u = 0: the squares and the zero codes in one
// sum) over each eight bytes, packed to 16-bit words, are multiplied by
// their sub-block's scale, scale², scale · min and zero-code flag in one
// vpmaddwd each. Half the work of the byte-by-byte loop above.
alignas(16) constexpr uint8_t kQ2Table[16] = {128, 1, 4, 9};

// vpshufb controls that put sub-block 8h + 2(w / 2) + L's byte (a table of
// 16, one per sub-block) in word w of 128-bit lane L, zero-extended.
struct WordSpread {
    alignas(32) uint8_t half[2][32];
};
constexpr WordSpread makeWordSpread() {
    WordSpread t{};
    for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 32; ++i)
            t.half[h][i] = i % 2 ? 0x80 : uint8_t(8 * h + 2 * (i % 16 / 4) + i / 16);
    return t;
}
constexpr WordSpread kWordSpread = makeWordSpread();

// Q2_K's per-sub-block bytes, in both 128-bit lanes: scales, mins, and 1
// where the sub-block's zero code is 0 (min · dmin == 0 != scale · d).
struct Q2Bytes {
    __m256i scales, mins, zeroAtCode0;
};

// The sums of table[u] over each eight bytes.
LOWBIT_INLINE __m256i tabledSums(__m256i table, __m256i u) {
    return _mm256_sad_epu8(_mm256_shuffle_epi8(table, u), _mm256_setzero_si256());
}

template <int H> LOWBIT_INLINE void addQ2Half(const uint8_t* b, const Q2Bytes& in, Acc& acc) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 + 32 * H));
    const __m256i three = _mm256_set1_epi8(3), zero = _mm256_setzero_si256();
    const __m256i table =
        _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(kQ2Table)));
    const __m256i u0 = _mm256_and_si256(v, three);
    const __m256i u1 = _mm256_and_si256(_mm256_srli_epi16(v, 2), three);
    const __m256i u2 = _mm256_and_si256(_mm256_srli_epi16(v, 4), three);
    const __m256i u3 = _mm256_and_si256(_mm256_srli_epi16(v, 6), three);
    // Word 2g + q of lane L: codes field g of bytes 8q..8q + 7 of lane L.
    const __m256i sums = _mm256_packus_epi32(
        _mm256_packus_epi32(_mm256_sad_epu8(u0, zero), _mm256_sad_epu8(u1, zero)),
        _mm256_packus_epi32(_mm256_sad_epu8(u2, zero), _mm256_sad_epu8(u3, zero)));
    const __m256i both =
        _mm256_packus_epi32(_mm256_packus_epi32(tabledSums(table, u0), tabledSums(table, u1)),
                            _mm256_packus_epi32(tabledSums(table, u2), tabledSums(table, u3)));
    const __m256i squares = _mm256_and_si256(both, _mm256_set1_epi16(127)); // at most 72
    const __m256i zerosAt0 = _mm256_srli_epi16(both, 7);
    const __m256i spread = _mm256_load_si256(reinterpret_cast<const __m256i*>(kWordSpread.half[H]));
    const __m256i scale = _mm256_shuffle_epi8(in.scales, spread);
    const __m256i min = _mm256_shuffle_epi8(in.mins, spread);
    acc.a1 = _mm256_add_epi32(acc.a1, _mm256_madd_epi16(sums, scale));
    acc.a2 = _mm256_add_epi32(acc.a2, _mm256_madd_epi16(squares, _mm256_mullo_epi16(scale, scale)));
    acc.ab = _mm256_add_epi32(acc.ab, _mm256_madd_epi16(sums, _mm256_mullo_epi16(scale, min)));
    acc.zeros = _mm256_add_epi32(
        acc.zeros, _mm256_madd_epi16(zerosAt0, _mm256_shuffle_epi8(in.zeroAtCode0, spread)));
}

// Each lane of x's eight int32 lanes (a, b, c, d) added: {Σa, Σb, Σc, Σd}.
LOWBIT_INLINE __m128i sumsOf4(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i t = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
    return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

// The sixteen d · scale (and dmin · min) as floats, sub-blocks 0-7 and 8-15.
LOWBIT_INLINE void spreadScales(__m128i s, float d, __m256& lo, __m256& hi) {
    const __m256 dd = _mm256_set1_ps(d);
    lo = _mm256_mul_ps(dd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(s)));
    hi = _mm256_mul_ps(dd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(s, 8))));
}

// The sixteen d1 and m1 into arrays, for the rare paths that take them one
// by one.
LOWBIT_INLINE void storeScales(float* d1, float* m1, __m256 d1lo, __m256 d1hi, __m256 m1lo,
                               __m256 m1hi) {
    _mm256_store_ps(d1, d1lo);
    _mm256_store_ps(d1 + 8, d1hi);
    _mm256_store_ps(m1, m1lo);
    _mm256_store_ps(m1 + 8, m1hi);
}

// One bit per sub-block (0-15) of lanes lo, hi.
LOWBIT_INLINE unsigned maskOf(__m256 lo, __m256 hi) {
    return unsigned(_mm256_movemask_ps(lo)) | unsigned(_mm256_movemask_ps(hi)) << 8;
}

// True when every level d · scale · u − dmin · min of a Q2_K super-block is
// exact in f32, from the exponent fields of its f16 d and dmin (`header`)
// alone: with e = max(field, 1), d is a multiple of 2^(e − 25) below
// 2^(e − 14), so d · scale · u (scale ≤ 15, u ≤ 3) lies below 2^(e_d − 8)
// and dmin · min below 2^(e_m − 10), and a level, a multiple of 2^(e − 25)
// for the lower e, below their sum (d and dmin may differ in sign): below
// the 2^(e − 1) of f32's 24 bits when e_d ≤ e + 6 and e_m ≤ e + 8 (each
// term then at most half of it; a gap one larger may still be exact, and
// is checked level by level). False for an infinite or NaN scale.
bool q2ExactByExponents(uint32_t header) {
    const int ed = int(header >> 10 & 0x1F), em = int(header >> 26 & 0x1F);
    const int d = std::max(ed, 1), m = std::max(em, 1);
    return ed != 0x1F && em != 0x1F && d - m <= 6 && m - d <= 8;
}

// The flagged sub-blocks' least and greatest values into p (rare once the
// extremes settle).
template <class T>
LOWBIT_AVX2 void lookUpExtremes(Partial& p, const uint8_t* b, const float* d1, const float* m1,
                                unsigned which) {
    for (; which; which &= which - 1) {
        const int j = std::countr_zero(which);
        alignas(16) uint8_t u[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(u), T::codes16(b, j));
        for (const uint8_t code : u) {
            const float x = T::level(d1[j], m1[j], code);
            p.min = std::min(p.min, x);
            p.max = std::max(p.max, x);
        }
    }
}

// Q3_K's zero code of each sub-block as sixteen bytes: 4, except under a
// zero scale (`flat`: all 16 values zero, counted apart), −1.
LOWBIT_INLINE __m128i q3ZeroCodes(__m256 d1lo, __m256 d1hi) {
    const __m256 zeroF = _mm256_setzero_ps();
    const __m256i four = _mm256_set1_epi32(4); // −1 | 4 == −1
    return simd::packBytes16(
        _mm256_or_si256(_mm256_castps_si256(_mm256_cmp_ps(d1lo, zeroF, _CMP_EQ_OQ)), four),
        _mm256_or_si256(_mm256_castps_si256(_mm256_cmp_ps(d1hi, zeroF, _CMP_EQ_OQ)), four));
}

// Q2_K's sub-blocks whose zero level m1 / d1 is a whole code r of 1..3
// with d1 · r == m1 (r from the reciprocal to 12 bits: a whole r ≤ 3
// rounds to itself), one bit each; their codes equal to r are zeros (rare:
// code 0's, where m1 == 0, are counted in the code loop).
LOWBIT_INLINE unsigned q2OtherZeroCodes(__m256 d1lo, __m256 d1hi, __m256 m1lo, __m256 m1hi) {
    const __m256 zeroF = _mm256_setzero_ps();
    unsigned which = 0;
    for (int h = 0; h < 2; ++h) {
        const __m256 dl = h ? d1hi : d1lo, ml = h ? m1hi : m1lo;
        const __m256 r = _mm256_round_ps(_mm256_mul_ps(ml, _mm256_rcp_ps(dl)),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256 is =
            _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(r, _mm256_set1_ps(1.0f), _CMP_GE_OQ),
                                        _mm256_cmp_ps(r, _mm256_set1_ps(3.0f), _CMP_LE_OQ)),
                          _mm256_and_ps(_mm256_cmp_ps(_mm256_mul_ps(dl, r), ml, _CMP_EQ_OQ),
                                        _mm256_cmp_ps(dl, zeroF, _CMP_NEQ_UQ)));
        which |= unsigned(_mm256_movemask_ps(is)) << (8 * h);
    }
    return which;
}

// How many codes of sub-block j are `code`.
template <class T> LOWBIT_INLINE uint64_t countCode(const uint8_t* b, int j, int code) {
    const __m128i same = _mm_cmpeq_epi8(T::codes16(b, j), _mm_set1_epi8(char(code)));
    return uint64_t(std::popcount(unsigned(_mm_movemask_epi8(same))));
}

// The double sums of addSuperBlocks, four super-blocks a lane.
struct Sums4 {
    __m256d sum, sumSq, sumShifted, sumSqShifted;
};

// Up to four super-blocks' integer sums (addSuperBlocks' `r`), d and dmin,
// waiting for their double sums to be taken four at a time.
struct Staged {
    alignas(16) int32_t rows[4][4];
    alignas(16) float d[4], dmin[4];
    int count = 0;
};

// Adds the staged super-blocks to the sums, each lane one super-block
// (n: 256 where a lane holds one, else 0 and its row zero), and empties
// the stage. Every bracket below is an exact integer in double (at most
// 2^31), each product by d², d · dmin or dmin² exact, so the sums are
// those of the decoded values up to the order and rounding of the adds.
template <class T> LOWBIT_INLINE void takeStaged(Staged& st, Sums4& acc, double shiftBy) {
    for (int j = st.count; j < 4; ++j) { // the end of the tensor only
        std::fill(st.rows[j], st.rows[j] + 4, 0);
        st.d[j] = st.dmin[j] = 0;
    }
    const auto row = [&st](int j) {
        return _mm_load_si128(reinterpret_cast<const __m128i*>(st.rows[j]));
    };
    const __m128i r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
    const __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpacklo_epi32(r2, r3);
    const __m128i t2 = _mm_unpackhi_epi32(r0, r1), t3 = _mm_unpackhi_epi32(r2, r3);
    const __m128i x = _mm_unpacklo_epi64(t0, t1), a2i = _mm_unpackhi_epi64(t0, t1);
    const __m128i z = _mm_unpacklo_epi64(t2, t3), w = _mm_unpackhi_epi64(t2, t3);
    const __m256d n =
        _mm256_and_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(_mm256_set1_epi64x(st.count),
                                                             _mm256_setr_epi64x(0, 1, 2, 3))),
                      _mm256_set1_pd(256.0));
    const __m256d dd = _mm256_cvtps_pd(_mm_load_ps(st.d)), d2 = _mm256_mul_pd(dd, dd);
    const __m256d a2 = _mm256_cvtepi32_pd(a2i), c256 = _mm256_set1_pd(256.0);
    __m256d s, sq, m2;
    if constexpr (T::kMins) {
        // a_i = scale · u, b_i = min: Σb = 16 Σmin, Σb² = 16 Σmin² (w:
        // Σmin² + 4096 Σmin).
        const __m256d a1 = _mm256_cvtepi32_pd(x), ab = _mm256_cvtepi32_pd(z);
        const __m256d b1 = _mm256_cvtepi32_pd(_mm_slli_epi32(_mm_srai_epi32(w, 12), 4));
        const __m256d b2 =
            _mm256_cvtepi32_pd(_mm_slli_epi32(_mm_and_si128(w, _mm_set1_epi32(4095)), 4));
        const __m256d dm = _mm256_cvtps_pd(_mm_load_ps(st.dmin));
        const __m256d cross = _mm256_mul_pd(_mm256_mul_pd(dd, dm), _mm256_set1_pd(2.0));
        const __m256d m2s = _mm256_mul_pd(dm, dm);
        s = _mm256_sub_pd(_mm256_mul_pd(dd, a1), _mm256_mul_pd(dm, b1));
        sq = _mm256_add_pd(_mm256_sub_pd(_mm256_mul_pd(d2, a2), _mm256_mul_pd(cross, ab)),
                           _mm256_mul_pd(m2s, b2));
        const __m256d va = _mm256_sub_pd(_mm256_mul_pd(c256, a2), _mm256_mul_pd(a1, a1));
        const __m256d vab = _mm256_sub_pd(_mm256_mul_pd(c256, ab), _mm256_mul_pd(a1, b1));
        const __m256d vb = _mm256_sub_pd(_mm256_mul_pd(c256, b2), _mm256_mul_pd(b1, b1));
        m2 = _mm256_max_pd(_mm256_setzero_pd(),
                           _mm256_mul_pd(_mm256_add_pd(_mm256_sub_pd(_mm256_mul_pd(d2, va),
                                                                     _mm256_mul_pd(cross, vab)),
                                                       _mm256_mul_pd(m2s, vb)),
                                         _mm256_set1_pd(1.0 / 256)));
    } else {
        // Σ scale · (u − 4) = Σ scale · u − 64 Σ scale.
        const __m256d a1 = _mm256_cvtepi32_pd(_mm_sub_epi32(x, _mm_slli_epi32(z, 6)));
        s = _mm256_mul_pd(dd, a1);
        sq = _mm256_mul_pd(d2, a2);
        m2 = _mm256_mul_pd(
            _mm256_mul_pd(d2, _mm256_sub_pd(_mm256_mul_pd(c256, a2), _mm256_mul_pd(a1, a1))),
            _mm256_set1_pd(1.0 / 256));
    }
    const __m256d centred =
        _mm256_sub_pd(_mm256_mul_pd(s, _mm256_set1_pd(1.0 / 256)), _mm256_set1_pd(shiftBy));
    const __m256d spread = _mm256_mul_pd(n, centred);
    acc.sum = _mm256_add_pd(acc.sum, s);
    acc.sumSq = _mm256_add_pd(acc.sumSq, sq);
    acc.sumShifted = _mm256_add_pd(acc.sumShifted, spread);
    acc.sumSqShifted =
        _mm256_add_pd(acc.sumSqShifted, _mm256_add_pd(m2, _mm256_mul_pd(spread, centred)));
    st.count = 0;
}

// The four lanes of x added in a fixed order.
LOWBIT_INLINE double laneSum(__m256d x) {
    alignas(32) double lane[4];
    _mm256_store_pd(lane, x);
    return (lane[0] + lane[1]) + (lane[2] + lane[3]);
}

template <class T>
LOWBIT_AVX2 void addSuperBlocks(Partial& p, const uint8_t* raw, uint64_t superBlocks,
                                Kernel kernel) {
    const __m256i zero = _mm256_setzero_si256(), ones = _mm256_set1_epi16(1);
    const __m256 zeroF = _mm256_setzero_ps();
    Sums4 sums4{_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    Staged stage;
    __m256i zeroCodesAcc = zero; // codes equal to their sub-block's zero code
    uint64_t values = 0, zeros = 0;
    __m256 vmin = _mm256_set1_ps(p.min), vmax = _mm256_set1_ps(p.max);
    Spread in; // Q3_K's
    in.squares = _mm256_broadcastsi128_si256(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(Q3::kSquares)));
    for (uint64_t k = 0; k < superBlocks; ++k) {
        const uint8_t* b = raw + k * T::kBytes;
        const uint32_t header =
            T::kMins ? gguf::blocks::u32At(b + T::kDAt) : gguf::blocks::u16At(b + T::kDAt);
        const __m128 both = _mm_cvtph_ps(_mm_cvtsi32_si128(int(header)));
        const float d = _mm_cvtss_f32(both), dmin = _mm_cvtss_f32(_mm_movehdup_ps(both));
        __m128i sc, mins = _mm_setzero_si128();
        if constexpr (T::kMins) {
            const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
            sc = _mm_and_si128(packed, _mm_set1_epi8(0x0F));
            mins = _mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F));
        } else {
            sc = q3Scales(b + 96);
        }
        alignas(32) float d1[16], m1[16]; // stored only for the rare paths
        __m256 d1lo, d1hi, m1lo = zeroF, m1hi = zeroF;
        spreadScales(sc, d, d1lo, d1hi);
        if constexpr (T::kMins)
            spreadScales(mins, dmin, m1lo, m1hi);
        bool exact = (header >> 10 & 0x1F) != 0x1F; // d finite
        if constexpr (T::kMins) {
            if (!q2ExactByExponents(header)) { // rare: each sub-block's levels checked
                storeScales(d1, m1, d1lo, d1hi, m1lo, m1hi);
                for (int j = 0; j < 16 && exact; ++j)
                    exact = exactLevels(d1[j], m1[j], 3);
            }
        }
        if (!exact) { // rare: decoded, and added with the same shift
            addDecoded(p, b, T::kGgml, kValues, kernel);
            vmin = _mm256_set1_ps(p.min);
            vmax = _mm256_set1_ps(p.max);
            continue;
        }

        // Sub-blocks all of whose values are zero: d1 == 0 (== m1).
        const unsigned flat =
            maskOf(_mm256_cmp_ps(d1lo, zeroF, _CMP_EQ_OQ), _mm256_cmp_ps(d1hi, zeroF, _CMP_EQ_OQ)) &
            maskOf(_mm256_cmp_ps(m1lo, zeroF, _CMP_EQ_OQ), _mm256_cmp_ps(m1hi, zeroF, _CMP_EQ_OQ));
        Acc acc{zero, zero, zero, zero};
        if constexpr (T::kMins) {
            // Code 0 is a zero where m1 == 0 != d1: min or dmin 0, scale and d not.
            const __m128i zero16 = _mm_setzero_si128();
            const __m128i noMin =
                _mm_or_si128(_mm_cmpeq_epi8(mins, zero16), _mm_set1_epi8(dmin == 0.0f ? -1 : 0));
            const __m128i noScale =
                _mm_or_si128(_mm_cmpeq_epi8(sc, zero16), _mm_set1_epi8(d == 0.0f ? -1 : 0));
            const Q2Bytes bytes{_mm256_broadcastsi128_si256(sc), _mm256_broadcastsi128_si256(mins),
                                _mm256_broadcastsi128_si256(_mm_and_si128(
                                    _mm_andnot_si128(noScale, noMin), _mm_set1_epi8(1)))};
            addQ2Half<0>(b, bytes, acc);
            addQ2Half<1>(b, bytes, acc);
            if (const unsigned other = q2OtherZeroCodes(d1lo, d1hi, m1lo, m1hi)) { // rare
                storeScales(d1, m1, d1lo, d1hi, m1lo, m1hi);
                for (unsigned m = other; m; m &= m - 1) {
                    const int j = std::countr_zero(m);
                    zeros += countCode<T>(b, j, int(m1[j] / d1[j])); // a whole code
                }
            }
        } else {
            in.scales = _mm256_broadcastsi128_si256(sc);
            in.zeroCodes = _mm256_broadcastsi128_si256(q3ZeroCodes(d1lo, d1hi));
            addQ3Half<0>(b, in, acc);
            addQ3Half<1>(b, in, acc);
        }
        // Each byte (Q3_K) or 32-bit lane (Q2_K: at most 32) of acc.zeros
        // below 256: byte sums add them into 64-bit lanes.
        zeroCodesAcc = _mm256_add_epi64(zeroCodesAcc, _mm256_sad_epu8(acc.zeros, zero));
        // Lanes: Σ scale · u, Σ scale² · square, then Q2_K's Σ scale · min ·
        // u and Σ min (min + 4096) (Σmin² below 4096), or Q3_K's Σ scale.
        const __m256i wide = _mm256_cvtepu8_epi16(mins);
        const __m128i r =
            sumsOf4(T::kMins ? acc.a1 : _mm256_madd_epi16(acc.a1, ones), acc.a2,
                    T::kMins ? acc.ab : _mm256_madd_epi16(_mm256_cvtepi8_epi16(sc), ones),
                    _mm256_madd_epi16(wide, _mm256_add_epi16(wide, _mm256_set1_epi16(4096))));
        _mm_store_si128(reinterpret_cast<__m128i*>(stage.rows[stage.count]), r);
        stage.d[stage.count] = d;
        stage.dmin[stage.count] = dmin;
        if (++stage.count == 4)
            takeStaged<T>(stage, sums4, p.shift);
        zeros += 16 * uint64_t(std::popcount(flat));
        values += kValues;

        // Extremes: each sub-block's levels lie between those of codes 0
        // and the greatest (Q3_K: −4 and 3 times d1).
        const __m256 low = T::kMins ? zeroF : _mm256_set1_ps(-4.0f);
        const __m256 top = _mm256_set1_ps(3.0f);
        const __m256 aLo = _mm256_sub_ps(_mm256_mul_ps(d1lo, low), m1lo);
        const __m256 zLo = _mm256_sub_ps(_mm256_mul_ps(d1lo, top), m1lo);
        const __m256 aHi = _mm256_sub_ps(_mm256_mul_ps(d1hi, low), m1hi);
        const __m256 zHi = _mm256_sub_ps(_mm256_mul_ps(d1hi, top), m1hi);
        const unsigned lower = maskOf(_mm256_cmp_ps(_mm256_min_ps(aLo, zLo), vmin, _CMP_LT_OQ),
                                      _mm256_cmp_ps(_mm256_min_ps(aHi, zHi), vmin, _CMP_LT_OQ));
        const unsigned higher = maskOf(_mm256_cmp_ps(_mm256_max_ps(aLo, zLo), vmax, _CMP_GT_OQ),
                                       _mm256_cmp_ps(_mm256_max_ps(aHi, zHi), vmax, _CMP_GT_OQ));
        if ((lower | higher) != 0) {
            storeScales(d1, m1, d1lo, d1hi, m1lo, m1hi);
            lookUpExtremes<T>(p, b, d1, m1, lower | higher);
            vmin = _mm256_set1_ps(p.min);
            vmax = _mm256_set1_ps(p.max);
        }
    }
    if (stage.count)
        takeStaged<T>(stage, sums4, p.shift);
    alignas(32) uint64_t zeroLanes[4];
    if constexpr (T::kMins) // 32-bit lanes, added in pairs
        zeroCodesAcc =
            _mm256_add_epi64(_mm256_and_si256(zeroCodesAcc, _mm256_set1_epi64x(0xFFFFFFFF)),
                             _mm256_srli_epi64(zeroCodesAcc, 32));
    _mm256_store_si256(reinterpret_cast<__m256i*>(zeroLanes), zeroCodesAcc);
    p.n += values;
    p.finite += values;
    p.zeros += zeros + zeroLanes[0] + zeroLanes[1] + zeroLanes[2] + zeroLanes[3];
    p.sum += laneSum(sums4.sum);
    p.sumSq += laneSum(sums4.sumSq);
    p.sumShifted += laneSum(sums4.sumShifted);
    p.sumSqShifted += laneSum(sums4.sumSqShifted);
}

} // namespace
#endif

void addLowBitSuperBlocks(Partial& p, Dtype dtype, const uint8_t* raw, uint64_t superBlocks,
                          Kernel kernel) {
#ifdef CKPTSCOPE_STATS_AVX2
    if (dtype == Dtype::Q3_K)
        return addSuperBlocks<Q3>(p, raw, superBlocks, kernel);
    if (dtype == Dtype::Q2_K)
        return addSuperBlocks<Q2>(p, raw, superBlocks, kernel);
#else
    (void)p, (void)raw, (void)superBlocks, (void)kernel;
#endif
    throw std::logic_error("addLowBitSuperBlocks: not Q3_K or Q2_K, or no AVX2");
}

} // namespace ckptscope::stats
