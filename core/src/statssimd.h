#pragma once

// Whether the statistics and the comparison may use AVX2 (x86-64 with GCC or Clang: chosen at
// run time by useAvx2()).
#if defined(__x86_64__) && defined(__GNUC__)
#define CKPTSCOPE_STATS_AVX2 1

#include <immintrin.h>

namespace ckptscope::stats {
// AVX2 + FMA on this CPU, and not turned off by CKPTSCOPE_SIMD=0. The
// statistics and the comparison (elementdiff.cpp) both ask this.
bool useAvx2();

// The sum of the four lanes.
__attribute__((target("avx2,fma"))) inline double hsum(__m256d x) {
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(x), _mm256_extractf128_pd(x, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}
} // namespace ckptscope::stats
#endif
