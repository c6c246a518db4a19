#include "common/simd.h"

#include <cstdlib>
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
#else
bool useAvx2() {
    return false;
}
bool useAvx512() {
    return false;
}
#endif

} // namespace ckptscope::simd
