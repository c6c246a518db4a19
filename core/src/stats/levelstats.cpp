// levelStats: a Q1_0 tensor's values are ±d per block, d one of 2^16 f16
// patterns, so the whole tensor is a tally: per scale pattern, the blocks
// with it and their set bits. One pass over the bytes tallies (integer sums:
// the same whatever the thread count); the statistics and the histogram are
// then computed over at most 2^17 levels.
#include "stats/levelstats.h"

#include "formats/gguf/ggmllevels.h"
#include "stats/blockworkers.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace ckptscope::stats {

using namespace simd; // useAvx2, useAvx512 and the lane helpers

namespace {

using Q1 = gguf::levels::Q1_0;

// Blocks read at a time by a worker: about 1 MiB.
constexpr uint64_t kReadBlocks = uint64_t(1) << 16;

struct ScaleTally {
    uint64_t blocks = 0, set = 0;
};
// Resets the patterns [lo, hi] of a table and the bounds.
template <class T> void clearSeen(std::vector<T>& by, uint32_t& lo, uint32_t& hi) {
    for (uint32_t d = lo; d <= hi && d < by.size(); ++d)
        by[d] = {};
    lo = UINT32_MAX;
    hi = 0;
}
// Indexed by the f16 pattern of d; [lo, hi] bounds the patterns seen, so a
// small tensor's tally is merged, read and cleared over its few patterns only.
struct Tally {
    std::vector<ScaleTally> by = std::vector<ScaleTally>(size_t(1) << 16);
    uint32_t lo = UINT32_MAX, hi = 0;
    void clear() { clearSeen(by, lo, hi); }
};

// A worker's tally: per pattern one word, blocks << 40 | set bits, so a
// block is one add and the table (512 KiB) stays in L2, where two words a
// pattern did not (the loop measured 3.5x faster). Folded into a Tally
// before its block counts could reach bit 24 (kFoldBlocks; set bits then
// stay below 2^31).
struct PackedTally {
    static constexpr int kShift = 40;
    static_assert(kFoldBlocks < uint64_t(1) << 24);
    std::vector<uint64_t> by = std::vector<uint64_t>(size_t(1) << 16);
    uint32_t lo = UINT32_MAX, hi = 0;
    uint64_t blocks = 0; // since the last fold
    void foldInto(Tally& total) {
        for (uint32_t d = lo; d <= hi && d < by.size(); ++d) {
            total.by[d].blocks += by[d] >> kShift;
            total.by[d].set += by[d] & ((uint64_t(1) << kShift) - 1);
        }
        total.lo = std::min(total.lo, lo);
        total.hi = std::max(total.hi, hi);
        clear();
    }
    void clear() {
        clearSeen(by, lo, hi);
        blocks = 0;
    }
};

// Clears a tally when its user leaves, normally or by an exception.
template <class T> struct ClearTally {
    T& tally;
    ~ClearTally() { tally.clear(); }
};

void tallyBlocks(const uint8_t* raw, uint64_t blocks, PackedTally& tally) {
    uint32_t lo = tally.lo, hi = tally.hi;
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = raw + b * Q1::kBytes;
        const uint16_t d = Q1::scale(block);
        tally.by[d] += (uint64_t(1) << PackedTally::kShift) + Q1::setBits(block);
        lo = std::min<uint32_t>(lo, d);
        hi = std::max<uint32_t>(hi, d);
    }
    tally.lo = lo;
    tally.hi = hi;
    tally.blocks += blocks;
}

#ifdef CKPTSCOPE_STATS_AVX2
// The same loop with the popcnt instruction (every AVX2 CPU has it).
__attribute__((target("avx2,popcnt"), flatten)) void
tallyBlocksAvx2(const uint8_t* raw, uint64_t blocks, PackedTally& tally) {
    tallyBlocks(raw, blocks, tally);
}
#endif

struct Level {
    float value;
    uint64_t count;
};

// The levels of the tally with their counts, in pattern order.
std::vector<Level> levelsOf(const Tally& tally) {
    std::vector<Level> levels;
    for (uint32_t d = tally.lo; d <= tally.hi && d < tally.by.size(); ++d) {
        const ScaleTally& t = tally.by[d];
        if (t.blocks == 0)
            continue;
        const uint64_t all = t.blocks * Q1::kElements;
        if (t.set)
            levels.push_back({Q1::high(uint16_t(d)), t.set});
        if (all > t.set)
            levels.push_back({Q1::low(uint16_t(d)), all - t.set});
    }
    return levels;
}

// Counts, extremes and moments (two passes over the levels: the mean, then
// M2 about it), as computeStats defines them.
void momentsOf(const std::vector<Level>& levels, TensorStats& s) {
    float mn = std::numeric_limits<float>::infinity(), mx = -mn;
    double sum = 0, sumSq = 0;
    for (const Level& l : levels) {
        if (std::isnan(l.value)) {
            s.nan += l.count;
            continue;
        }
        if (std::isinf(l.value)) {
            (l.value > 0 ? s.posInf : s.negInf) += l.count;
            continue;
        }
        const double x = l.value, n = double(l.count);
        s.finite += l.count;
        s.zeros += l.value == 0.0f ? l.count : 0;
        mn = std::min(mn, l.value);
        mx = std::max(mx, l.value);
        sum += n * x;
        sumSq += n * (x * x);
    }
    const double mean = s.finite ? sum / double(s.finite) : 0.0;
    double m2 = 0;
    for (const Level& l : levels)
        if (std::isfinite(l.value))
            m2 += double(l.count) * ((double(l.value) - mean) * (double(l.value) - mean));
    setMoments(s, sum, sumSq, mn, mx, mean, m2);
}

void histogramOf(const std::vector<Level>& levels, StatsResult& r, int bins) {
    if (bins <= 0 || r.stats.finite == 0)
        return;
    Histogram& h = r.histogram;
    h.counts.assign(size_t(bins), 0);
    h.lo = *r.stats.min;
    h.hi = *r.stats.max;
    if (!(h.hi > h.lo)) {
        h.counts[0] = r.stats.finite; // one value: everything is in bin 0
        return;
    }
    for (const Level& l : levels)
        if (std::isfinite(l.value))
            h.counts[h.binOf(l.value)] += l.count;
}

// The tally of a Q1_0 tensor into `total`, by up to options.threads workers
// each taking kReadBlocks blocks at a time into its own tally, added up at
// the end (integer sums: the same in any order).
// (Copied: scanning the bytes in place through the file's map measured 50 %
// more CPU on this VM than pread into a buffer; docs/PERFORMANCE.md.)
void tallyQ1(uint64_t count, const RawReader& read, const StatsOptions& options, bool wide,
             uint64_t foldBlocks, Tally& total) {
    const uint64_t blocks = count / Q1::kElements;
    const uint64_t reads = (blocks + kReadBlocks - 1) / kReadBlocks;
    std::mutex mutex;
    std::atomic<uint64_t> next{0}, done{0};
    runOnThreads(workerCount(options.threads, reads), [&](unsigned) {
        // Kept clear between tensors: 512 KiB, not zeroed per call.
        thread_local PackedTally tally;
        const ClearTally<PackedTally> clear{tally};
        // Kept between tensors: a fresh one per tensor (a model has hundreds)
        // cost the page faults and zeroing of a megabyte each time.
        thread_local std::vector<uint8_t> raw;
        raw.resize(std::max(raw.size(), size_t(std::min(blocks, kReadBlocks) * Q1::kBytes)));
        for (uint64_t k; (k = next.fetch_add(1)) < reads;) {
            options.throwIfCancelled();
            const uint64_t first = k * kReadBlocks, n = std::min(kReadBlocks, blocks - first);
            read(first * Q1::kElements, n * Q1::kElements, raw.data());
            if (tally.blocks + n > foldBlocks) {
                std::lock_guard lock(mutex);
                tally.foldInto(total);
            }
#ifdef CKPTSCOPE_STATS_AVX2
            if (wide)
                tallyBlocksAvx2(raw.data(), n, tally);
            else
#endif
                tallyBlocks(raw.data(), n, tally);
            options.report(0.99 * double(done.fetch_add(1) + 1) / double(reads));
        }
        std::lock_guard lock(mutex);
        tally.foldInto(total);
    });
    (void)wide;
}

} // namespace

bool countsLevels(Dtype dtype) {
    return dtype == Dtype::Q1_0;
}

StatsResult levelStats(Dtype dtype, uint64_t count, const RawReader& read,
                       const StatsOptions& options, Kernel kernel, uint64_t foldBlocks) {
    if (dtype != Dtype::Q1_0)
        throw std::logic_error("levelStats: a type not counted by levels");
    bool wide = false;
#ifdef CKPTSCOPE_STATS_AVX2
    wide = kernel != Kernel::Scalar && useAvx2();
#else
    (void)kernel;
#endif
    thread_local Tally total; // as the workers' tallies: cleared, not allocated, per call
    std::vector<Level> levels;
    {
        const ClearTally<Tally> clear{total};
        tallyQ1(count, read, options, wide, std::min(foldBlocks, kFoldBlocks), total);
        levels = levelsOf(total);
    }
    StatsResult r;
    r.stats.count = count;
    momentsOf(levels, r.stats);
    histogramOf(levels, r, options.bins);
    options.report(1.0);
    return r;
}

} // namespace ckptscope::stats
