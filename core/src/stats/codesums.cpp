// codeSumStats: a Q4_K or Q5_K tensor's statistics from its codes (see
// codesums.h): pass 1 from their sums, pass 2 (Q4_K, with AVX-512) from each
// code's bin; the two passes run by computeStats' machinery
// (tensorstats.cpp). Q8_0, Q4_0, Q6_K, Q3_K and Q2_K's pass 1 is blocksums.cpp's.
#include "stats/codesums.h"

#include "common/simd.h"
#include "formats/gguf/ggmlblocks.h"
#include "formats/gguf/ggmlquants.h"
#include "stats/bincounter.h"
#include "stats/blocksums.h"
#include "stats/q4kbinner.h"
#include "stats/q4ksuperblock.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace ckptscope::stats {

using namespace simd; // useAvx2, useAvx512 and the lane helpers

namespace {

using namespace q4k;

// Values a block of the passes: 576 KiB of Q4_K, read at once.
constexpr uint64_t kCodeBlock = 16 * kBlock;

// The least and greatest of a sub-block's 32 codes, and how many are
// `code`, for any codes type with at(l) and kMax.
template <class C> struct CodeScan {
    int least() const {
        int q = C::kMax;
        for (int l = 0; l < 32 && q > 0; ++l)
            q = std::min(q, self().at(l));
        return q;
    }
    int greatest() const {
        int q = 0;
        for (int l = 0; l < 32 && q < C::kMax; ++l)
            q = std::max(q, self().at(l));
        return q;
    }
    uint64_t countOf(int code) const {
        uint64_t n = 0;
        for (int l = 0; l < 32; ++l)
            n += self().at(l) == code;
        return n;
    }
    const C& self() const { return static_cast<const C&>(*this); }
};

// The codes of one Q4_K sub-block: 32 nibbles, low (shift 0) or high
// (shift 4).
struct Codes : CodeScan<Codes> {
    static constexpr int kMax = 15;
    Codes(const uint8_t* b, int s) : bytes(b), shift(s) {}
    const uint8_t* bytes;
    int shift;
    int at(int l) const { return (bytes[l] >> shift) & 0xF; }
};

// The codes of one Q5_K sub-block `is`: a nibble of ql (low for even
// sub-blocks, high for odd) and bit `is` of qh above it (dequantize_row_q5_K).
struct Codes5 : CodeScan<Codes5> {
    static constexpr int kMax = 31;
    Codes5(const uint8_t* low, const uint8_t* high, int sub) : ql(low), qh(high), is(sub) {}
    const uint8_t* ql;
    const uint8_t* qh;
    int is;
    int at(int l) const { return ((ql[l] >> (is % 2 * 4)) & 0xF) | ((qh[l] >> is) & 1) << 4; }
};

// Q4_K and Q5_K: the same scales (f16 d and dmin, then the 6-bit scales and
// mins at byte 4) and levels d1 · q − m1; other codes.
struct Q4KType {
    using C = Codes;
    static constexpr uint64_t kBytes = 144;
    static constexpr uint32_t kGgml = 12;
    static C codes(const uint8_t* b, int is) { return C{b + 16 + 32 * (is / 2), (is % 2) * 4}; }
};
struct Q5KType {
    using C = Codes5;
    static constexpr uint64_t kBytes = 176;
    static constexpr uint32_t kGgml = 13;
    static C codes(const uint8_t* b, int is) { return C{b + 48 + 32 * (is / 2), b + 16, is}; }
};

// Sums of the codes and of their squares of the eight sub-blocks.
struct CodeSums {
    uint32_t s[8], q[8];
};

#ifdef CKPTSCOPE_STATS_AVX2
// q² of the codes 0..15, a vpshufb table of both code-sum kernels.
alignas(16) constexpr uint8_t kSquares[16] = {0,  1,  4,   9,   16,  25,  36,  49,
                                              64, 81, 100, 121, 144, 169, 196, 225};

// The sums of one pair of sub-blocks (32 bytes: low and high nibbles) by
// byte sums (vpsadbw) of the codes and of their squares (a 16-entry table:
// 15² fits a byte), packed in 16-bit fields of each 64-bit lane (Σlo, Σhi,
// Σlo², Σhi²; at most 32 · 225 = 7200 once the lanes are added).
__attribute__((target("avx2"))) inline __m256i packedPairSums(const uint8_t* pair) {
    const __m256i nibble = _mm256_set1_epi8(0x0F), zero = _mm256_setzero_si256();
    const __m256i squares =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kSquares)));
    const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pair));
    const __m256i lo = _mm256_and_si256(raw, nibble);
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), nibble);
    __m256i packed = _mm256_sad_epu8(lo, zero);
    packed = _mm256_add_epi64(packed, _mm256_slli_epi64(_mm256_sad_epu8(hi, zero), 16));
    packed = _mm256_add_epi64(
        packed, _mm256_slli_epi64(_mm256_sad_epu8(_mm256_shuffle_epi8(squares, lo), zero), 32));
    return _mm256_add_epi64(
        packed, _mm256_slli_epi64(_mm256_sad_epu8(_mm256_shuffle_epi8(squares, hi), zero), 48));
}

// The sums of the codes and of their squares of Q4_K's eight sub-blocks
// (`qs`: its 128 bytes of codes) by packedPairSums.
__attribute__((target("avx2"))) void codeSumsAvx2(const uint8_t* qs, CodeSums& out) {
    for (int k = 0; k < 4; ++k) {
        const __m256i packed = packedPairSums(qs + 32 * k);
        __m128i x =
            _mm_add_epi64(_mm256_castsi256_si128(packed), _mm256_extracti128_si256(packed, 1));
        x = _mm_add_epi64(x, _mm_unpackhi_epi64(x, x));
        const uint64_t r = uint64_t(_mm_cvtsi128_si64(x));
        out.s[2 * k] = uint32_t(r & 0xFFFF);
        out.s[2 * k + 1] = uint32_t((r >> 16) & 0xFFFF);
        out.q[2 * k] = uint32_t((r >> 32) & 0xFFFF);
        out.q[2 * k + 1] = uint32_t(r >> 48);
    }
}
#endif

// The least and greatest value of a sub-block: levels rise with the code
// when d1 > 0, fall when d1 < 0, and are all one when d1 is zero.
template <class C> float leastLevel(float d1, float m1, const C& codes) {
    return level(d1, m1, d1 > 0 ? codes.least() : d1 < 0 ? codes.greatest() : 0);
}
template <class C> float greatestLevel(float d1, float m1, const C& codes) {
    return level(d1, m1, d1 > 0 ? codes.greatest() : d1 < 0 ? codes.least() : 0);
}

// How many values of a sub-block are zero (its levels exact: zero where
// d1 * q == m1).
template <class C> uint64_t zerosOf(float d1, float m1, const C& codes) {
    if (d1 == 0)
        return m1 == 0 ? 32 : 0;
    const double r = double(m1) / double(d1);
    if (r >= 0 && r <= C::kMax && r == std::floor(r) && level(d1, m1, int(r)) == 0)
        return codes.countOf(int(r));
    return 0;
}

// Adds sub-block (d1, m1, codes) to p (its shift set); precondition:
// exactLevels(d1, m1, C::kMax).
template <class C>
void addSubBlock(Partial& p, float d1, float m1, uint32_t s, uint32_t q, const C& codes) {
    const double d = d1, m = m1;
    const double sum = d * double(s) - 32.0 * m;
    const double centred = sum / 32.0 - p.shift; // the sub-block's mean, shifted
    // Each product exact in double (d1 and m1 carry at most 17 bits).
    const double m2 = d * d * double(32 * int64_t(q) - int64_t(s) * int64_t(s)) / 32.0;
    p.n += 32;
    p.finite += 32;
    p.sum += sum;
    p.sumShifted += 32.0 * centred;
    p.sumSqShifted += m2 + 32.0 * centred * centred;
    p.sumSq += d * d * double(q) - 2.0 * d * m * double(s) + 32.0 * m * m;

    // Levels rise with the code when d1 > 0, fall when d1 < 0; the extreme
    // codes are looked for only when a level could pass the extremes so far.
    const float at0 = level(d1, m1, 0), atMax = level(d1, m1, C::kMax);
    const float least = std::min(at0, atMax), most = std::max(at0, atMax);
    if (least < p.min)
        p.min = std::min(p.min, leastLevel(d1, m1, codes));
    if (most > p.max)
        p.max = std::max(p.max, greatestLevel(d1, m1, codes));
    if (least <= 0 && most >= 0)
        p.zeros += zerosOf(d1, m1, codes);
}

// Adds one super-block to p: from its code sums, or decoded and scanned.
template <class T> void addSuperBlock(Partial& p, const uint8_t* b, Kernel kernel) {
    const float d = gguf::blocks::f16At(b), dmin = gguf::blocks::f16At(b + 2);
    float d1[8], m1[8];
    bool exact = std::isfinite(d) && std::isfinite(dmin);
    for (int is = 0; is < 8 && exact; ++is) {
        int sc = 0, m = 0;
        gguf::blocks::scaleMinK4(is, b + 4, sc, m);
        d1[is] = d * float(sc);
        m1[is] = dmin * float(m);
        exact = exactLevels(d1[is], m1[is], T::C::kMax);
    }
    if (!exact) // rare: decoded, and added with the same shift
        return addDecoded(p, b, T::kGgml, kSuperValues, kernel);
    for (int is = 0; is < 8; ++is) {
        const typename T::C codes = T::codes(b, is);
        uint32_t sum = 0, squares = 0;
        for (int l = 0; l < 32; ++l) {
            const auto q = uint32_t(codes.at(l));
            sum += q;
            squares += q * q;
        }
        addSubBlock(p, d1[is], m1[is], sum, squares, codes);
    }
}

#ifdef CKPTSCOPE_STATS_AVX2
CKPTSCOPE_AVX512_BEGIN

// Per lane: x = m · 2^e with m odd, e (200 for zero); as lowBitExponent.
CKPTSCOPE_AVX512 __m256i lowBitExponents(__m256 x) {
    const __m256i bits = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff));
    const __m256i exponent = _mm256_srli_epi32(bits, 23);
    const __m256i mantissa = _mm256_and_si256(bits, _mm256_set1_epi32(0x7fffff));
    const __mmask8 normal = _mm256_cmpneq_epi32_mask(exponent, _mm256_setzero_si256());
    const __m256i significand =
        _mm256_mask_or_epi32(mantissa, normal, mantissa, _mm256_set1_epi32(0x800000));
    // The lowest set bit alone, a power of two below 2^24: exact as a float.
    const __m256i low =
        _mm256_and_si256(significand, _mm256_sub_epi32(_mm256_setzero_si256(), significand));
    const __m256i trailing =
        _mm256_sub_epi32(_mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(low)), 23),
                         _mm256_set1_epi32(127));
    const __m256i e =
        _mm256_sub_epi32(_mm256_max_epi32(exponent, _mm256_set1_epi32(1)), _mm256_set1_epi32(150));
    const __mmask8 zero = _mm256_cmpeq_epi32_mask(bits, _mm256_setzero_si256());
    return _mm256_mask_mov_epi32(_mm256_add_epi32(e, trailing), zero, _mm256_set1_epi32(200));
}

// True when every d1 * q - m1 of a super-block is exact in f32, from the
// exponent fields of its f16 d and dmin (`header`, little-endian) alone:
// with e = max(field, 1), d is a multiple of 2^(e - 25) below 2^(e - 14),
// so d1 = d × sc (sc < 64) a multiple of 2^(e_d - 25) below 2^(e_d - 8),
// and m1 likewise; each level is a multiple of 2^(min - 25) below
// 2^(e_d - 4) + 2^(e_m - 8), under the 2^(min - 1) of exactLevels when
// e_d ≤ min + 2 and e_m ≤ min + 6. False for an infinite or NaN scale.
// With codes up to 31 (Q5_K) the levels lie below 2^(e_d - 3) + 2^(e_m - 8):
// e_d ≤ min + 1.
template <int kMaxCode> inline bool exactByExponents(uint32_t header) {
    static_assert(kMaxCode == 15 || kMaxCode == 31);
    const int ed = int(header >> 10 & 0x1F), em = int(header >> 26 & 0x1F);
    const int d = std::max(ed, 1), m = std::max(em, 1);
    return ed != 0x1F && em != 0x1F && d - m <= (kMaxCode == 15 ? 2 : 1) && m - d <= 6;
}

// exactLevels in every lane (false for a non-finite scale: its span is not
// below any limit), for the super-blocks exactByExponents cannot vouch for.
CKPTSCOPE_AVX512 __attribute__((noinline)) bool exactLanes(__m256 d1, __m256 m1) {
    const __m256i g = _mm256_min_epi32(lowBitExponents(d1), lowBitExponents(m1));
    const __m512d limit = _mm512_castsi512_pd(_mm512_slli_epi64(
        _mm512_cvtepi32_epi64(_mm256_add_epi32(g, _mm256_set1_epi32(24 + 1023))), 52));
    const __m512d span = _mm512_fmadd_pd(_mm512_set1_pd(15.0), _mm512_abs_pd(_mm512_cvtps_pd(d1)),
                                         _mm512_abs_pd(_mm512_cvtps_pd(m1)));
    return _mm512_cmp_pd_mask(span, limit, _CMP_LT_OQ) == 0xFF;
}

// Look-ups of extreme codes for the sub-blocks whose bits are set (rare
// once the extremes settle), as addSubBlock does them.
template <class T>
void lookUp(const uint8_t* b, const float* d1, const float* m1, unsigned lower, unsigned higher,
            float* mins, float* maxs) {
    for (int is = 0; is < 8; ++is) {
        const typename T::C codes = T::codes(b, is);
        if (lower >> is & 1)
            mins[is] = std::min(mins[is], leastLevel(d1[is], m1[is], codes));
        if (higher >> is & 1)
            maxs[is] = std::max(maxs[is], greatestLevel(d1[is], m1[is], codes));
    }
}

// The sums of the codes and of their squares of the eight sub-blocks, in
// sub-block order, kept in registers (a store and a vector load of the sums
// would stall on store forwarding). Two pairs of sub-blocks a vector:
// packedPairSums twice as wide (its byte sums and fields), then each pair's four lanes added
// and the 16-bit fields put in sub-block order by one word permutation.
CKPTSCOPE_AVX512 inline void codeSumsAvx512(const uint8_t* qs, __m512d& s, __m512d& q) {
    const __m512i nibble = _mm512_set1_epi8(0x0F), zero = _mm512_setzero_si512();
    const __m512i squares =
        _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kSquares)));
    __m512i packed[2];
    for (int k = 0; k < 2; ++k) { // pairs 2k and 2k + 1
        const __m512i raw = _mm512_loadu_si512(qs + 64 * k);
        const __m512i lo = _mm512_and_si512(raw, nibble);
        const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), nibble);
        __m512i p = _mm512_sad_epu8(lo, zero);
        p = _mm512_add_epi64(p, _mm512_slli_epi64(_mm512_sad_epu8(hi, zero), 16));
        p = _mm512_add_epi64(
            p, _mm512_slli_epi64(_mm512_sad_epu8(_mm512_shuffle_epi8(squares, lo), zero), 32));
        packed[k] = _mm512_add_epi64(
            p, _mm512_slli_epi64(_mm512_sad_epu8(_mm512_shuffle_epi8(squares, hi), zero), 48));
    }
    // Per 128-bit lane L: [two lanes of pair L / 2 … of packed[0], … of
    // packed[1]] added, then lanes 0 + 1 and 2 + 3: qword 0 holds pair 0,
    // 1 pair 2, 4 pair 1, 5 pair 3, each (Σlo, Σhi, Σlo², Σhi²).
    const __m512i u = _mm512_add_epi64(_mm512_unpacklo_epi64(packed[0], packed[1]),
                                       _mm512_unpackhi_epi64(packed[0], packed[1]));
    const __m512i v = _mm512_add_epi64(u, _mm512_shuffle_i64x2(u, u, _MM_SHUFFLE(2, 3, 0, 1)));
    static constexpr uint16_t kOrder[32] = {0, 1, 16, 17, 4, 5, 20, 21, 2, 3, 18, 19, 6, 7, 22, 23};
    const __m512i sorted = _mm512_permutexvar_epi16(_mm512_loadu_si512(kOrder), v);
    s = _mm512_cvtepu32_pd(_mm256_cvtepu16_epi32(_mm512_castsi512_si128(sorted)));
    q = _mm512_cvtepu32_pd(_mm256_cvtepu16_epi32(_mm512_extracti32x4_epi32(sorted, 1)));
}

// The lanes of addSuperBlocksInLanes between runs of its runner.
struct LaneSums {
    double sum[8] = {}, sumSq[8] = {}, sumShifted[8] = {}, sumSqShifted[8] = {};
    float min[8], max[8];
    uint64_t values = 0, zeros = 0;
    LaneSums() {
        std::fill(min, min + 8, std::numeric_limits<float>::infinity());
        std::fill(max, max + 8, -std::numeric_limits<float>::infinity());
    }
};

// Q5_K's codes of sub-block `is` (ql: its 32 bytes for the pair, qh: the
// 32 bytes of fifth bits) as 32 bytes.
__attribute__((target("avx2"), always_inline)) inline __m256i codes5(const uint8_t* ql,
                                                                     const uint8_t* qh, int is) {
    const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
    const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
    const __m256i nibble =
        _mm256_and_si256(is % 2 ? _mm256_srli_epi16(low, 4) : low, _mm256_set1_epi8(0x0F));
    const __m256i bit =
        _mm256_and_si256(_mm256_srl_epi16(high, _mm_cvtsi32_si128(is)), _mm256_set1_epi8(1));
    return _mm256_or_si256(nibble, _mm256_slli_epi16(bit, 4));
}

// The 32 codes of sub-block `is` of the Q4_K or Q5_K super-block at b.
template <class T>
__attribute__((target("avx2"), always_inline)) inline __m256i codesVector(const uint8_t* b,
                                                                          int is) {
    if constexpr (std::is_same_v<T, Q5KType>) {
        return codes5(b + 48 + 32 * (is / 2), b + 16, is);
    } else {
        const __m256i raw =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 + 32 * (is / 2)));
        return _mm256_and_si256(is % 2 ? _mm256_srli_epi16(raw, 4) : raw, _mm256_set1_epi8(0x0F));
    }
}

// How many codes of the sub-blocks set in `which` equal that sub-block's
// lane of `code`.
template <class T>
__attribute__((target("avx2"))) inline uint64_t countCodes(const uint8_t* b, unsigned which,
                                                           __m256i code) {
    alignas(32) int32_t target[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(target), code);
    uint64_t n = 0;
    for (; which; which &= which - 1) {
        const int is = std::countr_zero(which);
        const __m256i same =
            _mm256_cmpeq_epi8(codesVector<T>(b, is), _mm256_set1_epi8(char(target[is])));
        n += uint64_t(std::popcount(unsigned(_mm256_movemask_epi8(same))));
    }
    return n;
}

// What stopped the inner loop at a super-block.
struct Stop {
    uint64_t at;         // the super-block; the end when none stopped it
    bool decode;         // a non-finite scale or a level not exact: not added
    unsigned lower = 0;  // added; sub-blocks whose extremes must be looked up …
    unsigned higher = 0; // …
    alignas(32) float d1[8] = {}, m1[8] = {};
};

// The Stop at super-block k, added, whose sub-blocks `lower` and `higher`
// need their extremes looked up (with their d1 and m1).
__attribute__((target("avx2"), always_inline)) inline Stop
lookUpAt(uint64_t k, unsigned lower, unsigned higher, __m256 d1, __m256 m1) {
    Stop stop{k, false, lower, higher};
    _mm256_store_ps(stop.d1, d1);
    _mm256_store_ps(stop.m1, m1);
    return stop;
}

// Super-blocks [from, to) into the lanes, in registers, until one needs
// scalar work (no call in the loop: every vector register would be saved
// around it). The sums of addSubBlock: the products exact, so only the
// order of the adds differs.
CKPTSCOPE_AVX512 Stop runAvx512(LaneSums& lanes, double shiftBy, const uint8_t* raw, uint64_t from,
                                uint64_t to) {
    __m512d sum = _mm512_loadu_pd(lanes.sum), sumSq = _mm512_loadu_pd(lanes.sumSq);
    __m512d sumShifted = _mm512_loadu_pd(lanes.sumShifted);
    __m512d sumSqShifted = _mm512_loadu_pd(lanes.sumSqShifted);
    const __m256 vmin = _mm256_loadu_ps(lanes.min), vmax = _mm256_loadu_ps(lanes.max);
    const __m512d thirtyTwo = _mm512_set1_pd(32.0), shift = _mm512_set1_pd(shiftBy);
    const __m256 zeroF = _mm256_setzero_ps();
    Stop stop{to, false};
    uint64_t k = from, zeroCount = 0;
    for (; k < to; ++k) {
        const uint8_t* b = raw + k * kSuperBytes;
        __m256 d1, m1;
        scalesOf(b, d1, m1);
        const __m512d D = _mm512_cvtps_pd(d1), M = _mm512_cvtps_pd(m1);
        if (!exactByExponents<15>(gguf::blocks::u32At(b)) && !exactLanes(d1, m1)) {
            stop = Stop{k, true};
            break;
        }
        __m512d S, Q;
        codeSumsAvx512(b + 16, S, Q);
        const __m512d a = _mm512_mul_pd(D, S), t = _mm512_mul_pd(_mm512_mul_pd(D, D), Q);
        const __m512d twoA = _mm512_add_pd(a, a);
        // Σx = d1 Σq - 32 m1; Σx² = d1² Σq² - 2 d1 m1 Σq + 32 m1²; the same
        // about the shift with m1 + shift for m1.
        sum = _mm512_add_pd(sum, _mm512_fnmadd_pd(thirtyTwo, M, a));
        sumSq = _mm512_add_pd(
            sumSq, _mm512_fmadd_pd(_mm512_mul_pd(thirtyTwo, M), M, _mm512_fnmadd_pd(twoA, M, t)));
        const __m512d shifted = _mm512_add_pd(M, shift);
        sumShifted = _mm512_add_pd(sumShifted, _mm512_fnmadd_pd(thirtyTwo, shifted, a));
        sumSqShifted =
            _mm512_add_pd(sumSqShifted, _mm512_fmadd_pd(_mm512_mul_pd(thirtyTwo, shifted), shifted,
                                                        _mm512_fnmadd_pd(twoA, shifted, t)));

        // Zero values: every one of a sub-block with d1 == 0 == m1; else
        // those of code m1 / d1 where that is a whole code with d1 * q == m1.
        const __mmask8 flat = _mm256_cmp_ps_mask(d1, zeroF, _CMP_EQ_OQ);
        zeroCount +=
            32 *
            uint64_t(std::popcount(unsigned(flat & _mm256_cmp_ps_mask(m1, zeroF, _CMP_EQ_OQ))));
        // r = m1 / d1 to 2^-14 (a whole r ≤ 15 rounds to itself), and a
        // zero level where d1 r == m1 (exact: d1 has at most 17 bits).
        const __m256 r = _mm256_roundscale_ps(_mm256_mul_ps(m1, _mm256_rcp14_ps(d1)),
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __mmask8 zeroCode = ~flat & _mm256_cmp_ps_mask(r, zeroF, _CMP_GE_OQ) &
                                  _mm256_cmp_ps_mask(r, _mm256_set1_ps(15.0f), _CMP_LE_OQ) &
                                  _mm256_cmp_ps_mask(_mm256_mul_ps(d1, r), m1, _CMP_EQ_OQ);
        if (zeroCode)
            zeroCount += countCodes<Q4KType>(b, zeroCode, _mm256_cvttps_epi32(r));

        const __m256 at0 = _mm256_sub_ps(_mm256_mul_ps(d1, zeroF), m1);
        const __m256 at15 = _mm256_sub_ps(_mm256_mul_ps(d1, _mm256_set1_ps(15.0f)), m1);
        const __m256 least = _mm256_min_ps(at0, at15), most = _mm256_max_ps(at0, at15);
        const __mmask8 lower = _mm256_cmp_ps_mask(least, vmin, _CMP_LT_OQ);
        const __mmask8 higher = _mm256_cmp_ps_mask(most, vmax, _CMP_GT_OQ);
        if ((lower | higher) != 0) {
            stop = lookUpAt(k++, lower, higher, d1, m1);
            break;
        }
    }
    lanes.values += (k - from) * kSuperValues;
    lanes.zeros += zeroCount;
    _mm512_storeu_pd(lanes.sum, sum);
    _mm512_storeu_pd(lanes.sumSq, sumSq);
    _mm512_storeu_pd(lanes.sumShifted, sumShifted);
    _mm512_storeu_pd(lanes.sumSqShifted, sumSqShifted);
    return stop;
}

// The four sums of eight lanes of a, b, c, d.
__attribute__((target("avx2"), always_inline)) inline __m128i sumsOf4(__m256i a, __m256i b,
                                                                      __m256i c, __m256i d) {
    const __m256i t = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
    return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

// Q5_K's code sums: each sub-block's 32 five-bit codes in a register, byte
// sums (vpsadbw) and squares (vpmaddubsw: 2 · 31² fits int16).
__attribute__((target("avx2"))) void codeSums5Avx2(const uint8_t* b, CodeSums& out) {
    const __m256i zero = _mm256_setzero_si256(), ones = _mm256_set1_epi16(1);
    __m256i sums[8], squares[8];
    for (int is = 0; is < 8; ++is) {
        const __m256i u = codes5(b + 48 + 32 * (is / 2), b + 16, is);
        sums[is] = _mm256_sad_epu8(u, zero);
        squares[is] = _mm256_madd_epi16(_mm256_maddubs_epi16(u, u), ones);
    }
    for (int h = 0; h < 2; ++h) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out.s + 4 * h),
                         sumsOf4(sums[4 * h], sums[4 * h + 1], sums[4 * h + 2], sums[4 * h + 3]));
        _mm_storeu_si128(
            reinterpret_cast<__m128i*>(out.q + 4 * h),
            sumsOf4(squares[4 * h], squares[4 * h + 1], squares[4 * h + 2], squares[4 * h + 3]));
    }
}

// runAvx512 with AVX2 (and F16C): the eight sub-blocks' sums in two
// vectors of four doubles, the code sums by packedPairSums, the exactness
// check of a super-block that exactByExponents cannot vouch for by
// exactLevels lane by lane. The same sums, in the same lanes. For Q4_K and
// Q5_K (T: their codes).
template <class T>
__attribute__((target("avx2,fma,f16c"))) Stop
runAvx2(LaneSums& lanes, double shiftBy, const uint8_t* raw, uint64_t from, uint64_t to) {
    constexpr int kMax = T::C::kMax;
    __m256d sum[2], sumSq[2], sumShifted[2], sumSqShifted[2];
    for (int h = 0; h < 2; ++h) {
        sum[h] = _mm256_loadu_pd(lanes.sum + 4 * h);
        sumSq[h] = _mm256_loadu_pd(lanes.sumSq + 4 * h);
        sumShifted[h] = _mm256_loadu_pd(lanes.sumShifted + 4 * h);
        sumSqShifted[h] = _mm256_loadu_pd(lanes.sumSqShifted + 4 * h);
    }
    const __m256 vmin = _mm256_loadu_ps(lanes.min), vmax = _mm256_loadu_ps(lanes.max);
    const __m256d thirtyTwo = _mm256_set1_pd(32.0), shift = _mm256_set1_pd(shiftBy);
    const __m256 zeroF = _mm256_setzero_ps(), maxCode = _mm256_set1_ps(float(kMax));
    Stop stop{to, false};
    uint64_t k = from, zeroCount = 0;
    for (; k < to; ++k) {
        const uint8_t* b = raw + k * T::kBytes;
        __m256 d1, m1;
        scalesOfAvx2(b, d1, m1);
        if (!exactByExponents<kMax>(gguf::blocks::u32At(b))) {
            alignas(32) float d[8], m[8];
            _mm256_store_ps(d, d1);
            _mm256_store_ps(m, m1);
            bool exact = true;
            for (int is = 0; is < 8 && exact; ++is)
                exact = exactLevels(d[is], m[is], kMax);
            if (!exact) {
                stop = Stop{k, true};
                break;
            }
        }
        CodeSums codes;
        if constexpr (kMax == 15)
            codeSumsAvx2(b + 16, codes);
        else
            codeSums5Avx2(b, codes);
        for (int h = 0; h < 2; ++h) {
            const __m256d D =
                _mm256_cvtps_pd(h ? _mm256_extractf128_ps(d1, 1) : _mm256_castps256_ps128(d1));
            const __m256d M =
                _mm256_cvtps_pd(h ? _mm256_extractf128_ps(m1, 1) : _mm256_castps256_ps128(m1));
            const __m256d S = _mm256_cvtepi32_pd(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes.s + 4 * h)));
            const __m256d Q = _mm256_cvtepi32_pd(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes.q + 4 * h)));
            const __m256d a = _mm256_mul_pd(D, S), t = _mm256_mul_pd(_mm256_mul_pd(D, D), Q);
            const __m256d twoA = _mm256_add_pd(a, a);
            sum[h] = _mm256_add_pd(sum[h], _mm256_fnmadd_pd(thirtyTwo, M, a));
            sumSq[h] = _mm256_add_pd(sumSq[h], _mm256_fmadd_pd(_mm256_mul_pd(thirtyTwo, M), M,
                                                               _mm256_fnmadd_pd(twoA, M, t)));
            const __m256d shifted = _mm256_add_pd(M, shift);
            sumShifted[h] = _mm256_add_pd(sumShifted[h], _mm256_fnmadd_pd(thirtyTwo, shifted, a));
            sumSqShifted[h] = _mm256_add_pd(
                sumSqShifted[h], _mm256_fmadd_pd(_mm256_mul_pd(thirtyTwo, shifted), shifted,
                                                 _mm256_fnmadd_pd(twoA, shifted, t)));
        }
        // Zero values, as runAvx512 counts them (r to 12 bits here: a whole
        // r ≤ 31 still rounds to itself, and d1 r == m1 is checked exactly).
        const __m256 flat = _mm256_cmp_ps(d1, zeroF, _CMP_EQ_OQ);
        zeroCount += 32 * uint64_t(std::popcount(unsigned(_mm256_movemask_ps(
                              _mm256_and_ps(flat, _mm256_cmp_ps(m1, zeroF, _CMP_EQ_OQ))))));
        const __m256 r = _mm256_round_ps(_mm256_mul_ps(m1, _mm256_rcp_ps(d1)),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256 zeroCode = _mm256_andnot_ps(
            flat, _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(r, zeroF, _CMP_GE_OQ),
                                              _mm256_cmp_ps(r, maxCode, _CMP_LE_OQ)),
                                _mm256_cmp_ps(_mm256_mul_ps(d1, r), m1, _CMP_EQ_OQ)));
        if (const int which = _mm256_movemask_ps(zeroCode))
            zeroCount += countCodes<T>(b, unsigned(which), _mm256_cvttps_epi32(r));

        const __m256 at0 = _mm256_sub_ps(_mm256_mul_ps(d1, zeroF), m1);
        const __m256 atMax = _mm256_sub_ps(_mm256_mul_ps(d1, maxCode), m1);
        const int lower =
            _mm256_movemask_ps(_mm256_cmp_ps(_mm256_min_ps(at0, atMax), vmin, _CMP_LT_OQ));
        const int higher =
            _mm256_movemask_ps(_mm256_cmp_ps(_mm256_max_ps(at0, atMax), vmax, _CMP_GT_OQ));
        if ((lower | higher) != 0) {
            stop = lookUpAt(k++, unsigned(lower), unsigned(higher), d1, m1);
            break;
        }
    }
    lanes.values += (k - from) * kSuperValues;
    lanes.zeros += zeroCount;
    for (int h = 0; h < 2; ++h) {
        _mm256_storeu_pd(lanes.sum + 4 * h, sum[h]);
        _mm256_storeu_pd(lanes.sumSq + 4 * h, sumSq[h]);
        _mm256_storeu_pd(lanes.sumShifted + 4 * h, sumShifted[h]);
        _mm256_storeu_pd(lanes.sumSqShifted + 4 * h, sumSqShifted[h]);
    }
    return stop;
}

// Each super-block by `run` (runAvx512 or runAvx2), and what stopped it
// done here: decoded (addSuperBlock), or the extremes and zeros looked up.
template <class T, Stop (*run)(LaneSums&, double, const uint8_t*, uint64_t, uint64_t)>
void addSuperBlocksInLanes(Partial& p, const uint8_t* raw, uint64_t superBlocks, Kernel kernel,
                           SeenExtremes* seen) {
    LaneSums lanes;
    if (seen) {
        std::fill(lanes.min, lanes.min + 8, seen->min.load(std::memory_order_relaxed));
        std::fill(lanes.max, lanes.max + 8, seen->max.load(std::memory_order_relaxed));
    }
    for (uint64_t k = 0; k < superBlocks;) {
        const Stop stop = run(lanes, p.shift, raw, k, superBlocks);
        if (stop.at == superBlocks)
            break;
        const uint8_t* b = raw + stop.at * T::kBytes;
        if (stop.decode) {
            addSuperBlock<T>(p, b, kernel);
        } else {
            lookUp<T>(b, stop.d1, stop.m1, stop.lower, stop.higher, lanes.min, lanes.max);
            // Each lane compares with the extremes of all (values of this
            // block): fewer sub-blocks to look up.
            std::fill(lanes.min, lanes.min + 8, *std::min_element(lanes.min, lanes.min + 8));
            std::fill(lanes.max, lanes.max + 8, *std::max_element(lanes.max, lanes.max + 8));
        }
        k = stop.at + 1;
    }
    p.n += lanes.values;
    p.finite += lanes.values;
    p.zeros += lanes.zeros;
    for (int i = 0; i < 8; ++i) { // the lanes in a fixed order
        p.sum += lanes.sum[i];
        p.sumSq += lanes.sumSq[i];
        p.sumShifted += lanes.sumShifted[i];
        p.sumSqShifted += lanes.sumSqShifted[i];
        p.min = std::min(p.min, lanes.min[i]);
        p.max = std::max(p.max, lanes.max[i]);
    }
}

CKPTSCOPE_AVX512_END
#endif

// The stored bytes of values [first, first + n), whole blocks of `values`
// values in `bytes` bytes, read into this thread's buffer (kept between
// blocks and tensors: 576 KiB per thread for Q4_K).
const uint8_t* readBlocks(const RawReader& raw, uint64_t first, uint64_t n, uint64_t bytes,
                          uint64_t values) {
    thread_local std::vector<uint8_t> buffer;
    buffer.resize(std::max(buffer.size(), size_t(n / values * bytes)));
    raw(first, n, buffer.data());
    return buffer.data();
}

} // namespace

bool sumsCodes(Dtype dtype) {
    // Q4_K with AVX2 alone by runAvx2 (and F16C, which every AVX2 CPU has:
    // sumsBlockCodes asks for it). Its sub-blocks one at a time had measured
    // slower than decoding (1 GiB of Q4_K: 1.06 s against 0.64 s).
    return (dtype == Dtype::Q4_K && (useAvx512() || sumsBlockCodes(Dtype::Q8_0))) ||
           (dtype == Dtype::Q5_K && sumsBlockCodes(Dtype::Q8_0)) || sumsBlockCodes(dtype);
}

void SeenExtremes::offer(float lo, float hi) {
    for (float now = min.load(); lo < now && !min.compare_exchange_weak(now, lo);) {
    }
    for (float now = max.load(); hi > now && !max.compare_exchange_weak(now, hi);) {
    }
}

namespace {

// The Partial of whole Q4_K or Q5_K super-blocks (q4KPartial's).
template <class T>
Partial superBlocksPartial(const uint8_t* raw, uint64_t superBlocks, Kernel kernel,
                           SeenExtremes* seen) {
    Partial p;
    if (superBlocks == 0)
        return p;
    p.shift = firstFiniteOfBlock(T::kGgml, raw, kSuperValues);
#ifdef CKPTSCOPE_STATS_AVX2
    // runAvx512 is Q4_K's; runAvx2 needs F16C besides AVX2, which
    // sumsBlockCodes checks.
    const bool wide = std::is_same_v<T, Q4KType> && kernel == Kernel::Auto && useAvx512();
    if (wide || (kernel != Kernel::Scalar && sumsBlockCodes(Dtype::Q8_0))) {
        if (wide)
            addSuperBlocksInLanes<T, runAvx512>(p, raw, superBlocks, kernel, seen);
        else
            addSuperBlocksInLanes<T, runAvx2<T>>(p, raw, superBlocks, kernel, seen);
        if (seen)
            seen->offer(p.min, p.max);
        return p;
    }
#endif
    for (uint64_t k = 0; k < superBlocks; ++k)
        addSuperBlock<T>(p, raw + k * T::kBytes, kernel);
    return p;
}

// Pass 1 of Q4_K or Q5_K: each block of the passes read and summed.
template <class T>
PartialScanner superBlocksPass1(const RawReader& raw, Kernel kernel, SeenExtremes& seen) {
    return [&raw, kernel, &seen](uint64_t first, uint64_t n) {
        return superBlocksPartial<T>(readBlocks(raw, first, n, T::kBytes, kSuperValues),
                                     n / kSuperValues, kernel, &seen);
    };
}

} // namespace

Partial q4KPartial(const uint8_t* raw, uint64_t superBlocks, Kernel kernel, SeenExtremes* seen) {
    return superBlocksPartial<Q4KType>(raw, superBlocks, kernel, seen);
}

StatsResult codeSumStats(Dtype dtype, uint64_t count, const RawReader& raw,
                         const ValueReader& values, const StatsOptions& options, Kernel kernel) {
    if (dtype == Dtype::Q8_0 || dtype == Dtype::Q4_0 || dtype == Dtype::Q6_K ||
        dtype == Dtype::Q3_K || dtype == Dtype::Q2_K) {
        // Pass 1 from the blocks' code sums (blocksums.h), pass 2 decoded.
        const CodeBlock block = codeBlockOf(dtype);
        const PartialScanner pass1 = [&raw, kernel, dtype, block](uint64_t first, uint64_t n) {
            return blockCodesPartial(dtype, readBlocks(raw, first, n, block.bytes, block.values),
                                     n / block.values, kernel);
        };
        return computeStatsScanned(count, values, pass1, nullptr, options, kCodeBlock);
    }
    SeenExtremes seen;
    if (dtype == Dtype::Q5_K) // pass 1 as Q4_K's (a fifth bit per code), pass 2 decoded
        return computeStatsScanned(count, values, superBlocksPass1<Q5KType>(raw, kernel, seen),
                                   nullptr, options, kCodeBlock);
    if (dtype != Dtype::Q4_K)
        throw std::logic_error("codeSumStats: a type whose codes are not summed");
    // (Keeping pass 1's stored bytes for pass 2, in a KeptBuffer, measured
    // slower than reading them again: 471 MiB of Q4_K at 10-64 bins took
    // 183-209 ms kept against 168-192 ms read again; the page-cache copy is
    // cheap beside the binning.)
    const PartialScanner pass1 = superBlocksPass1<Q4KType>(raw, kernel, seen);
    const BlockBinner pass2 = [&raw](uint64_t first, uint64_t n, BinCounter<float>& counter) {
        if (!canBinQ4K(counter))
            return false;
        binQ4K(counter, readBlocks(raw, first, n, kSuperBytes, kSuperValues), n / kSuperValues);
        return true;
    };
    return computeStatsScanned(count, values, pass1, kernel != Kernel::Scalar ? &pass2 : nullptr,
                               options, kCodeBlock);
}

} // namespace ckptscope::stats
