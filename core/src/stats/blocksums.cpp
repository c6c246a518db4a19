// blockCodesPartial (blocksums.h): Q8_0, Q4_0, Q6_K, Q3_K and Q2_K pass 1
// from code sums.
#include "stats/blocksums.h"
#include "stats/lowbitsums.h"

#include "common/simd.h"
#include "formats/gguf/ggmlblocks.h"
#include "formats/gguf/ggmlquants.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#ifdef CKPTSCOPE_STATS_AVX2
#include <immintrin.h>
#endif

namespace ckptscope::stats {

using namespace simd; // useF16C

namespace {

constexpr uint32_t kGgmlQ4_0 = 2, kGgmlQ8_0 = 8; // ggml.h's GGML_TYPE_*
constexpr uint64_t kValues = 32;                 // per block, both types

// A block's codes: their sum, the sum of their squares, how many are 0.
struct Sums {
    int32_t s;
    int32_t q;
    uint32_t zeros;
};

// The codes of one block of each type, as ggml's decoders make them.
struct Q8Codes {
    static constexpr Dtype kDtype = Dtype::Q8_0;
    static constexpr uint64_t kBytes = 34;
    static constexpr int kLeast = -128, kGreatest = 127;
    static int at(const uint8_t* codes, int i) { return int(int8_t(codes[i])); }
};
struct Q4Codes {
    static constexpr Dtype kDtype = Dtype::Q4_0;
    static constexpr uint64_t kBytes = 18;
    static constexpr int kLeast = -8, kGreatest = 7;
    // Values 0-15 in the low nibbles, 16-31 in the high ones.
    static int at(const uint8_t* codes, int i) {
        return (i < 16 ? codes[i] & 0xF : codes[i - 16] >> 4) - 8;
    }
};

template <class Codes> Sums sumsScalar(const uint8_t* codes) {
    Sums out{0, 0, 0};
    for (int i = 0; i < int(kValues); ++i) {
        const int q = Codes::at(codes, i);
        out.s += q;
        out.q += q * q;
        out.zeros += q == 0;
    }
    return out;
}

template <class Codes> std::pair<int, int> codeRange(const uint8_t* codes) {
    int least = Codes::kGreatest, greatest = Codes::kLeast;
    for (int i = 0; i < int(kValues); ++i) {
        least = std::min(least, Codes::at(codes, i));
        greatest = std::max(greatest, Codes::at(codes, i));
    }
    return {least, greatest};
}

#ifdef CKPTSCOPE_STATS_AVX2
#define BLOCKSUMS_AVX2 __attribute__((target("avx2,fma,f16c")))
#define BLOCKSUMS_AVX2_INLINE BLOCKSUMS_AVX2 __attribute__((always_inline)) inline

// The eight lanes of each of a, b, c, d added: {Σa, Σb, Σc, Σd}.
BLOCKSUMS_AVX2_INLINE __m128i addLanes4(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i t = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
    return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

// Σq and Σq² of four blocks (lane j: the block at first + j · Codes::kBytes),
// and how many of each block's codes are 0.
template <class Codes>
BLOCKSUMS_AVX2_INLINE void sumsOfFour(const uint8_t* first, __m128i& s, __m128i& q,
                                      uint32_t* zeros);

// Q8_0: codes widened to int16 and summed in pairs by vpmaddwd (at most
// 2 · 128² a pair), the eight lanes of each block added by vphaddd.
template <>
BLOCKSUMS_AVX2_INLINE void sumsOfFour<Q8Codes>(const uint8_t* first, __m128i& s, __m128i& q,
                                               uint32_t* zeros) {
    const __m256i one = _mm256_set1_epi16(1);
    __m256i sums[4], squares[4];
    for (int j = 0; j < 4; ++j) {
        const __m256i x = _mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(first + uint64_t(j) * Q8Codes::kBytes + 2));
        const __m256i lo = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(x));
        const __m256i hi = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(x, 1));
        sums[j] = _mm256_add_epi32(_mm256_madd_epi16(lo, one), _mm256_madd_epi16(hi, one));
        squares[j] = _mm256_add_epi32(_mm256_madd_epi16(lo, lo), _mm256_madd_epi16(hi, hi));
        zeros[j] = uint32_t(std::popcount(
            unsigned(_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, _mm256_setzero_si256())))));
    }
    s = addLanes4(sums[0], sums[1], sums[2], sums[3]);
    q = addLanes4(squares[0], squares[1], squares[2], squares[3]);
}

// (n − 8)² of the nibbles 0..15: a vpshufb table (at most 64, so byte sums
// of eight fit vpsadbw's 16 bits).
alignas(16) constexpr uint8_t kSquares[16] = {64, 49, 36, 25, 16, 9,  4,  1,
                                              0,  1,  4,  9,  16, 25, 36, 49};

// Q4_0: a block's 32 nibbles in one register (low ones, then high); byte
// sums (vpsadbw) of the nibbles and of their squares by table, packed in
// each 64-bit lane (Σn low, Σ(n − 8)² high), the four lanes of each block
// added by unpacking the four blocks against each other; Σ(n − 8) = Σn − 256.
template <>
BLOCKSUMS_AVX2_INLINE void sumsOfFour<Q4Codes>(const uint8_t* first, __m128i& s, __m128i& q,
                                               uint32_t* zeros) {
    const __m128i nibble = _mm_set1_epi8(0x0F);
    const __m256i squares =
        _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(kSquares)));
    const __m256i zero = _mm256_setzero_si256(), eight = _mm256_set1_epi8(8);
    __m256i packed[4];
    for (int j = 0; j < 4; ++j) {
        const __m128i raw = _mm_loadu_si128(
            reinterpret_cast<const __m128i*>(first + uint64_t(j) * Q4Codes::kBytes + 2));
        const __m256i n = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(raw, 4), nibble),
                                           _mm_and_si128(raw, nibble));
        packed[j] = _mm256_or_si256(
            _mm256_sad_epu8(n, zero),
            _mm256_slli_epi64(_mm256_sad_epu8(_mm256_shuffle_epi8(squares, n), zero), 32));
        zeros[j] =
            uint32_t(std::popcount(unsigned(_mm256_movemask_epi8(_mm256_cmpeq_epi8(n, eight)))));
    }
    // Lane pairs of blocks 0, 1 and of 2, 3 added, then the halves: block j's
    // (Σn, Σ(n − 8)²) in 64-bit lane j.
    const __m256i u = _mm256_add_epi64(_mm256_unpacklo_epi64(packed[0], packed[1]),
                                       _mm256_unpackhi_epi64(packed[0], packed[1]));
    const __m256i v = _mm256_add_epi64(_mm256_unpacklo_epi64(packed[2], packed[3]),
                                       _mm256_unpackhi_epi64(packed[2], packed[3]));
    const __m256i w = _mm256_add_epi64(_mm256_permute2x128_si256(u, v, 0x20),
                                       _mm256_permute2x128_si256(u, v, 0x31));
    const __m256i split = _mm256_permutevar8x32_epi32(w, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
    s = _mm_sub_epi32(_mm256_castsi256_si128(split), _mm_set1_epi32(8 * int(kValues)));
    q = _mm256_extracti128_si256(split, 1);
}
#endif

// Four sets of sums, block k into set k % 4: the adds of one block do not
// wait on the block before (and the AVX2 path keeps each set in a lane).
struct SetSums {
    double sum[4] = {}, sumSq[4] = {}, sumShifted[4] = {}, sumSqShifted[4] = {};
};

// Adds the sets' sums to p, in a fixed order.
void mergeSets(Partial& p, const SetSums& sets) {
    for (unsigned set = 0; set < 4; ++set) {
        p.sum += sets.sum[set];
        p.sumSq += sets.sumSq[set];
        p.sumShifted += sets.sumShifted[set];
        p.sumSqShifted += sets.sumSqShifted[set];
    }
}

// Adds n values d · q (d finite; each exact in f32) whose codes have sum
// s.s, sum of squares s.q and s.zeros zeros into p and set `set`; the
// codes lie in [least, greatest], and range() gives the actual least and
// greatest when the extremes need them.
template <class Range>
void addScaled(Partial& p, SetSums& sets, unsigned set, float d, uint64_t n, const Sums& s,
               int least, int greatest, Range range) {
    const double dd = d, sum = dd * double(s.s), count = double(n);
    const double centred = sum / count - p.shift; // the codes' mean, shifted
    // Exact in double for Q8_0 and Q4_0 (d² has 22 significant bits, n Σq² −
    // (Σq)² at most 25); for Q6_K and Q3_K (d · scale² up to 36 bits) within a
    // rounding.
    const double m2 = dd * dd * double(int64_t(n) * s.q - int64_t(s.s) * s.s) / count;
    sets.sum[set] += sum;
    sets.sumSq[set] += dd * dd * double(s.q);
    sets.sumShifted[set] += count * centred;
    sets.sumSqShifted[set] += m2 + count * centred * centred;
    p.n += n;
    p.finite += n;
    p.zeros += d == 0 ? n : s.zeros;
    // The extremes are d times the extreme codes.
    const float a = d * float(least), z = d * float(greatest);
    if (std::min(a, z) < p.min || std::max(a, z) > p.max) {
        const auto [lo, hi] = range();
        const float x = d * float(lo), y = d * float(hi);
        p.min = std::min(p.min, std::min(x, y));
        p.max = std::max(p.max, std::max(x, y));
    }
}

// Adds the block at b into p and set `set`.
template <class Codes>
void addBlock(Partial& p, SetSums& sets, unsigned set, const uint8_t* b, uint32_t ggmlId,
              Kernel kernel) {
    const float d = gguf::blocks::f16At(b);
    if (!std::isfinite(d))
        return addDecoded(p, b, ggmlId, kValues, kernel);
    addScaled(p, sets, set, d, kValues, sumsScalar<Codes>(b + 2), Codes::kLeast, Codes::kGreatest,
              [b] { return codeRange<Codes>(b + 2); });
}

// Q6_K and Q3_K: 256 values, sixteen sub-blocks of 16 under an f16 d times
// a signed scale; value v is (d · scale[v / 16]) · (u − kCenter) for an
// unsigned code u (dequantize_row_q6_K's and _q3_K's order), each exact in
// f32: d · scale has at most 18 significant bits, |u − kCenter| at most 5.
constexpr uint64_t kK16Values = 256, kSubValues = 16;

// Q6_K (block_q6_K): ql[128], qh[64], int8 scales[16], f16 d; 6-bit codes.
struct Q6Type {
    static constexpr uint64_t kBytes = 210, kDAt = 208;
    static constexpr uint32_t kGgml = 14;
    static constexpr int kCenter = 32;
    // The 256 codes (u − 32) in value order.
    static void codes(const uint8_t* b, int8_t* q) {
        for (int h = 0; h < 2; ++h) {
            const uint8_t* ql = b + 64 * h;
            const uint8_t* qh = b + 128 + 32 * h;
            int8_t* out = q + 128 * h;
            for (int l = 0; l < 32; ++l) {
                out[l] = int8_t(((ql[l] & 0xF) | (qh[l] & 3) << 4) - 32);
                out[l + 32] = int8_t(((ql[l + 32] & 0xF) | (qh[l] >> 2 & 3) << 4) - 32);
                out[l + 64] = int8_t(((ql[l] >> 4) | (qh[l] >> 4 & 3) << 4) - 32);
                out[l + 96] = int8_t(((ql[l + 32] >> 4) | (qh[l] >> 6 & 3) << 4) - 32);
            }
        }
    }
    static void scales(const uint8_t* b, int* sc) {
        for (int j = 0; j < 16; ++j)
            sc[j] = int8_t(b[192 + j]);
    }
};

// Q3_K (block_q3_K): hmask[32], qs[64], 6-bit scales − 32 packed in 12
// bytes, f16 d; 3-bit codes: two bits of qs, and 4 more where hmask's bit
// is set (a clear bit subtracts 4 from the two).
struct Q3Type {
    static constexpr uint64_t kBytes = 110, kDAt = 108;
    static constexpr uint32_t kGgml = 11;
    static constexpr int kCenter = 4;
    static void codes(const uint8_t* b, int8_t* q) {
        for (int group = 0; group < 8; ++group) { // hmask's bit `group`
            const uint8_t* qs = b + 32 + 32 * (group / 4);
            const int shift = 2 * (group % 4);
            for (int l = 0; l < 32; ++l)
                q[32 * group + l] = int8_t(((qs[l] >> shift) & 3) | ((b[l] >> group) & 1) << 2) - 4;
        }
    }
    static void scales(const uint8_t* b, int* sc) { gguf::blocks::q3kScales(b + 96, sc); }
};

// The least and greatest of n codes.
std::pair<int, int> rangeOf(const int8_t* q, uint64_t n) {
    const auto [lo, hi] = std::minmax_element(q, q + n);
    return {*lo, *hi};
}

// Adds the super-block at b into p, sub-block j into set j % 4.
template <class K> void addK16Block(Partial& p, SetSums& sets, const uint8_t* b, Kernel kernel) {
    const float d = gguf::blocks::f16At(b + K::kDAt);
    if (!std::isfinite(d))
        return addDecoded(p, b, K::kGgml, kK16Values, kernel);
    int8_t q[kK16Values];
    K::codes(b, q);
    int sc[16];
    K::scales(b, sc);
    for (uint64_t j = 0; j < kK16Values / kSubValues; ++j) {
        const int8_t* codes = q + j * kSubValues;
        Sums s{0, 0, 0};
        for (uint64_t i = 0; i < kSubValues; ++i) {
            s.s += codes[i];
            s.q += codes[i] * codes[i];
            s.zeros += codes[i] == 0;
        }
        addScaled(p, sets, unsigned(j % 4), d * float(sc[j]), kSubValues, s, -K::kCenter,
                  K::kCenter - 1, [codes] { return rangeOf(codes, kSubValues); });
    }
}

#ifdef CKPTSCOPE_STATS_AVX2
// SetSums in four double lanes (set j in lane j) while a loop runs.
struct FourSets {
    __m256d sum, sumSq, sumShifted, sumSqShifted;

    BLOCKSUMS_AVX2_INLINE void load(const SetSums& s) {
        sum = _mm256_loadu_pd(s.sum);
        sumSq = _mm256_loadu_pd(s.sumSq);
        sumShifted = _mm256_loadu_pd(s.sumShifted);
        sumSqShifted = _mm256_loadu_pd(s.sumSqShifted);
    }
    BLOCKSUMS_AVX2_INLINE void store(SetSums& s) const {
        _mm256_storeu_pd(s.sum, sum);
        _mm256_storeu_pd(s.sumSq, sumSq);
        _mm256_storeu_pd(s.sumShifted, sumShifted);
        _mm256_storeu_pd(s.sumSqShifted, sumSqShifted);
    }

    // addScaled's sums of four groups of n values (n a power of two: 1 / n
    // exact), lane j: scale d4[j], Σq s4[j], Σq² q4[j].
    BLOCKSUMS_AVX2_INLINE void add(__m128 d4, __m128i s4, __m128i q4, uint64_t n, double shiftBy) {
        const __m256d count = _mm256_set1_pd(double(n)), perValue = _mm256_set1_pd(1.0 / double(n));
        const __m256d dd = _mm256_cvtps_pd(d4), dd2 = _mm256_mul_pd(dd, dd);
        const __m256d groupSum = _mm256_mul_pd(dd, _mm256_cvtepi32_pd(s4));
        // n Σq² − (Σq)² fits int32 (at most 2^24), as does each term.
        const __m256d spread = _mm256_cvtepi32_pd(_mm_sub_epi32(
            _mm_sll_epi32(q4, _mm_cvtsi32_si128(std::countr_zero(n))), _mm_mullo_epi32(s4, s4)));
        const __m256d m2 = _mm256_mul_pd(_mm256_mul_pd(dd2, spread), perValue);
        const __m256d centred =
            _mm256_sub_pd(_mm256_mul_pd(groupSum, perValue), _mm256_set1_pd(shiftBy));
        sum = _mm256_add_pd(sum, groupSum);
        sumSq = _mm256_add_pd(sumSq, _mm256_mul_pd(dd2, _mm256_cvtepi32_pd(q4)));
        sumShifted = _mm256_add_pd(sumShifted, _mm256_mul_pd(count, centred));
        sumSqShifted = _mm256_add_pd(
            sumSqShifted, _mm256_add_pd(m2, _mm256_mul_pd(_mm256_mul_pd(count, centred), centred)));
    }
};

// addScaled's zeros (into `zeroCount`: kept in a register by the caller's
// loop, where p's fields would be stored each time) and extremes of four
// groups of n values, lane j: scale d[j], zeros[j] zero codes, codes in
// [least, greatest]; range(j) gives group j's actual least and greatest.
template <class Range>
BLOCKSUMS_AVX2_INLINE void addCounts(Partial& p, uint64_t& zeroCount, __m128 d4, const float* d,
                                     const uint32_t* zeros, uint64_t n, int least, int greatest,
                                     Range range) {
    for (int j = 0; j < 4; ++j)
        zeroCount += d[j] == 0 ? n : zeros[j];
    const __m128 a = _mm_mul_ps(d4, _mm_set1_ps(float(least)));
    const __m128 z = _mm_mul_ps(d4, _mm_set1_ps(float(greatest)));
    const int passes =
        _mm_movemask_ps(_mm_or_ps(_mm_cmp_ps(_mm_min_ps(a, z), _mm_set1_ps(p.min), _CMP_LT_OQ),
                                  _mm_cmp_ps(_mm_max_ps(a, z), _mm_set1_ps(p.max), _CMP_GT_OQ)));
    for (int m = passes; m; m &= m - 1) { // rare once the extremes are found
        const int j = std::countr_zero(unsigned(m));
        const auto [lo, hi] = range(j);
        const float x = d[j] * float(lo), y = d[j] * float(hi);
        p.min = std::min(p.min, std::min(x, y));
        p.max = std::max(p.max, std::max(x, y));
    }
}

// True for a lane of d4 that is Inf or NaN.
BLOCKSUMS_AVX2_INLINE bool anyNonFinite(__m128 d4) {
    const __m128 magnitude = _mm_and_ps(d4, _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff)));
    return _mm_movemask_ps(_mm_cmp_ps(magnitude, _mm_set1_ps(std::numeric_limits<float>::max()),
                                      _CMP_NLE_UQ)) != 0;
}

// addBlock four blocks at a time, set j in lane j: the code sums by AVX2,
// the scales by F16C. Four blocks with a non-finite scale among them go to
// addBlock (F16C may quiet a NaN: it decodes them). Returns the blocks done
// (a multiple of four).
template <class Codes>
BLOCKSUMS_AVX2 uint64_t addBlocksAvx2(Partial& p, SetSums& sets, const uint8_t* raw,
                                      uint64_t blocks, uint32_t ggmlId, Kernel kernel) {
    FourSets four;
    four.load(sets);
    uint64_t k = 0, summed = 0, zeroCount = 0;
    for (; k + 4 <= blocks; k += 4) {
        const uint8_t* first = raw + k * Codes::kBytes;
        alignas(16) float d[4];
        for (int j = 0; j < 4; ++j)
            d[j] = _cvtsh_ss(gguf::blocks::u16At(first + uint64_t(j) * Codes::kBytes));
        const __m128 d4 = _mm_load_ps(d);
        if (anyNonFinite(d4)) { // rare
            four.store(sets);
            for (unsigned j = 0; j < 4; ++j)
                addBlock<Codes>(p, sets, j, first + j * Codes::kBytes, ggmlId, kernel);
            four.load(sets);
            continue;
        }
        __m128i s4, q4;
        uint32_t zeros[4];
        sumsOfFour<Codes>(first, s4, q4, zeros);
        four.add(d4, s4, q4, kValues, p.shift);
        summed += 4 * kValues;
        addCounts(
            p, zeroCount, d4, d, zeros, kValues, Codes::kLeast, Codes::kGreatest,
            [first](int j) { return codeRange<Codes>(first + uint64_t(j) * Codes::kBytes + 2); });
    }
    four.store(sets);
    p.n += summed;
    p.finite += summed;
    p.zeros += zeroCount;
    return k;
}

// Two bits of each byte of hb from bit `shift`, moved to bits 4-5: the
// high bits of Q6_K's codes.
BLOCKSUMS_AVX2_INLINE __m256i highBits(__m256i hb, int shift) {
    return _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, shift), _mm256_set1_epi8(3)),
                             4);
}

// A half super-block's 128 unsigned codes as four vectors in value order
// (vector g: sub-blocks 2g and 2g + 1 of the half, one a 128-bit lane), and
// the eight scales of the half.
BLOCKSUMS_AVX2_INLINE void halfCodes(Q6Type, const uint8_t* b, int h, __m256i* u) {
    const __m256i low = _mm256_set1_epi8(0x0F);
    const uint8_t* ql = b + 64 * h;
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
    const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * h));
    u[0] = _mm256_or_si256(_mm256_and_si256(a, low), highBits(hb, 0));
    u[1] = _mm256_or_si256(_mm256_and_si256(c, low), highBits(hb, 2));
    u[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), low), highBits(hb, 4));
    u[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(c, 4), low), highBits(hb, 6));
}
// addK16Block by AVX2: each half's codes by halfCodes, byte sums (vpsadbw)
// of the codes and sums of their squares (vpmaddubsw: 2 · 63² fits int16),
// both reduced by vphaddd to the sub-blocks in the order 0, 2, 4, 6 | 1, 3,
// 5, 7, the scales put in that order too; then per sub-block of 16, with c
// = kCenter, Σ(u − c) = Σu − 16c and Σ(u − c)² = Σu² − 2c Σu + 16c².
template <class K>
BLOCKSUMS_AVX2 void addK16BlocksAvx2(Partial& p, SetSums& sets, const uint8_t* raw,
                                     uint64_t superBlocks, Kernel kernel) {
    constexpr int c = K::kCenter;
    FourSets four;
    four.load(sets);
    const __m256i zero = _mm256_setzero_si256(), center = _mm256_set1_epi8(char(c));
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    uint64_t summed = 0, zeroCount = 0;
    for (uint64_t k = 0; k < superBlocks; ++k) {
        const uint8_t* b = raw + k * K::kBytes;
        const float d = _cvtsh_ss(gguf::blocks::u16At(b + K::kDAt));
        if (!std::isfinite(d)) { // rare
            four.store(sets);
            addK16Block<K>(p, sets, b, kernel);
            four.load(sets);
            continue;
        }
        summed += kK16Values;
        alignas(32) int scales[16];
        K::scales(b, scales);
        int8_t codes[kK16Values]; // made once, if an extreme needs them
        bool decoded = false;
        for (int h = 0; h < 2; ++h) {
            __m256i u[4];
            halfCodes(K{}, b, h, u);
            __m256i sums[4], squares[4];
            alignas(16) uint32_t zeros[8]; // order 0, 2, 4, 6, 1, 3, 5, 7
            for (int g = 0; g < 4; ++g) {
                sums[g] = _mm256_sad_epu8(u[g], zero);
                squares[g] = _mm256_madd_epi16(_mm256_maddubs_epi16(u[g], u[g]), ones);
                const auto at = unsigned(_mm256_movemask_epi8(_mm256_cmpeq_epi8(u[g], center)));
                zeros[g] = uint32_t(std::popcount(at & 0xFFFFu));
                zeros[4 + g] = uint32_t(std::popcount(at >> 16));
            }
            const __m256i su = _mm256_hadd_epi32(_mm256_hadd_epi32(sums[0], sums[1]),
                                                 _mm256_hadd_epi32(sums[2], sums[3]));
            const __m256i qu = _mm256_hadd_epi32(_mm256_hadd_epi32(squares[0], squares[1]),
                                                 _mm256_hadd_epi32(squares[2], squares[3]));
            const __m256i s8 = _mm256_sub_epi32(su, _mm256_set1_epi32(16 * c));
            const __m256i q8 = _mm256_add_epi32(
                _mm256_sub_epi32(qu, _mm256_slli_epi32(su, std::countr_zero(unsigned(2 * c)))),
                _mm256_set1_epi32(16 * c * c));
            const __m256i sc = _mm256_load_si256(reinterpret_cast<const __m256i*>(scales + 8 * h));
            const __m256 d8 = _mm256_permutevar8x32_ps(
                _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sc)), order);
            alignas(32) float d1[8];
            _mm256_store_ps(d1, d8);
            for (int half = 0; half < 2; ++half) { // even sub-blocks, then odd
                const __m128 d4 = half ? _mm256_extractf128_ps(d8, 1) : _mm256_castps256_ps128(d8);
                four.add(d4, half ? _mm256_extracti128_si256(s8, 1) : _mm256_castsi256_si128(s8),
                         half ? _mm256_extracti128_si256(q8, 1) : _mm256_castsi256_si128(q8),
                         kSubValues, p.shift);
                addCounts(p, zeroCount, d4, d1 + 4 * half, zeros + 4 * half, kSubValues, -c, c - 1,
                          [&](int j) {
                              if (!decoded) {
                                  K::codes(b, codes);
                                  decoded = true;
                              }
                              const int sub = 8 * h + 2 * j + half;
                              return rangeOf(codes + sub * kSubValues, kSubValues);
                          });
            }
        }
    }
    four.store(sets);
    p.n += summed;
    p.finite += summed;
    p.zeros += zeroCount;
}
#endif

template <class Codes>
Partial partialOf(const uint8_t* raw, uint64_t blocks, uint32_t ggmlId, Kernel kernel) {
    Partial p;
    if (blocks == 0)
        return p;
    p.shift = firstFiniteOfBlock(ggmlId, raw, kValues);
    SetSums sets;
    uint64_t k = 0;
#ifdef CKPTSCOPE_STATS_AVX2
    if (kernel != Kernel::Scalar && sumsBlockCodes(Codes::kDtype))
        k = addBlocksAvx2<Codes>(p, sets, raw, blocks, ggmlId, kernel);
#endif
    for (; k < blocks; ++k)
        addBlock<Codes>(p, sets, unsigned(k % 4), raw + k * Codes::kBytes, ggmlId, kernel);
    mergeSets(p, sets);
    return p;
}

template <class K> Partial partialK16(const uint8_t* raw, uint64_t superBlocks, Kernel kernel) {
    Partial p;
    if (superBlocks == 0)
        return p;
    p.shift = firstFiniteOfBlock(K::kGgml, raw, kK16Values);
    SetSums sets;
#ifdef CKPTSCOPE_STATS_AVX2
    if (kernel != Kernel::Scalar && sumsBlockCodes(Dtype::Q8_0)) { // AVX2 and F16C
        if constexpr (std::is_same_v<K, Q3Type>)
            addLowBitSuperBlocks(p, Dtype::Q3_K, raw, superBlocks, kernel);
        else
            addK16BlocksAvx2<K>(p, sets, raw, superBlocks, kernel);
        superBlocks = 0;
    }
#endif
    for (uint64_t k = 0; k < superBlocks; ++k)
        addK16Block<K>(p, sets, raw + k * K::kBytes, kernel);
    mergeSets(p, sets);
    return p;
}

// Q2_K (block_q2_K, 84 bytes): its sums are lowbitsums.h's; without AVX2
// its blocks are decoded.
constexpr uint64_t kQ2Bytes = 84;
constexpr uint32_t kGgmlQ2_K = 10;

Partial partialQ2(const uint8_t* raw, uint64_t superBlocks, Kernel kernel) {
    Partial p;
    if (superBlocks == 0)
        return p;
    p.shift = firstFiniteOfBlock(kGgmlQ2_K, raw, kK16Values);
#ifdef CKPTSCOPE_STATS_AVX2
    if (kernel != Kernel::Scalar && sumsBlockCodes(Dtype::Q2_K)) {
        addLowBitSuperBlocks(p, Dtype::Q2_K, raw, superBlocks, kernel);
        return p;
    }
#endif
    for (uint64_t k = 0; k < superBlocks; ++k)
        addDecoded(p, raw + k * kQ2Bytes, kGgmlQ2_K, kK16Values, kernel);
    return p;
}

} // namespace

namespace {
// x = m · 2^e with m odd: e (INT_MAX for zero).
int lowBitExponent(float x) {
    const uint32_t bits = std::bit_cast<uint32_t>(x) & 0x7fffffffu;
    if (bits == 0)
        return INT_MAX;
    const uint32_t exponent = bits >> 23, mantissa = bits & 0x7fffffu;
    const uint32_t significand = exponent ? (mantissa | 0x800000u) : mantissa;
    return (exponent ? int(exponent) - 150 : -149) + std::countr_zero(significand);
}

} // namespace

// True when d1 * q - m1 is exact in f32 for every code q of 0..maxCode
// (then so is d1 * q): each is a multiple of 2^g, g the lower of the two
// low-bit exponents, and below 2^(g + 24) in magnitude.
bool exactLevels(float d1, float m1, int maxCode) {
    const int g = std::min(lowBitExponent(d1), lowBitExponent(m1));
    if (g == INT_MAX)
        return true;
    const double limit = std::bit_cast<double>(uint64_t(g + 24 + 1023) << 52);
    return double(maxCode) * std::fabs(double(d1)) + std::fabs(double(m1)) < limit;
}

double firstFiniteOfBlock(uint32_t ggmlId, const uint8_t* raw, uint64_t values) {
    float first[256];
    gguf::dequantizeBlocks(ggmlId, raw, 1, first);
    const float* end = first + std::min<uint64_t>(values, 256);
    const float* finite = std::find_if(static_cast<const float*>(first), end,
                                       [](float x) { return std::isfinite(x); });
    return finite != end ? double(*finite) : 0.0;
}

void addDecoded(Partial& p, const uint8_t* b, uint32_t ggmlId, uint64_t values, Kernel kernel) {
    float decoded[256];
    gguf::dequantizeBlocks(ggmlId, b, 1, decoded);
    addShifted(p, scanBlockShifted(decoded, values, p.shift, kernel));
}

bool sumsBlockCodes(Dtype dtype) {
#ifdef CKPTSCOPE_STATS_AVX2
    return (dtype == Dtype::Q8_0 || dtype == Dtype::Q4_0 || dtype == Dtype::Q6_K ||
            dtype == Dtype::Q3_K || dtype == Dtype::Q2_K) &&
           useF16C();
#else
    (void)dtype;
    return false;
#endif
}

CodeBlock codeBlockOf(Dtype dtype) {
    if (dtype == Dtype::Q8_0)
        return {Q8Codes::kBytes, kValues};
    if (dtype == Dtype::Q4_0)
        return {Q4Codes::kBytes, kValues};
    if (dtype == Dtype::Q6_K)
        return {Q6Type::kBytes, kK16Values};
    if (dtype == Dtype::Q3_K)
        return {Q3Type::kBytes, kK16Values};
    if (dtype == Dtype::Q2_K)
        return {kQ2Bytes, kK16Values};
    throw std::logic_error("codeBlockOf: a type whose block codes are not summed");
}

Partial blockCodesPartial(Dtype dtype, const uint8_t* raw, uint64_t blocks, Kernel kernel) {
    if (dtype == Dtype::Q8_0)
        return partialOf<Q8Codes>(raw, blocks, kGgmlQ8_0, kernel);
    if (dtype == Dtype::Q4_0)
        return partialOf<Q4Codes>(raw, blocks, kGgmlQ4_0, kernel);
    if (dtype == Dtype::Q6_K)
        return partialK16<Q6Type>(raw, blocks, kernel);
    if (dtype == Dtype::Q3_K)
        return partialK16<Q3Type>(raw, blocks, kernel);
    if (dtype == Dtype::Q2_K)
        return partialQ2(raw, blocks, kernel);
    throw std::logic_error("blockCodesPartial: a type whose block codes are not summed");
}

} // namespace ckptscope::stats
