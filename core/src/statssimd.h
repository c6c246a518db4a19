#pragma once

// Whether the statistics may use AVX2 (x86-64 with GCC or Clang: chosen at
// run time by useAvx2()).
#if defined(__x86_64__) && defined(__GNUC__)
#define CKPTSCOPE_STATS_AVX2 1

namespace ckptscope::stats {
// AVX2 + FMA on this CPU, and not turned off by CKPTSCOPE_SIMD=0.
bool useAvx2();
} // namespace ckptscope::stats
#endif
