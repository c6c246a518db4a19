#include "ckptscope/tensorstats.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>

#if defined(__x86_64__) && defined(__GNUC__)
#define CKPTSCOPE_STATS_AVX2 1
#include <immintrin.h>
#endif

namespace ckptscope {

namespace {

// Values per work unit: 256 KiB, so a block is still in the core's L2 cache
// when it is scanned right after being read. The partition into blocks does
// not depend on the thread count, so neither does any result.
constexpr uint64_t kBlock = uint64_t(1) << 16;
// Values kept in memory between the moments pass and the histogram pass
// (64 MiB): a tensor up to this size is read from the source once. Larger
// tensors keep their first kRetainMax values and re-read the rest.
constexpr uint64_t kRetainMax = uint64_t(16) << 20;

// Partial results of one block. Moments are kept as sums of (x - shift) so
// that large offsets do not cancel catastrophically in double.
struct Partial {
    uint64_t n = 0, finite = 0, nan = 0, posInf = 0, negInf = 0, zeros = 0;
    float min = std::numeric_limits<float>::infinity();
    float max = -std::numeric_limits<float>::infinity();
    double shift = 0, sum = 0, sumShifted = 0, sumSqShifted = 0, sumSq = 0;
};

bool isSpecial(uint32_t bits) {
    return (bits & 0x7f800000u) == 0x7f800000u; // NaN or ±Inf
}

// Sums of one block, four lanes each so the adds pipeline.
struct Sums {
    double s[4] = {}, ss[4] = {}, sq[4] = {};
};

// Values [from, to) of a block, one at a time.
void scanScalar(const float* v, uint64_t from, uint64_t to, Partial& p, Sums& sums) {
    for (uint64_t i = from; i < to; ++i) {
        const float f = v[i];
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        if (isSpecial(bits)) { // rare
            if (bits & 0x007fffffu)
                ++p.nan;
            else if (bits & 0x80000000u)
                ++p.negInf;
            else
                ++p.posInf;
            continue;
        }
        p.zeros += (f == 0.0f);
        p.min = std::min(p.min, f);
        p.max = std::max(p.max, f);
        const double d = f;
        const double c = d - p.shift;
        sums.s[i & 3] += c;
        sums.ss[i & 3] += c * c;
        sums.sq[i & 3] += d * d;
    }
}

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

__attribute__((target("avx2,fma"))) double hsum(__m256d x) {
    const __m128d lo = _mm256_castpd256_pd128(x), hi = _mm256_extractf128_pd(x, 1);
    const __m128d s = _mm_add_pd(lo, hi);
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

// Eight values at a time; a group holding NaN or Inf goes through the scalar
// loop. Sums in double (exact f32 → f64 widening, FMA for the squares).
__attribute__((target("avx2,fma"))) void scanAvx2(const float* v, uint64_t n, Partial& p,
                                                  Sums& sums) {
    const __m256i expMask = _mm256_set1_epi32(0x7f800000);
    const __m256 zero = _mm256_setzero_ps();
    const __m256d shift = _mm256_set1_pd(p.shift);
    __m256 vmin = _mm256_set1_ps(std::numeric_limits<float>::infinity());
    __m256 vmax = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    __m256i zeros = _mm256_setzero_si256(); // per lane, at most kBlock / 8
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, ss0 = s0, ss1 = s0, sq0 = s0, sq1 = s0;
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(v + i);
        const __m256i e = _mm256_and_si256(_mm256_castps_si256(x), expMask);
        const __m256i special = _mm256_cmpeq_epi32(e, expMask);
        if (!_mm256_testz_si256(special, special)) {
            scanScalar(v, i, i + 8, p, sums);
            continue;
        }
        zeros = _mm256_sub_epi32(zeros, _mm256_castps_si256(_mm256_cmp_ps(x, zero, _CMP_EQ_OQ)));
        vmin = _mm256_min_ps(vmin, x);
        vmax = _mm256_max_ps(vmax, x);
        const __m256d d0 = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
        const __m256d d1 = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
        const __m256d c0 = _mm256_sub_pd(d0, shift);
        const __m256d c1 = _mm256_sub_pd(d1, shift);
        s0 = _mm256_add_pd(s0, c0);
        s1 = _mm256_add_pd(s1, c1);
        ss0 = _mm256_fmadd_pd(c0, c0, ss0);
        ss1 = _mm256_fmadd_pd(c1, c1, ss1);
        sq0 = _mm256_fmadd_pd(d0, d0, sq0);
        sq1 = _mm256_fmadd_pd(d1, d1, sq1);
    }
    scanScalar(v, i, n, p, sums);

    alignas(32) float mins[8], maxs[8];
    alignas(32) uint32_t zeroLanes[8];
    _mm256_store_ps(mins, vmin);
    _mm256_store_ps(maxs, vmax);
    _mm256_store_si256(reinterpret_cast<__m256i*>(zeroLanes), zeros);
    for (int k = 0; k < 8; ++k) {
        p.min = std::min(p.min, mins[k]);
        p.max = std::max(p.max, maxs[k]);
        p.zeros += zeroLanes[k];
    }
    sums.s[0] += hsum(_mm256_add_pd(s0, s1));
    sums.ss[0] += hsum(_mm256_add_pd(ss0, ss1));
    sums.sq[0] += hsum(_mm256_add_pd(sq0, sq1));
}

#endif // CKPTSCOPE_STATS_AVX2

Partial scanBlock(const float* v, uint64_t n) {
    Partial p;
    p.n = n;
    uint64_t i = 0;
    while (i < n && !std::isfinite(v[i]))
        ++i;
    p.shift = i < n ? double(v[i]) : 0.0;
    Sums sums;
#ifdef CKPTSCOPE_STATS_AVX2
    if (useAvx2())
        scanAvx2(v, n, p, sums);
    else
#endif
        scanScalar(v, 0, n, p, sums);
    p.finite = n - p.nan - p.posInf - p.negInf;
    p.sumShifted = (sums.s[0] + sums.s[1]) + (sums.s[2] + sums.s[3]);
    p.sumSqShifted = (sums.ss[0] + sums.ss[1]) + (sums.ss[2] + sums.ss[3]);
    p.sumSq = (sums.sq[0] + sums.sq[1]) + (sums.sq[2] + sums.sq[3]);
    p.sum = p.sumShifted + double(p.finite) * p.shift;
    return p;
}

// Histogram counting for one worker. Exact counts are Histogram::binOf's;
// the vector paths compute the same bins faster and hand every value whose
// bin they cannot vouch for to binOf.
struct BinCounter {
    const Histogram& h;
    size_t bins;
    std::vector<uint64_t> counts; // the result, bins entries

    // Vector paths: small counters, added to `counts` by flush().
    enum class Mode { Scalar, Pairs, Lanes } mode = Mode::Scalar;
    unsigned shift = 0;          // Pairs: bins ≤ 2^shift
    std::vector<uint32_t> small; // Pairs: 2 tables of 4^shift; Lanes: 8 tables of bins
    uint64_t pending = 0;        // values counted in `small` since the last flush
    float lo = 0, scale = 0, guard = 0;

    BinCounter(const Histogram& histogram, size_t n);

    void addScalar(const float* v, uint64_t from, uint64_t to) {
        for (uint64_t i = from; i < to; ++i)
            if (std::isfinite(v[i]))
                ++counts[h.binOf(v[i])];
    }

    void add(const float* v, uint64_t n);

    void flush() {
        if (mode == Mode::Pairs) {
            // Entry (a << shift | b) counts a value in bin a and one in bin b.
            const size_t table = size_t(1) << (2 * shift);
            for (size_t t = 0; t < 2; ++t)
                for (size_t a = 0; a < bins; ++a)
                    for (size_t b = 0; b < bins; ++b) {
                        uint32_t& c = small[t * table + (a << shift | b)];
                        counts[a] += c;
                        counts[b] += c;
                        c = 0;
                    }
        } else if (mode == Mode::Lanes) {
            for (size_t t = 0; t < 8; ++t)
                for (size_t k = 0; k < bins; ++k) {
                    counts[k] += small[t * bins + k];
                    small[t * bins + k] = 0;
                }
        }
        pending = 0;
    }

    void mergeInto(std::vector<uint64_t>& out) {
        flush();
        for (size_t k = 0; k < bins; ++k)
            out[k] += counts[k];
    }
};

#ifdef CKPTSCOPE_STATS_AVX2

// Bin indices in float, eight values at a time. binOf computes
// floor((v - lo) / (hi - lo) * bins) in double; this computes
// (v - lo) * (bins / (hi - lo)) in float, which is within 1.8e-7 × bins of it
// (three float roundings). A value whose float position is within
// guard = bins × 2^-20 of a bin edge goes to binOf, so the counts are exactly
// binOf's. v == lo gives 0 in both, so bin 0 needs no check. p ≥ 0 for finite
// values, so truncation is the floor; NaN and ±Inf truncate to INT_MIN and
// leave a NaN or infinite fraction, which sends them to binOf's loop too.
struct Binned {
    __m256i bin;  // truncated positions, at most bins - 1
    __m256 check; // all-ones lanes: let binOf decide
};

__attribute__((target("avx2,fma"), always_inline)) inline Binned
binEight(__m256 x, __m256 lo, __m256 scale, __m256 guard, __m256 guardHi, __m256i last) {
    const __m256 p = _mm256_mul_ps(_mm256_sub_ps(x, lo), scale);
    const __m256i whole = _mm256_cvttps_epi32(p);
    const __m256 frac = _mm256_sub_ps(p, _mm256_cvtepi32_ps(whole));
    // Fraction < guard (or NaN) but not exactly 0 at v == lo, or > 1 - guard.
    const __m256 check =
        _mm256_or_ps(_mm256_and_ps(_mm256_cmp_ps(frac, guard, _CMP_NGE_UQ),
                                   _mm256_cmp_ps(p, _mm256_setzero_ps(), _CMP_NEQ_UQ)),
                     _mm256_cmp_ps(frac, guardHi, _CMP_GT_OQ));
    return {_mm256_min_epi32(whole, last), check};
}

// Counts the four table indices in `at`.
__attribute__((target("avx2,fma"), always_inline)) inline void count4(uint32_t* small, __m128i at) {
    const auto q0 = uint64_t(_mm_cvtsi128_si64(at));
    const auto q1 = uint64_t(_mm_extract_epi64(at, 1));
    ++small[uint32_t(q0)];
    ++small[q0 >> 32];
    ++small[uint32_t(q1)];
    ++small[q1 >> 32];
}

__attribute__((target("avx2,fma"))) void addAvx2(BinCounter& c, const float* v, uint64_t n) {
    const __m256 lo = _mm256_set1_ps(c.lo), scale = _mm256_set1_ps(c.scale);
    const __m256 guard = _mm256_set1_ps(c.guard), guardHi = _mm256_set1_ps(1.0f - c.guard);
    const __m256i last = _mm256_set1_epi32(int(c.bins - 1));
    uint32_t* const small = c.small.data();
    uint64_t i = 0;
    if (c.mode == BinCounter::Mode::Pairs) {
        // Sixteen values a turn: value k pairs with value k + 8, pairs of even
        // lanes count in table 0, of odd lanes in table 1.
        const int table = 1 << (2 * c.shift);
        const __m128i pairShift = _mm_cvtsi32_si128(int(c.shift));
        const __m256i pairTable = _mm256_setr_epi32(0, table, 0, table, 0, table, 0, table);
        for (; i + 16 <= n; i += 16) {
            const Binned a = binEight(_mm256_loadu_ps(v + i), lo, scale, guard, guardHi, last);
            const Binned b = binEight(_mm256_loadu_ps(v + i + 8), lo, scale, guard, guardHi, last);
            const __m256 check = _mm256_or_ps(a.check, b.check);
            if (!_mm256_testz_ps(check, check)) { // rare
                c.addScalar(v, i, i + 16);
                continue;
            }
            const __m256i pair = _mm256_add_epi32(
                _mm256_or_si256(_mm256_sll_epi32(a.bin, pairShift), b.bin), pairTable);
            count4(small, _mm256_castsi256_si128(pair));
            count4(small, _mm256_extracti128_si256(pair, 1));
        }
    } else {
        // Eight values a turn, lane k counting in table k.
        const int b = int(c.bins);
        const __m256i laneTable = _mm256_setr_epi32(0, b, 2 * b, 3 * b, 4 * b, 5 * b, 6 * b, 7 * b);
        for (; i + 8 <= n; i += 8) {
            const Binned a = binEight(_mm256_loadu_ps(v + i), lo, scale, guard, guardHi, last);
            if (!_mm256_testz_ps(a.check, a.check)) { // rare
                c.addScalar(v, i, i + 8);
                continue;
            }
            const __m256i at = _mm256_add_epi32(a.bin, laneTable);
            count4(small, _mm256_castsi256_si128(at));
            count4(small, _mm256_extracti128_si256(at, 1));
        }
    }
    c.addScalar(v, i, n);
}

#endif // CKPTSCOPE_STATS_AVX2

BinCounter::BinCounter(const Histogram& histogram, size_t n) : h(histogram), bins(n), counts(n, 0) {
#ifdef CKPTSCOPE_STATS_AVX2
    const double width = h.hi - h.lo;
    const double s = double(n) / width;
    // The float path needs the range and the scale as normal floats and a
    // guard well below half a bin.
    if (!useAvx2() || n > 4096 || !(width <= double(std::numeric_limits<float>::max())) ||
        !(s <= double(std::numeric_limits<float>::max())) ||
        !(float(s) >= std::numeric_limits<float>::min()))
        return;
    lo = float(h.lo);
    scale = float(s);
    guard = float(double(n) * 0x1p-20);
    if (n <= 64) {
        mode = Mode::Pairs;
        while ((size_t(1) << shift) < n)
            ++shift;
        small.assign(size_t(2) << (2 * shift), 0);
    } else {
        mode = Mode::Lanes;
        small.assign(8 * n, 0);
    }
#endif
}

void BinCounter::add(const float* v, uint64_t n) {
#ifdef CKPTSCOPE_STATS_AVX2
    if (mode != Mode::Scalar) {
        // uint32 counters: flush long before one could overflow.
        if (pending + n > (uint64_t(1) << 31))
            flush();
        pending += n;
        addAvx2(*this, v, n);
        return;
    }
#endif
    addScalar(v, 0, n);
}

} // namespace

size_t Histogram::binOf(double v) const {
    const size_t n = counts.size();
    if (n == 0 || !(hi > lo))
        return 0;
    const double pos = (v - lo) / (hi - lo) * double(n);
    if (!(pos > 0))
        return 0;
    return std::min(size_t(pos), n - 1);
}

namespace {

// Helpers join a computation in one of its phases; the calling thread runs
// every phase itself and never waits for a helper that has not started.
struct Job {
    static constexpr int kBetween = -1; // merging: nobody joins
    static constexpr int kClosed = 0;   // done: `run` must not be called again

    std::mutex mutex;
    std::condition_variable changed;
    int phase = 1; // 1 or 2 while open
    unsigned active = 0;
    std::function<void(int phase)> run; // refers to the caller's stack

    // On a helper thread: each phase once, as long as the job is open.
    void participate() {
        std::unique_lock lock(mutex);
        int last = 0; // the phase this helper ran last; 0: none
        for (;;) {
            changed.wait(lock,
                         [&] { return phase == kClosed || (phase != kBetween && phase != last); });
            if (phase == kClosed)
                return;
            last = phase;
            ++active;
            lock.unlock();
            run(last);
            lock.lock();
            --active;
            changed.notify_all();
        }
    }

    // On the calling thread: no helper joins `next` before this returns,
    // and none is still running an earlier phase.
    void advance(int next) {
        std::unique_lock lock(mutex);
        phase = next == kClosed ? kClosed : kBetween;
        changed.notify_all();
        changed.wait(lock, [&] { return active == 0; });
        phase = next;
        if (next == kClosed)
            run = nullptr;
        changed.notify_all();
    }
};

// Threads kept for the life of the process. computeStats runs once per tensor,
// often hundreds of times in a row: a new thread per call costs its creation,
// and when the other cores are busy it may start only milliseconds later (a
// woken sleeper is scheduled sooner than a new thread).
class HelperPool {
public:
    static HelperPool& instance() {
        static HelperPool pool;
        return pool;
    }

    unsigned size() const { return unsigned(m_threads.size()); }

    // Offers the job to up to n helpers; they join when free.
    void offer(const std::shared_ptr<Job>& job, unsigned n) {
        {
            std::lock_guard lock(m_mutex);
            for (unsigned k = 0; k < n; ++k)
                m_queue.push_back(job);
        }
        if (n == 1)
            m_wake.notify_one();
        else
            m_wake.notify_all();
    }

private:
    HelperPool() {
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        try {
            for (unsigned k = 1; k < std::min(cores, 256u); ++k)
                m_threads.emplace_back([this] { loop(); });
        } catch (...) {
            // Fewer helpers (or none): the calling threads do the work.
        }
    }

    ~HelperPool() {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        for (std::thread& t : m_threads)
            t.join();
    }

    void loop() {
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [&] { return m_stop || !m_queue.empty(); });
            if (m_stop)
                return;
            const std::shared_ptr<Job> job = std::move(m_queue.front());
            m_queue.pop_front();
            lock.unlock();
            job->participate();
            lock.lock();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::shared_ptr<Job>> m_queue;
    bool m_stop = false;
    std::vector<std::thread> m_threads;
};

// Two passes over the blocks: (1) read each block and scan it at once, while
// it is in cache, for counts and moments, keeping the first kRetainMax values
// in memory; merge the block results in block order (so results do not depend
// on the thread count); (2) bin every finite value, from memory where kept,
// otherwise by reading the block again. The calling thread and up to
// threads - 1 pool helpers take blocks in turn. Values come from a reader
// (copied into buffers) or are already in memory (`values` non-null: read in
// place, nothing kept).
StatsResult computeStatsImpl(uint64_t count, const ValueReader* reader, const float* values,
                             const StatsOptions& options) {
    const uint64_t blocks = (count + kBlock - 1) / kBlock;
    const unsigned threads = unsigned(std::clamp<uint64_t>(
        options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency()), 1,
        std::max<uint64_t>(blocks, 1)));
    const bool wantHistogram = options.bins > 0;
    // Keep values only when a histogram pass will use them.
    const uint64_t retained = wantHistogram && !values ? std::min(count, kRetainMax) : 0;
    const uint64_t retainedBlocks = (retained + kBlock - 1) / kBlock;
    std::unique_ptr<float[]> memory(retained ? new float[size_t(retained)] : nullptr);

    std::vector<Partial> partials(static_cast<size_t>(blocks));
    StatsResult result;
    TensorStats& s = result.stats;
    Histogram& h = result.histogram;
    if (wantHistogram)
        h.counts.assign(size_t(options.bins), 0);
    bool binning = false; // set by the merge: pass 2 runs

    std::atomic<uint64_t> next1{0}, done1{0}, next2{0}, done2{0};
    std::atomic<bool> stop{false};
    std::exception_ptr error;
    std::mutex mutex; // error, histogram merge
    const double span1 = wantHistogram ? 0.5 : 1.0;

    auto fail = [&] {
        std::lock_guard lock(mutex);
        if (!error)
            error = std::current_exception();
        stop = true;
    };
    auto cancelled = [&] {
        if (stop.load(std::memory_order_relaxed))
            return true;
        if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
            stop = true;
            return true;
        }
        return false;
    };
    // Where block b is read to: the kept values, or a participant's scratch.
    auto buffer = [&](uint64_t b, std::unique_ptr<float[]>& scratch) {
        if (b < retainedBlocks)
            return memory.get() + b * kBlock;
        if (!scratch)
            scratch.reset(new float[size_t(std::min(count, kBlock))]);
        return scratch.get();
    };
    // The values of block b: in place when they are in memory already, else
    // read (when `read`) into the block's buffer.
    auto blockValues = [&](uint64_t b, std::unique_ptr<float[]>& scratch, bool read) {
        const uint64_t first = b * kBlock;
        if (values)
            return values + first;
        float* const to = buffer(b, scratch);
        if (read)
            (*reader)(first, std::min(kBlock, count - first), to);
        return static_cast<const float*>(to);
    };

    auto pass1 = [&] {
        std::unique_ptr<float[]> scratch;
        try {
            while (!cancelled()) {
                const uint64_t b = next1.fetch_add(1);
                if (b >= blocks)
                    break;
                const uint64_t n = std::min(kBlock, count - b * kBlock);
                partials[b] = scanBlock(blockValues(b, scratch, true), n);
                const uint64_t d = done1.fetch_add(1) + 1;
                if (options.progress)
                    options.progress(span1 * double(d) / double(blocks));
            }
        } catch (...) {
            fail();
        }
    };

    // The block results in block order, on the calling thread.
    auto merge = [&] {
        s.count = count;
        float mn = std::numeric_limits<float>::infinity(), mx = -mn;
        double sum = 0, sumSq = 0, mean = 0, m2 = 0;
        uint64_t nAcc = 0;
        for (const Partial& p : partials) {
            s.finite += p.finite;
            s.nan += p.nan;
            s.posInf += p.posInf;
            s.negInf += p.negInf;
            s.zeros += p.zeros;
            mn = std::min(mn, p.min);
            mx = std::max(mx, p.max);
            sum += p.sum;
            sumSq += p.sumSq;
            if (p.finite == 0)
                continue;
            // Chan et al.: combine block mean and M2 with the running ones.
            const double nb = double(p.finite);
            const double meanB = p.shift + p.sumShifted / nb;
            const double m2B = std::max(0.0, p.sumSqShifted - p.sumShifted * p.sumShifted / nb);
            const double na = double(nAcc);
            const double delta = meanB - mean;
            const double nt = na + nb;
            mean += delta * nb / nt;
            m2 += m2B + delta * delta * na * nb / nt;
            nAcc += p.finite;
        }
        s.finiteSum = sum;
        s.l2 = std::sqrt(sumSq);
        if (s.finite == 0) {
            h.counts.clear(); // no finite value: no histogram
            return;
        }
        s.min = mn;
        s.max = mx;
        s.mean = mean;
        s.std = std::sqrt(m2 / double(s.finite)); // population standard deviation
        if (wantHistogram) {
            h.lo = mn;
            h.hi = mx;
            if (h.hi > h.lo)
                binning = true;
            else
                h.counts[0] = s.finite; // one value: everything is in bin 0
        }
    };

    auto pass2 = [&] {
        std::unique_ptr<float[]> scratch;
        try {
            BinCounter counter(h, h.counts.size());
            while (!cancelled()) {
                const uint64_t b = next2.fetch_add(1);
                if (b >= blocks)
                    break;
                const uint64_t n = std::min(kBlock, count - b * kBlock);
                // Blocks kept in memory from pass 1 are not read again.
                counter.add(blockValues(b, scratch, b >= retainedBlocks), n);
                const uint64_t d = done2.fetch_add(1) + 1;
                if (options.progress)
                    options.progress(0.5 + 0.5 * double(d) / double(blocks));
            }
            std::lock_guard lock(mutex);
            counter.mergeInto(h.counts);
        } catch (...) {
            fail();
        }
    };

    std::shared_ptr<Job> job;
    if (threads > 1 && HelperPool::instance().size() > 0) {
        job = std::make_shared<Job>();
        job->run = [&](int phase) { phase == 1 ? pass1() : pass2(); };
    }
    // Whatever happens, no helper touches this stack after we return.
    struct Closer {
        Job* job;
        ~Closer() {
            if (job)
                job->advance(Job::kClosed);
        }
    } closer{job.get()};
    if (job)
        HelperPool::instance().offer(job, std::min(threads - 1, HelperPool::instance().size()));

    pass1();
    if (job)
        job->advance(Job::kBetween); // helpers out of pass 1
    if (!stop.load())
        merge();
    if (binning && !stop.load()) {
        if (job)
            job->advance(2);
        pass2();
    }
    if (job)
        job->advance(Job::kClosed);
    closer.job = nullptr;

    if (error)
        std::rethrow_exception(error);
    if (options.cancel && options.cancel->load())
        throw Cancelled{};
    if (options.progress)
        options.progress(1.0);
    return result;
}

} // namespace

StatsResult computeStats(uint64_t count, const ValueReader& reader, const StatsOptions& options) {
    return computeStatsImpl(count, &reader, nullptr, options);
}

StatsResult computeStats(const float* values, uint64_t count, int bins) {
    StatsOptions options;
    options.bins = bins;
    options.threads = 1;
    static const float none = 0;
    return computeStatsImpl(count, nullptr, values ? values : &none, options);
}

} // namespace ckptscope
