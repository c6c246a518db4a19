#pragma once

#include "stats/statskernels.h"

#include "ckptscope/stats/tensorstats.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

// The one histogram counter: exactly Histogram::binOf's bins, vectorised, for
// float values (statistics, the compare view's overlays) and double values
// (F64 statistics, a comparison's differences).
namespace ckptscope::stats {

struct SlicedBins;

// Where the counted values lie: within [h.lo, h.hi] (a histogram of their
// own range: statistics, differences), or anywhere (a range given by the
// caller; values outside go to the end bins, as binOf puts them). The
// bit-sliced paths (AVX-512 and AVX2), AVX-512 Lanes and the Q4_K binners
// from codes (q4kbinner.h) bin only values within the range.
enum class Spread { InRange, Anywhere };

// How a BinCounter counts. Scalar: plain loop; Pairs (float, values
// anywhere, bins ≤ 64), Lanes (float, more bins): small counters in tables,
// added to `counts` by flush(); Direct (double, AVX2): four at a time into
// `counts`; Sliced (values in range; bins ≤ 128 by AVX-512, float or
// double, ≤ 96 by AVX2, float): SlicedBins.
enum class BinMode { Scalar, Pairs, Lanes, Direct, Sliced };

// Histogram counting for one worker. The counts are Histogram::binOf's; the
// vector paths compute the same bins faster and hand every value whose bin
// they cannot vouch for to binOf. Non-finite values are not counted.
template <typename T> struct BinCounter {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);

    const Histogram& h;
    size_t bins;
    std::vector<uint64_t> counts; // the result, bins entries

    using Mode = BinMode;
    Mode mode = Mode::Scalar;
    unsigned shift = 0;          // Pairs: bins ≤ 2^shift
    std::vector<uint32_t> small; // Pairs: 2 tables of 4^shift; Lanes: `tables` of bins
    unsigned tables = 8;         // Lanes: lane k counts in table k % tables
    // Lanes: where the table of vector lane k (of 8 or 16) starts in `small`.
    int32_t laneTable(unsigned k) const { return int32_t(k % 8 % tables * bins); }
    std::unique_ptr<SlicedBins> sliced; // Sliced
    uint64_t pending = 0;               // values counted in `small` since the last flush
    T lo = 0, scale = 0, guard = 0;
    Kernel kernel = Kernel::Auto;
    bool lanes512 = false; // Lanes by AVX-512 (bins values within the range only)
    bool inRange = false;  // Spread::InRange: every value lies within [lo, hi] (vector modes)

    // Kernel::Scalar: no vector code (float: binOf for every value);
    // Kernel::Avx2: never AVX-512 (tests compare them).
    // `expected`: about how many values it will count. Lanes mode counts
    // in eight tables, so that runs of one bin (a tensor of zeros) do not
    // wait on each other's increments; for fewer than 16 values a bin it
    // takes one (clearing and adding up eight cost more than the counting:
    // 50 000 tensors of 335 values in 1 000 bins).
    explicit BinCounter(const Histogram& histogram, Kernel kernel = Kernel::Auto,
                        Spread spread = Spread::InRange, uint64_t expected = UINT64_MAX);
    ~BinCounter();

    // binOf(v) for a finite v. Doubles by one multiplication, checked: a
    // position within `guard` of a bin edge (far beyond the few ulps the two
    // ways of computing can differ) or outside the bins goes to binOf.
    size_t binOf(T v) const {
        if constexpr (std::is_same_v<T, float>) {
            return h.binOf(v);
        } else {
            const double pos = (v - lo) * scale;
            if (!(pos >= 0) || !(pos < double(bins)))
                return h.binOf(v);
            const auto whole = size_t(pos);
            const double frac = pos - double(whole);
            return frac < guard || frac > 1.0 - guard ? h.binOf(v) : whole;
        }
    }

    void addScalar(const T* v, uint64_t from, uint64_t to) {
        for (uint64_t i = from; i < to; ++i) {
            const T f = valueAt(v, i);
            if (std::isfinite(f))
                ++counts[binOf(f)];
        }
    }
    // The values v[i + k] for the set bits k of `lanes`, by binOf.
    void addLanes(const T* v, uint64_t i, uint32_t lanes) {
        for (; lanes; lanes &= lanes - 1) {
            const T f = valueAt(v, i + unsigned(__builtin_ctz(lanes)));
            if (std::isfinite(f))
                ++counts[binOf(f)];
        }
    }

    // Counts v[0..n).
    void add(const T* v, uint64_t n);
    // Moves what the small counters hold into `counts`.
    void flush();
    // Adds the counts to out[0..bins).
    void mergeInto(std::vector<uint64_t>& out);
};

// Per value type (bincounter.cpp).
template <> BinCounter<float>::BinCounter(const Histogram&, Kernel, Spread, uint64_t);
template <> BinCounter<double>::BinCounter(const Histogram&, Kernel, Spread, uint64_t);
template <> void BinCounter<float>::add(const float* v, uint64_t n);
template <> void BinCounter<double>::add(const double* v, uint64_t n);

extern template struct BinCounter<float>;
extern template struct BinCounter<double>;

#ifdef CKPTSCOPE_STATS_AVX2
// The float counter's positions with AVX2, eight values at a time: q = (x −
// lo) × scale + guard in one FMA, the bin trunc(q). A lane whose fraction q
// − trunc(q) is below twice the guard (within the guard of an edge; v = lo,
// v = hi, NaN) must go to binOf instead. Its bit counting (bincounter.cpp)
// and the Q4_K levels binned once (q4kbinner.cpp) share it, so that a
// level's bin is the one its decoded value would get.
struct FloatPositions8 {
    __m256 lo, scale, guard, twoGuards;

    __attribute__((target("avx2"))) explicit FloatPositions8(const BinCounter<float>& c)
        : lo(_mm256_set1_ps(c.lo)), scale(_mm256_set1_ps(c.scale)), guard(_mm256_set1_ps(c.guard)),
          twoGuards(_mm256_set1_ps(2 * c.guard)) {}

    // The bins of x; `near` gets a bit per lane that needs binOf.
    __attribute__((target("avx2,fma"), always_inline)) inline __m256i bins(__m256 x,
                                                                           int& near) const {
        const __m256 q = _mm256_fmadd_ps(_mm256_sub_ps(x, lo), scale, guard);
        const __m256 fraction =
            _mm256_sub_ps(q, _mm256_round_ps(q, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
        near = _mm256_movemask_ps(_mm256_cmp_ps(fraction, twoGuards, _CMP_NGE_UQ));
        return _mm256_cvttps_epi32(q);
    }
};
#endif

} // namespace ckptscope::stats
