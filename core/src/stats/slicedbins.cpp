#include "stats/slicedbins.h"

#ifdef CKPTSCOPE_STATS_AVX2

#include <cstring>

namespace ckptscope::stats {

SlicedBins::SlicedBins(unsigned n, bool isWide) : bins(n), streams((n + 31) / 32), wide(isWide) {}

void addBits(const uint32_t* vector, uint64_t weight, uint64_t* counts) {
    for (unsigned lane = 0; lane < 16; ++lane)
        for (uint32_t bits = vector[lane]; bits; bits &= bits - 1)
            counts[__builtin_ctz(bits)] += weight;
}

void SlicedBins::drainInto(uint64_t* out) {
    for (unsigned g = 0; g < streams; ++g) {
        uint64_t* const c = counts + 32 * g;
        for (unsigned k = 0; k < held; ++k)
            addBits(sixteens[g][k], 16, c);
        for (unsigned j = 0; j < 4; ++j) {
            addBits(level1[g][j], uint64_t(1) << j, c);
            addBits(level2[g][j], uint64_t(16) << j, c);
        }
    }
    held = 0;
    std::memset(level1, 0, sizeof level1);
    std::memset(level2, 0, sizeof level2);
    for (unsigned k = 0; k < bins; ++k) {
        out[k] += counts[k];
        counts[k] = 0;
    }
}

} // namespace ckptscope::stats

#endif // CKPTSCOPE_STATS_AVX2
