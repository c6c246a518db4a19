#include "stats/statskernels.h"
#include "common/simd.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#ifdef CKPTSCOPE_STATS_AVX2
#include <immintrin.h>
#endif

namespace ckptscope::stats {

using namespace simd; // useAvx2, useAvx512 and the lane helpers

namespace {

// Sums of one block, four lanes each so the adds pipeline.
struct Sums {
    double s[4] = {}, ss[4] = {}, sq[4] = {};
};

bool isSpecial(uint32_t bits) {
    return (bits & 0x7f800000u) == 0x7f800000u; // NaN or ±Inf
}

// Values [from, to) of a block, one at a time.
void scanScalar(const float* v, uint64_t from, uint64_t to, Partial& p, Sums& sums) {
    for (uint64_t i = from; i < to; ++i) {
        const float f = valueAt(v, i);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        if (isSpecial(bits)) { // rare
            if (bits & 0x007fffffu)
                ++p.nan;
            else if (bits & 0x80000000u)
                ++p.negInf;
            else
                ++p.posInf;
            continue;
        }
        p.zeros += (f == 0.0f);
        p.min = std::min(p.min, f);
        p.max = std::max(p.max, f);
        const double d = f;
        const double c = d - p.shift;
        sums.s[i & 3] += c;
        sums.ss[i & 3] += c * c;
        sums.sq[i & 3] += d * d;
    }
}

#ifdef CKPTSCOPE_STATS_AVX2

// Sixteen values at a time, sums in double (exact f32 → f64 widening, FMA
// for the squares), as scanAvx512 does with half the lanes, widened straight
// from memory. (Two sets of sums are enough to keep the adds pipelined; a
// third, or a second min and max, spills: AVX2 has sixteen registers.)
// `Careful`: sixteen values holding NaN or Inf go through the scalar loop.
// Otherwise no group is checked, and false is returned when one held NaN or
// Inf (p and sums untouched), which the sum of squares tells (see
// scanAvx512).
template <bool Careful>
__attribute__((target("avx2,fma"))) bool scanAvx2(const float* v, uint64_t n, Partial& p,
                                                  Sums& sums) {
    const __m256i expMask = _mm256_set1_epi32(0x7f800000);
    const __m256 zero = _mm256_setzero_ps();
    const __m256d shift = _mm256_set1_pd(p.shift);
    __m256 vmin = _mm256_set1_ps(std::numeric_limits<float>::infinity());
    __m256 vmax = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    __m256i zeros = _mm256_setzero_si256(); // per lane, at most kBlock / 8
    __m256d s[2], ss[2], sq[2];
    for (int k = 0; k < 2; ++k)
        s[k] = ss[k] = sq[k] = _mm256_setzero_pd();
    const uint64_t whole = n - n % 16;
    for (uint64_t i = 0; i < whole; i += 16) {
        const __m256 x = _mm256_loadu_ps(v + i), y = _mm256_loadu_ps(v + i + 8);
        if constexpr (Careful) {
            // NaN or ±Inf: the exponent all ones.
            const __m256i ex = _mm256_and_si256(_mm256_castps_si256(x), expMask);
            const __m256i ey = _mm256_and_si256(_mm256_castps_si256(y), expMask);
            const __m256i any =
                _mm256_or_si256(_mm256_cmpeq_epi32(ex, expMask), _mm256_cmpeq_epi32(ey, expMask));
            if (!_mm256_testz_si256(any, any)) {
                scanScalar(v, i, i + 16, p, sums);
                continue;
            }
        }
        zeros = _mm256_sub_epi32(zeros, _mm256_castps_si256(_mm256_cmp_ps(x, zero, _CMP_EQ_OQ)));
        zeros = _mm256_sub_epi32(zeros, _mm256_castps_si256(_mm256_cmp_ps(y, zero, _CMP_EQ_OQ)));
        vmin = _mm256_min_ps(vmin, _mm256_min_ps(x, y));
        vmax = _mm256_max_ps(vmax, _mm256_max_ps(x, y));
        for (int k = 0; k < 4; ++k) {
            const __m256d d = _mm256_cvtps_pd(_mm_loadu_ps(v + i + 4 * k));
            const __m256d c = _mm256_sub_pd(d, shift);
            s[k % 2] = _mm256_add_pd(s[k % 2], c);
            ss[k % 2] = _mm256_fmadd_pd(c, c, ss[k % 2]);
            sq[k % 2] = _mm256_fmadd_pd(d, d, sq[k % 2]);
        }
    }
    const __m256d sqAll = _mm256_add_pd(sq[0], sq[1]);
    if (!Careful) {
        const __m256d inf = _mm256_set1_pd(std::numeric_limits<double>::infinity());
        // NaN or ±Inf: not below +Inf (the squares are never negative).
        if (_mm256_movemask_pd(_mm256_cmp_pd(sqAll, inf, _CMP_NLT_UQ)))
            return false;
    }
    scanScalar(v, whole, n, p, sums);

    alignas(32) float mins[8], maxs[8];
    alignas(32) uint32_t zeroLanes[8];
    _mm256_store_ps(mins, vmin);
    _mm256_store_ps(maxs, vmax);
    _mm256_store_si256(reinterpret_cast<__m256i*>(zeroLanes), zeros);
    for (int k = 0; k < 8; ++k) {
        p.min = std::min(p.min, mins[k]);
        p.max = std::max(p.max, maxs[k]);
        p.zeros += zeroLanes[k];
    }
    sums.s[0] += hsum(_mm256_add_pd(s[0], s[1]));
    sums.ss[0] += hsum(_mm256_add_pd(ss[0], ss[1]));
    sums.sq[0] += hsum(sqAll);
    return true;
}

CKPTSCOPE_AVX512_BEGIN

// Sixteen values at a time, as scanAvx2 (sums in double), with twice the
// lanes. `Careful`: a group holding NaN or Inf goes through the scalar loop.
// Otherwise no group is checked, and false is returned when one held NaN or
// Inf (then p and sums are untouched): the sum of squares says so, since
// the square of a finite f32 is finite in double and so is any block's sum
// of them, while NaN or Inf anywhere leaves it NaN or Inf.
template <bool Careful>
CKPTSCOPE_AVX512 bool scanAvx512(const float* v, uint64_t n, Partial& p, Sums& sums) {
    const __m512d shift = _mm512_set1_pd(p.shift);
    const __m512i one = _mm512_set1_epi32(1);
    __m512 vmin = _mm512_set1_ps(std::numeric_limits<float>::infinity());
    __m512 vmax = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    __m512i zeros = _mm512_setzero_si512(); // per lane, at most kBlock / 16
    __m512d s0 = _mm512_setzero_pd(), s1 = s0, ss0 = s0, ss1 = s0, sq0 = s0, sq1 = s0;
    const uint64_t whole = n - n % 16;
    for (uint64_t i = 0; i < whole; i += 16) {
        // 2 KiB ahead: values scanned through a file map come from memory,
        // and the hardware prefetcher stops at each 4 KiB page.
        _mm_prefetch(reinterpret_cast<const char*>(v + i + 512), _MM_HINT_T0);
        const __m512 x = _mm512_loadu_ps(v + i);
        if (Careful && _mm512_fpclass_ps_mask(x, 0x99)) { // quiet or signalling NaN, ±Inf
            scanScalar(v, i, i + 16, p, sums);
            continue;
        }
        zeros = _mm512_mask_add_epi32(zeros, _mm512_fpclass_ps_mask(x, 0x06), zeros, one); // ±0
        vmin = _mm512_min_ps(vmin, x);
        vmax = _mm512_max_ps(vmax, x);
        // Widened from memory, no lane extraction (maskz forms: GCC 12 warns
        // of the plain ones' undefined operand).
        const __m512d d0 = _mm512_maskz_cvtps_pd(0xff, _mm256_loadu_ps(v + i));
        const __m512d d1 = _mm512_maskz_cvtps_pd(0xff, _mm256_loadu_ps(v + i + 8));
        const __m512d c0 = _mm512_sub_pd(d0, shift);
        const __m512d c1 = _mm512_sub_pd(d1, shift);
        s0 = _mm512_add_pd(s0, c0);
        s1 = _mm512_add_pd(s1, c1);
        ss0 = _mm512_fmadd_pd(c0, c0, ss0);
        ss1 = _mm512_fmadd_pd(c1, c1, ss1);
        sq0 = _mm512_fmadd_pd(d0, d0, sq0);
        sq1 = _mm512_fmadd_pd(d1, d1, sq1);
    }
    const __m512d sq = _mm512_add_pd(sq0, sq1);
    if (!Careful && _mm512_fpclass_pd_mask(sq, 0x99))
        return false;
    scanScalar(v, whole, n, p, sums);
    const auto add = [](auto x, auto y) { return x + y; };
    p.min =
        std::min(p.min, combineLanes<float>(vmin, [](float x, float y) { return std::min(x, y); }));
    p.max =
        std::max(p.max, combineLanes<float>(vmax, [](float x, float y) { return std::max(x, y); }));
    p.zeros += combineLanes<uint32_t>(zeros, add);
    sums.s[0] += combineLanes<double>(_mm512_add_pd(s0, s1), add);
    sums.ss[0] += combineLanes<double>(_mm512_add_pd(ss0, ss1), add);
    sums.sq[0] += combineLanes<double>(sq, add);
    return true;
}

CKPTSCOPE_AVX512_END

#endif // CKPTSCOPE_STATS_AVX2

} // namespace

Partial scanBlock(const float* v, uint64_t n, Kernel kernel) {
    uint64_t i = 0;
    while (i < n && !std::isfinite(valueAt(v, i)))
        ++i;
    return scanBlockShifted(v, n, i < n ? double(valueAt(v, i)) : 0.0, kernel);
}

Partial scanBlockShifted(const float* v, uint64_t n, double shift, Kernel kernel) {
    Partial p;
    p.n = n;
    p.shift = shift;
    Sums sums;
#ifdef CKPTSCOPE_STATS_AVX2
    if (kernel == Kernel::Auto && useAvx512()) {
        if (!scanAvx512<false>(v, n, p, sums)) // NaN or Inf in the block: rare
            scanAvx512<true>(v, n, p, sums);
    } else if (kernel != Kernel::Scalar && useAvx2()) {
        if (!scanAvx2<false>(v, n, p, sums)) // NaN or Inf in the block: rare
            scanAvx2<true>(v, n, p, sums);
    } else
#endif
        scanScalar(v, 0, n, p, sums);
    p.finite = n - p.nan - p.posInf - p.negInf;
    p.sumShifted = (sums.s[0] + sums.s[1]) + (sums.s[2] + sums.s[3]);
    p.sumSqShifted = (sums.ss[0] + sums.ss[1]) + (sums.ss[2] + sums.ss[3]);
    p.sumSq = (sums.sq[0] + sums.sq[1]) + (sums.sq[2] + sums.sq[3]);
    p.sum = p.sumShifted + double(p.finite) * p.shift;
    return p;
}

void addShifted(Partial& p, const Partial& q) {
    p.n += q.n;
    p.finite += q.finite;
    p.nan += q.nan;
    p.posInf += q.posInf;
    p.negInf += q.negInf;
    p.zeros += q.zeros;
    p.min = std::min(p.min, q.min);
    p.max = std::max(p.max, q.max);
    p.sum += q.sum;
    p.sumShifted += q.sumShifted;
    p.sumSqShifted += q.sumSqShifted;
    p.sumSq += q.sumSq;
}

void setMoments(TensorStats& s, double sum, double sumSq, double min, double max, double mean,
                double m2) {
    s.finiteSum = sum;
    s.l2 = std::sqrt(sumSq);
    if (s.finite == 0)
        return;
    // A zero extreme as +0: which zero a kernel or thread meets first varies.
    s.min = min == 0 ? 0.0 : min;
    s.max = max == 0 ? 0.0 : max;
    s.mean = mean;
    s.std = std::sqrt(std::max(0.0, m2) / double(s.finite));
}

} // namespace ckptscope::stats
