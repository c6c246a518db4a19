#pragma once

#include "ckptscope/formats/dtype.h"
#include "ckptscope/stats/tensorstats.h"

#include "stats/bincounter.h"
#include "stats/integerstats.h"
#include "stats/statskernels.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>

// The statistics of a Q4_K tensor from its codes, without decoding a value.
// Pass 1: a sub-block's 32 values are d1 * q - m1 for 4-bit codes q, so its
// sum and M2 follow from the sums of q and q² (M2 = d1² (32 Σq² - (Σq)²) / 32,
// exact in double), its extremes from the least and greatest code. This holds
// when every d1 * q - m1 is exact in f32 (nearly always: d1 and m1 carry 17
// bits); other super-blocks (and non-finite scales) are decoded and scanned.
// Pass 2, the histogram, bins each sub-block's sixteen levels once and each
// code by its level's bin (q4kbinner.h, with AVX-512 or AVX2 and F16C;
// counters past 4096 bins, or of values anywhere, take decoded values).
// The same results as computeStats over the decoded values: counts,
// extremes and histogram bit for bit, sums up to their rounding order.
namespace ckptscope::stats {

// True for the types whose statistics come from codes on this CPU (Q4_K,
// with AVX-512 or AVX2; Q5_K, pass 1 only, with AVX2, as Q4_K's with a
// fifth bit per code; Q8_0, Q4_0, Q6_K, Q3_K and Q2_K, pass 1 only, with AVX2:
// blocksums.h).
bool sumsCodes(Dtype dtype);

// Extremes already found in a tensor's other blocks (by any thread).
struct SeenExtremes {
    std::atomic<float> min{std::numeric_limits<float>::infinity()};
    std::atomic<float> max{-std::numeric_limits<float>::infinity()};
    void offer(float lo, float hi);
};

// The Partial of `superBlocks` whole Q4_K super-blocks at `raw`, its sums
// shifted by the first finite value. Kernel::Scalar: no vector code. With
// `seen`, a sub-block's codes are looked at for its extremes only when it
// could pass those: the Partial's min and max may then be values found in
// other blocks of the tensor (merged, the tensor's extremes all the same).
Partial q4KPartial(const uint8_t* raw, uint64_t superBlocks, Kernel kernel = Kernel::Auto,
                   SeenExtremes* seen = nullptr);

// Precondition: dtype Q4_K, Q5_K, Q8_0, Q4_0, Q6_K, Q3_K or Q2_K, count a whole number of its
// (super-)blocks; `raw` gives the stored bytes, `values` the decoded ones.
StatsResult codeSumStats(Dtype dtype, uint64_t count, const RawReader& raw,
                         const ValueReader& values, const StatsOptions& options,
                         Kernel kernel = Kernel::Auto);

// The two passes of computeStats over blocks of `block` values (a multiple
// of kBlock) with pass 1's Partial of values [first, first + n) (whole
// blocks, the last one shorter) from `pass1`, and pass 2's counting by
// `pass2` where it returns true, else of the decoded values
// (tensorstats.cpp).
using PartialScanner = std::function<Partial(uint64_t first, uint64_t n)>;
using BlockBinner = std::function<bool(uint64_t first, uint64_t n, BinCounter<float>& counter)>;
StatsResult computeStatsScanned(uint64_t count, const ValueReader& values,
                                const PartialScanner& pass1, const BlockBinner* pass2,
                                const StatsOptions& options, uint64_t block = kBlock);

} // namespace ckptscope::stats
