#include "optimizer/updatekernels.h"

#include "common/simd.h"

#include <algorithm>
#include <cmath>

namespace ckptscope::optimizer {

namespace {

void addOne(double u, double m, const float* w, size_t i, UpdateSums& s) {
    s.u2 += u * u;
    s.umax = std::max(s.umax, std::abs(u));
    s.nan = s.nan || std::isnan(u);
    s.m2 += m * m;
    if (w)
        s.w2 += double(w[i]) * w[i];
}

void adamPlain(const float* m, const float* v, const float* w, size_t n, double a, double b,
               double eps, UpdateSums& s) {
    for (size_t i = 0; i < n; ++i) {
        addOne(a * m[i] / (std::sqrt(b * v[i]) + eps), m[i], w, i, s);
        s.v += v[i];
    }
}

#ifdef CKPTSCOPE_STATS_AVX2
// Four lanes in double; the same operations as adamPlain in each lane.
__attribute__((target("avx2,fma"))) void adamAvx2(const float* m, const float* v, const float* w,
                                                  size_t n, double a, double b, double eps,
                                                  UpdateSums& s) {
    const __m256d va = _mm256_set1_pd(a), vb = _mm256_set1_pd(b), veps = _mm256_set1_pd(eps);
    const __m256d absMask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    __m256d u2 = _mm256_setzero_pd(), umax = _mm256_setzero_pd(), m2 = _mm256_setzero_pd(),
            vs = _mm256_setzero_pd(), w2 = _mm256_setzero_pd(), nan = _mm256_setzero_pd();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const __m256d mm = _mm256_cvtps_pd(_mm_loadu_ps(m + i));
        const __m256d vv = _mm256_cvtps_pd(_mm_loadu_ps(v + i));
        const __m256d u = _mm256_div_pd(_mm256_mul_pd(va, mm),
                                        _mm256_add_pd(_mm256_sqrt_pd(_mm256_mul_pd(vb, vv)), veps));
        u2 = _mm256_fmadd_pd(u, u, u2);
        umax = _mm256_max_pd(umax, _mm256_and_pd(u, absMask));
        nan = _mm256_or_pd(nan, _mm256_cmp_pd(u, u, _CMP_UNORD_Q));
        m2 = _mm256_fmadd_pd(mm, mm, m2);
        vs = _mm256_add_pd(vs, vv);
        if (w) {
            const __m256d ww = _mm256_cvtps_pd(_mm_loadu_ps(w + i));
            w2 = _mm256_fmadd_pd(ww, ww, w2);
        }
    }
    // The lanes, summed in one order (as adamPlain's would be, lane by lane).
    alignas(32) double lanes[5][4];
    _mm256_store_pd(lanes[0], u2);
    _mm256_store_pd(lanes[1], umax);
    _mm256_store_pd(lanes[2], m2);
    _mm256_store_pd(lanes[3], vs);
    _mm256_store_pd(lanes[4], w2);
    const auto sum = [](const double* d) { return (d[0] + d[1]) + (d[2] + d[3]); };
    s.u2 += sum(lanes[0]);
    s.umax = std::max({s.umax, lanes[1][0], lanes[1][1], lanes[1][2], lanes[1][3]});
    s.nan = s.nan || _mm256_movemask_pd(nan) != 0;
    s.m2 += sum(lanes[2]);
    s.v += sum(lanes[3]);
    s.w2 += sum(lanes[4]);
    adamPlain(m + i, v + i, w ? w + i : nullptr, n - i, a, b, eps, s);
}
#endif

} // namespace

void addAdamSums(const float* m, const float* v, const float* w, size_t n, double a, double b,
                 double eps, UpdateSums& sums) {
#ifdef CKPTSCOPE_STATS_AVX2
    if (simd::useAvx2())
        return adamAvx2(m, v, w, n, a, b, eps, sums);
#endif
    adamPlain(m, v, w, n, a, b, eps, sums);
}

void addSgdSums(const float* m, const float* w, size_t n, double lr, UpdateSums& sums) {
    for (size_t i = 0; i < n; ++i)
        addOne(lr * m[i], m[i], w, i, sums);
}

} // namespace ckptscope::optimizer
