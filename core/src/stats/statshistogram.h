#pragma once

#include "stats/statskernels.h"

#include "ckptscope/stats/tensorstats.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

// Histogram counting with exactly Histogram::binOf's bins, vectorised.
namespace ckptscope::stats {

struct SlicedBins;

// Histogram counting for one worker. Exact counts are Histogram::binOf's;
// the vector paths compute the same bins faster and hand every value whose
// bin they cannot vouch for to binOf.
struct BinCounter {
    const Histogram& h;
    size_t bins;
    std::vector<uint64_t> counts; // the result, bins entries

    // Vector paths: small counters, added to `counts` by flush().
    enum class Mode { Scalar, Pairs, Lanes, Sliced } mode = Mode::Scalar;
    unsigned shift = 0;                 // Pairs: bins ≤ 2^shift
    std::vector<uint32_t> small;        // Pairs: 2 tables of 4^shift; Lanes: 8 tables of bins
    std::unique_ptr<SlicedBins> sliced; // Sliced (AVX-512, bins ≤ 64)
    uint64_t pending = 0;               // values counted in `small` since the last flush
    float lo = 0, scale = 0, guard = 0;
    Kernel kernel = Kernel::Auto;

    // Kernel::Scalar: binOf for every value; Kernel::Avx2: never AVX-512
    // (tests compare them).
    BinCounter(const Histogram& histogram, size_t n, Kernel kernel = Kernel::Auto);
    ~BinCounter();

    void addScalar(const float* v, uint64_t from, uint64_t to) {
        for (uint64_t i = from; i < to; ++i) {
            const float f = valueAt(v, i);
            if (std::isfinite(f))
                ++counts[h.binOf(f)];
        }
    }

    void add(const float* v, uint64_t n);
    // The values v[i + k] for the set bits k of `lanes`, by binOf.
    void addLanes(const float* v, uint64_t i, uint32_t lanes) {
        for (; lanes; lanes &= lanes - 1) {
            const float f = valueAt(v, i + unsigned(__builtin_ctz(lanes)));
            if (std::isfinite(f))
                ++counts[h.binOf(f)];
        }
    }

    void flush();
    void mergeInto(std::vector<uint64_t>& out);
};

} // namespace ckptscope::stats
