// computeStats: the two passes over a tensor's blocks, spread over the
// calling thread and pool helpers, and the merge in block order. The kernels
// are statskernels.*, the histogram statshistogram.*, the pool statspool.*.
#include "ckptscope/stats/tensorstats.h"

#include "ckptscope/io/mappedfile.h"

#include "stats/statshistogram.h"
#include "stats/statskernels.h"
#include "stats/statspool.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>

namespace ckptscope {

using stats::BinCounter;
using stats::HelperPool;
using stats::Job;
using stats::kBlock;
using stats::Partial;
using stats::scanBlock;

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

// Values kept in memory between the moments pass and the histogram pass
// (64 MiB): a tensor up to this size is read from the source once. Larger
// tensors keep their first kRetainMax values and re-read the rest.
constexpr uint64_t kRetainMax = uint64_t(16) << 20;
// Values of a mapped tensor left mapped in between the two passes (32 MiB);
// the windows beyond are released after pass 1 and mapped again for pass 2.
constexpr uint64_t kMappedKeep = uint64_t(8) << 20;

// Two passes over the blocks: (1) read each block and scan it at once, while
// it is in cache, for counts and moments, keeping the first kRetainMax values
// in memory; merge the block results in block order (so results do not depend
// on the thread count); (2) bin every finite value, from memory where kept,
// otherwise by reading the block again. The calling thread and up to
// threads - 1 pool helpers take blocks in turn. Values come from a reader
// (copied into buffers) or are already in memory (`values` non-null: read in
// place, nothing kept), or are scanned in place in a mapped file (`mapped`
// non-null, each block inside MappedFile::access).
StatsResult computeStatsImpl(uint64_t count, const ValueReader* reader, const float* values,
                             const MappedValues* mapped, const StatsOptions& options) {
    const uint64_t blocks = (count + kBlock - 1) / kBlock;
    const unsigned threads = unsigned(std::clamp<uint64_t>(
        options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency()), 1,
        std::max<uint64_t>(blocks, 1)));
    const bool wantHistogram = options.bins > 0;
    // Keep values only when a histogram pass will use them.
    const uint64_t retained = wantHistogram && reader ? std::min(count, kRetainMax) : 0;
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

    // Block b of a mapped tensor: where its bytes are, and their values.
    const uint64_t keepBlocks = wantHistogram ? kMappedKeep / kBlock : 0;
    auto window = [&](uint64_t b, uint64_t n) {
        return MappedFile::Window{mapped->file, mapped->offset + b * kBlock * 4, n * 4};
    };
    auto mappedValues = [&](const MappedFile::Window& w) {
        return reinterpret_cast<const float*>(w.file->data() + w.offset);
    };

    auto pass1 = [&] {
        std::unique_ptr<float[]> scratch;
        try {
            while (!cancelled()) {
                const uint64_t b = next1.fetch_add(1);
                if (b >= blocks)
                    break;
                const uint64_t n = std::min(kBlock, count - b * kBlock);
                if (mapped) {
                    const MappedFile::Window w = window(b, n);
                    // The body may be left by a jump (SigbusGuard): only
                    // the kernel's plain loop and trivial locals in it.
                    Partial* const out = &partials[b];
                    auto scan = [out, v = mappedValues(w), n]() noexcept {
                        *out = scanBlock(v, n);
                    };
                    MappedFile::access(&w, 1, scan);
                    if (b >= keepBlocks)
                        w.file->release(w.offset, w.length);
                } else {
                    partials[b] = scanBlock(blockValues(b, scratch, true), n);
                }
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
                // Last block first: pass 1 ended there, so those values are
                // still in cache (counts are sums: the order changes nothing).
                const uint64_t k = next2.fetch_add(1);
                if (k >= blocks)
                    break;
                const uint64_t b = blocks - 1 - k;
                const uint64_t n = std::min(kBlock, count - b * kBlock);
                if (mapped) {
                    const MappedFile::Window w = window(b, n);
                    auto add = [&counter, v = mappedValues(w), n]() noexcept { counter.add(v, n); };
                    MappedFile::access(&w, 1, add);
                    // Each release interrupts the other core (a TLB shootdown):
                    // the kept blocks go at once with the whole range at the end.
                    if (b >= keepBlocks)
                        w.file->release(w.offset, w.length);
                } else {
                    // Blocks kept in memory from pass 1 are not read again.
                    counter.add(blockValues(b, scratch, b >= retainedBlocks), n);
                }
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
    if (mapped) // also the pages mapped around the windows
        mapped->file->release(mapped->offset, count * 4);

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
    return computeStatsImpl(count, &reader, nullptr, nullptr, options);
}

StatsResult computeStats(uint64_t count, const MappedValues& values, const StatsOptions& options) {
    return computeStatsImpl(count, nullptr, nullptr, &values, options);
}

StatsResult computeStats(const float* values, uint64_t count, int bins) {
    StatsOptions options;
    options.bins = bins;
    options.threads = 1;
    static const float none = 0;
    return computeStatsImpl(count, nullptr, values ? values : &none, nullptr, options);
}

} // namespace ckptscope
