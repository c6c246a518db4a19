#include "ckptscope/tensorstats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

namespace ckptscope {

namespace {

constexpr uint64_t kBlock = 1 << 20; // values per work unit (4 MiB)

// Partial results of one block. Moments are kept as sums of (x - shift) so
// that large offsets do not cancel catastrophically in double.
struct Partial {
    uint64_t n = 0, finite = 0, nan = 0, posInf = 0, negInf = 0, zeros = 0;
    float min = std::numeric_limits<float>::infinity();
    float max = -std::numeric_limits<float>::infinity();
    double shift = 0, sum = 0, sumShifted = 0, sumSqShifted = 0, sumSq = 0;
};

Partial scanBlock(const float* v, uint64_t n) {
    Partial p;
    p.n = n;
    uint64_t i = 0;
    while (i < n && !std::isfinite(v[i]))
        ++i;
    p.shift = i < n ? double(v[i]) : 0.0;
    // Four independent accumulators so the adds pipeline.
    double s[4] = {}, ss[4] = {}, sq[4] = {};
    for (i = 0; i < n; ++i) {
        const float f = v[i];
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        if ((bits & 0x7f800000u) == 0x7f800000u) { // NaN or Inf: rare
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
        s[i & 3] += c;
        ss[i & 3] += c * c;
        sq[i & 3] += d * d;
    }
    p.finite = n - p.nan - p.posInf - p.negInf;
    p.sumShifted = (s[0] + s[1]) + (s[2] + s[3]);
    p.sumSqShifted = (ss[0] + ss[1]) + (ss[2] + ss[3]);
    p.sumSq = (sq[0] + sq[1]) + (sq[2] + sq[3]);
    p.sum = p.sumShifted + double(p.finite) * p.shift;
    return p;
}

// Runs work(block, buffer) over all blocks on `threads` workers; stops early
// on cancel or the first exception, which is rethrown here.
template <typename Work>
void forEachBlock(uint64_t count, const ValueReader& reader, const StatsOptions& options,
                  unsigned threads, double progressBase, double progressSpan, Work&& work) {
    const uint64_t blocks = (count + kBlock - 1) / kBlock;
    std::atomic<uint64_t> next{0}, done{0};
    std::atomic<bool> stop{false};
    std::exception_ptr error;
    std::mutex errorMutex;
    auto worker = [&] {
        std::vector<float> buffer(size_t(std::min(count, kBlock)));
        for (;;) {
            if (stop.load(std::memory_order_relaxed))
                return;
            if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
                stop = true;
                return;
            }
            const uint64_t b = next.fetch_add(1);
            if (b >= blocks)
                return;
            const uint64_t first = b * kBlock;
            const uint64_t n = std::min(kBlock, count - first);
            try {
                reader(first, n, buffer.data());
                work(b, buffer.data(), n);
            } catch (...) {
                std::lock_guard lock(errorMutex);
                if (!error)
                    error = std::current_exception();
                stop = true;
                return;
            }
            const uint64_t d = done.fetch_add(1) + 1;
            if (options.progress)
                options.progress(progressBase + progressSpan * double(d) / double(blocks));
        }
    };
    const unsigned t = unsigned(std::min<uint64_t>(threads, blocks));
    if (t <= 1) {
        worker();
    } else {
        std::vector<std::jthread> pool;
        for (unsigned k = 0; k < t; ++k)
            pool.emplace_back(worker);
    }
    if (error)
        std::rethrow_exception(error);
    if (options.cancel && options.cancel->load())
        throw Cancelled{};
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

StatsResult computeStats(uint64_t count, const ValueReader& reader, const StatsOptions& options) {
    const unsigned threads =
        options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    const uint64_t blocks = (count + kBlock - 1) / kBlock;
    std::vector<Partial> partials(static_cast<size_t>(blocks));
    const double momentsSpan = options.bins > 0 ? 0.5 : 1.0;
    forEachBlock(count, reader, options, threads, 0.0, momentsSpan,
                 [&](uint64_t b, const float* v, uint64_t n) { partials[b] = scanBlock(v, n); });

    // Merge in block order: the result does not depend on the thread count.
    StatsResult result;
    TensorStats& s = result.stats;
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
    if (s.finite > 0) {
        s.min = mn;
        s.max = mx;
        s.mean = mean;
        s.std = std::sqrt(m2 / double(s.finite)); // population standard deviation
    }

    if (options.bins > 0 && s.finite > 0) {
        Histogram& h = result.histogram;
        h.lo = *s.min;
        h.hi = *s.max;
        h.counts.assign(size_t(options.bins), 0);
        std::mutex merge;
        forEachBlock(count, reader, options, threads, 0.5, 0.5,
                     [&](uint64_t, const float* v, uint64_t n) {
                         std::vector<uint64_t> local(h.counts.size(), 0);
                         for (uint64_t i = 0; i < n; ++i)
                             if (std::isfinite(v[i]))
                                 ++local[h.binOf(v[i])];
                         std::lock_guard lock(merge);
                         for (size_t k = 0; k < local.size(); ++k)
                             h.counts[k] += local[k];
                     });
    }
    if (options.progress)
        options.progress(1.0);
    return result;
}

StatsResult computeStats(const float* values, uint64_t count, int bins) {
    StatsOptions options;
    options.bins = bins;
    options.threads = 1;
    return computeStats(
        count,
        [values](uint64_t first, uint64_t n, float* out) {
            std::memcpy(out, values + first, size_t(n) * sizeof(float));
        },
        options);
}

} // namespace ckptscope
