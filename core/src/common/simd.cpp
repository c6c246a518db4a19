#include "common/simd.h"

#include <cstdlib>
#ifdef CKPTSCOPE_STATS_AVX2
#include <cpuid.h>
#endif
#include <cstring>

namespace ckptscope::simd {

#ifdef CKPTSCOPE_STATS_AVX2
bool useAvx2() {
    static const bool use = [] {
        const char* env = std::getenv("CKPTSCOPE_SIMD"); // "0": scalar loops (testing)
        if (env && std::strcmp(env, "0") == 0)
            return false;
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }();
    return use;
}

bool useAvx512() {
    static const bool use = [] {
        const char* env = std::getenv("CKPTSCOPE_SIMD");
        if (env && std::strcmp(env, "avx2") == 0)
            return false;
        __builtin_cpu_init();
        return useAvx2() && __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl");
    }();
    return use;
}

// CPUID leaf 1, ECX bit 29: clang 14's __builtin_cpu_supports does not know
// "f16c" (a compile error in the fuzz build).
bool useF16C() {
    static const bool use = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return useAvx2() && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
    }();
    return use;
}
#else
bool useAvx2() {
    return false;
}
bool useAvx512() {
    return false;
}
bool useF16C() {
    return false;
}
#endif

} // namespace ckptscope::simd
