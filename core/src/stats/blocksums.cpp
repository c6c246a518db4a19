// blockCodesPartial (blocksums.h): Q8_0 and Q4_0 pass 1 from code sums.
#include "stats/blocksums.h"

#include "common/simd.h"
#include "formats/gguf/ggmlblocks.h"
#include "formats/gguf/ggmlquants.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#ifdef CKPTSCOPE_STATS_AVX2
#include <immintrin.h>
#endif

namespace ckptscope::stats {

using namespace simd; // useAvx2

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

// Adds the block at b, with its code sums s, into p and set `set`.
template <class Codes>
void addBlock(Partial& p, SetSums& sets, unsigned set, const uint8_t* b, uint32_t ggmlId,
              Kernel kernel) {
    const float d = gguf::blocks::f16At(b);
    if (!std::isfinite(d)) { // rare: every value NaN or infinite
        float values[kValues];
        gguf::dequantizeBlocks(ggmlId, b, 1, values);
        addShifted(p, scanBlockShifted(values, kValues, p.shift, kernel));
        return;
    }
    const Sums s = sumsScalar<Codes>(b + 2);
    const double dd = d, sum = dd * double(s.s);
    const double centred = sum / double(kValues) - p.shift; // the block's mean, shifted
    // Exact in double: d² has 22 significant bits, 32 Σq² − (Σq)² at most 25.
    const double m2 =
        dd * dd * double(int64_t(kValues) * s.q - int64_t(s.s) * s.s) / double(kValues);
    sets.sum[set] += sum;
    sets.sumSq[set] += dd * dd * double(s.q);
    sets.sumShifted[set] += double(kValues) * centred;
    sets.sumSqShifted[set] += m2 + double(kValues) * centred * centred;
    p.n += kValues;
    p.finite += kValues;
    p.zeros += d == 0 ? kValues : s.zeros;
    // d · q is exact in f32: the extremes are d times the extreme codes.
    const float a = d * float(Codes::kLeast), z = d * float(Codes::kGreatest);
    if (std::min(a, z) < p.min || std::max(a, z) > p.max) {
        const auto [least, greatest] = codeRange<Codes>(b + 2);
        const float x = d * float(least), y = d * float(greatest);
        p.min = std::min(p.min, std::min(x, y));
        p.max = std::max(p.max, std::max(x, y));
    }
}

#ifdef CKPTSCOPE_STATS_AVX2
// addBlock four blocks at a time, set j in lane j: the code sums by AVX2,
// the scales by F16C, the sums of the four in double lanes. Four blocks
// with a non-finite scale among them go to addBlock. Returns the blocks
// done (a multiple of four).
template <class Codes>
BLOCKSUMS_AVX2 uint64_t addBlocksAvx2(Partial& p, SetSums& sets, const uint8_t* raw,
                                      uint64_t blocks, uint32_t ggmlId, Kernel kernel) {
    const __m256d shift = _mm256_set1_pd(p.shift), count = _mm256_set1_pd(double(kValues));
    const __m256d perValue = _mm256_set1_pd(1.0 / double(kValues)); // exact: a power of two
    const __m128 largest = _mm_set1_ps(std::numeric_limits<float>::max());
    const __m128 absMask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    __m256d sum = _mm256_loadu_pd(sets.sum), sumSq = _mm256_loadu_pd(sets.sumSq);
    __m256d sumShifted = _mm256_loadu_pd(sets.sumShifted);
    __m256d sumSqShifted = _mm256_loadu_pd(sets.sumSqShifted);
    uint64_t k = 0;
    for (; k + 4 <= blocks; k += 4) {
        const uint8_t* first = raw + k * Codes::kBytes;
        alignas(16) float d[4];
        for (int j = 0; j < 4; ++j)
            d[j] = _cvtsh_ss(gguf::blocks::u16At(first + uint64_t(j) * Codes::kBytes));
        __m128i s4, q4;
        uint32_t zeros[4];
        sumsOfFour<Codes>(first, s4, q4, zeros);
        const __m128 d4 = _mm_load_ps(d);
        if (_mm_movemask_ps(_mm_cmp_ps(_mm_and_ps(d4, absMask), largest, _CMP_NLE_UQ))) {
            // rare: a scale Inf or NaN (F16C may quiet a NaN: addBlock decodes)
            _mm256_storeu_pd(sets.sum, sum);
            _mm256_storeu_pd(sets.sumSq, sumSq);
            _mm256_storeu_pd(sets.sumShifted, sumShifted);
            _mm256_storeu_pd(sets.sumSqShifted, sumSqShifted);
            for (unsigned j = 0; j < 4; ++j)
                addBlock<Codes>(p, sets, j, raw + (k + j) * Codes::kBytes, ggmlId, kernel);
            sum = _mm256_loadu_pd(sets.sum);
            sumSq = _mm256_loadu_pd(sets.sumSq);
            sumShifted = _mm256_loadu_pd(sets.sumShifted);
            sumSqShifted = _mm256_loadu_pd(sets.sumSqShifted);
            continue;
        }
        const __m256d dd = _mm256_cvtps_pd(d4), dd2 = _mm256_mul_pd(dd, dd);
        const __m256d blockSum = _mm256_mul_pd(dd, _mm256_cvtepi32_pd(s4));
        // 32 Σq² − (Σq)² fits int32 (at most 2^24), as does each term.
        const __m256d spread =
            _mm256_cvtepi32_pd(_mm_sub_epi32(_mm_slli_epi32(q4, 5), _mm_mullo_epi32(s4, s4)));
        const __m256d m2 = _mm256_mul_pd(_mm256_mul_pd(dd2, spread), perValue);
        const __m256d centred = _mm256_sub_pd(_mm256_mul_pd(blockSum, perValue), shift);
        sum = _mm256_add_pd(sum, blockSum);
        sumSq = _mm256_add_pd(sumSq, _mm256_mul_pd(dd2, _mm256_cvtepi32_pd(q4)));
        sumShifted = _mm256_add_pd(sumShifted, _mm256_mul_pd(count, centred));
        sumSqShifted = _mm256_add_pd(
            sumSqShifted, _mm256_add_pd(m2, _mm256_mul_pd(_mm256_mul_pd(count, centred), centred)));
        p.n += 4 * kValues;
        p.finite += 4 * kValues;
        for (int j = 0; j < 4; ++j)
            p.zeros += d[j] == 0 ? kValues : zeros[j];
        // The extremes: d times the codes' whole range first.
        const __m128 a = _mm_mul_ps(d4, _mm_set1_ps(float(Codes::kLeast)));
        const __m128 z = _mm_mul_ps(d4, _mm_set1_ps(float(Codes::kGreatest)));
        const int passes = _mm_movemask_ps(
            _mm_or_ps(_mm_cmp_ps(_mm_min_ps(a, z), _mm_set1_ps(p.min), _CMP_LT_OQ),
                      _mm_cmp_ps(_mm_max_ps(a, z), _mm_set1_ps(p.max), _CMP_GT_OQ)));
        for (int m = passes; m; m &= m - 1) { // rare once the extremes are found
            const int j = std::countr_zero(unsigned(m));
            const auto [least, greatest] =
                codeRange<Codes>(raw + (k + uint64_t(j)) * Codes::kBytes + 2);
            const float x = d[j] * float(least), y = d[j] * float(greatest);
            p.min = std::min(p.min, std::min(x, y));
            p.max = std::max(p.max, std::max(x, y));
        }
    }
    _mm256_storeu_pd(sets.sum, sum);
    _mm256_storeu_pd(sets.sumSq, sumSq);
    _mm256_storeu_pd(sets.sumShifted, sumShifted);
    _mm256_storeu_pd(sets.sumSqShifted, sumSqShifted);
    return k;
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
    for (unsigned set = 0; set < 4; ++set) { // in a fixed order
        p.sum += sets.sum[set];
        p.sumSq += sets.sumSq[set];
        p.sumShifted += sets.sumShifted[set];
        p.sumSqShifted += sets.sumSqShifted[set];
    }
    return p;
}

} // namespace

double firstFiniteOfBlock(uint32_t ggmlId, const uint8_t* raw, uint64_t values) {
    float first[256];
    gguf::dequantizeBlocks(ggmlId, raw, 1, first);
    const float* end = first + std::min<uint64_t>(values, 256);
    const float* finite = std::find_if(static_cast<const float*>(first), end,
                                       [](float x) { return std::isfinite(x); });
    return finite != end ? double(*finite) : 0.0;
}

bool sumsBlockCodes(Dtype dtype) {
#ifdef CKPTSCOPE_STATS_AVX2
    static const bool f16c = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("f16c");
    }();
    return (dtype == Dtype::Q8_0 || dtype == Dtype::Q4_0) && useAvx2() && f16c;
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
    throw std::logic_error("codeBlockOf: a type whose block codes are not summed");
}

Partial blockCodesPartial(Dtype dtype, const uint8_t* raw, uint64_t blocks, Kernel kernel) {
    if (dtype == Dtype::Q8_0)
        return partialOf<Q8Codes>(raw, blocks, kGgmlQ8_0, kernel);
    if (dtype == Dtype::Q4_0)
        return partialOf<Q4Codes>(raw, blocks, kGgmlQ4_0, kernel);
    throw std::logic_error("blockCodesPartial: a type whose block codes are not summed");
}

} // namespace ckptscope::stats
