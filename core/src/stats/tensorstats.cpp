// computeStats: the two passes over a tensor's blocks, spread over the
// calling thread and pool helpers, and the merge in block order. The kernels
// are statskernels.*, the histogram bincounter.*, the pool statspool.*.
#include "ckptscope/stats/tensorstats.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/io/mappedfile.h"

#include "stats/bincounter.h"
#include "stats/codesums.h"
#include "stats/keptbuffer.h"
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
using stats::Spread;

size_t Histogram::binOf(double v) const {
    const size_t n = counts.size();
    if (n == 0 || !(hi > lo))
        return 0;
    const double width = hi - lo;
    // Halved when the width passes the double range (lo near -max, hi near max).
    const double pos =
        (std::isfinite(width) ? (v - lo) / width : (v / 2 - lo / 2) / (hi / 2 - lo / 2)) *
        double(n);
    if (!(pos > 0))
        return 0;
    return std::min(size_t(pos), n - 1);
}

std::string storedIntegerText(const StoredInteger& v) {
    // (Appended, not "-" + text: GCC 12 at -O3 warns of that form, -Wrestrict.)
    std::string out = v.negative ? "-" : "";
    out += std::to_string(v.magnitude);
    return out;
}

std::string extremeText(const TensorStats& s, bool max, bool f32Values) {
    const std::optional<StoredInteger>& integer = max ? s.intMax : s.intMin;
    if (integer)
        return storedIntegerText(*integer);
    const std::optional<double>& v = max ? s.max : s.min;
    if (!v)
        return std::string(fmt::kMissing);
    return f32Values ? fmt::exact(float(*v)) : fmt::exact(*v);
}

double Histogram::edge(size_t i) const {
    const size_t n = counts.size();
    if (n == 0 || i >= n)
        return hi;
    const double t = double(i) / double(n), width = hi - lo;
    return std::isfinite(width) ? lo + width * t : lo * (1 - t) + hi * t;
}

namespace {

// Values of a mapped tensor left mapped in between the two passes (32 MiB);
// the windows beyond are released after pass 1 and mapped again for pass 2.
constexpr uint64_t kMappedKeep = uint64_t(8) << 20;

// The block results in block order: counts and moments.
void mergePartials(const std::vector<Partial>& partials, TensorStats& s) {
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
    stats::setMoments(s, sum, sumSq, mn, mx, mean, m2);
}

// Two passes over the blocks: (1) read each block and scan it at once, while
// it is in cache, for counts and moments; merge the block results in block
// order (so results do not depend on the thread count); (2) bin every finite
// value, reading each block again. The calling thread and up to threads - 1
// pool helpers take blocks in turn. Values come from a reader (copied into
// buffers), or are already in memory (`values` non-null: read in place), or
// are scanned in place in a mapped file (`mapped` non-null, each block inside
// MappedFile::access). Values read by a reader are kept for pass 2 where the
// tensor fits a KeptBuffer.
class StatsPasses {
public:
    StatsPasses(uint64_t count, const ValueReader* reader, const float* values,
                const MappedValues* mapped, const StatsOptions& options,
                const stats::PartialScanner* scan1 = nullptr,
                const stats::BlockBinner* bin2 = nullptr, uint64_t block = kBlock)
        : m_count(count), m_reader(reader), m_values(values), m_mapped(mapped), m_scan1(scan1),
          m_bin2(bin2), m_options(options), m_block(block), m_blocks((count + block - 1) / block),
          m_wantHistogram(options.bins > 0),
          // Keep values only when a histogram pass will use them.
          m_keepBlocks(m_wantHistogram ? kMappedKeep / block : 0),
          m_span1(m_wantHistogram ? 0.5 : 1.0), m_partials(size_t(m_blocks)) {
        if (m_wantHistogram)
            m_result.histogram.counts.assign(size_t(options.bins), 0);
    }

    StatsResult run();

private:
    unsigned threads() const {
        return unsigned(std::clamp<uint64_t>(
            m_options.threads ? m_options.threads
                              : std::max(1u, std::thread::hardware_concurrency()),
            1, std::max<uint64_t>(m_blocks, 1)));
    }
    void fail() {
        std::lock_guard lock(m_mutex);
        if (!m_error)
            m_error = std::current_exception();
        m_stop = true;
    }
    bool cancelled() {
        if (m_stop.load(std::memory_order_relaxed))
            return true;
        if (m_options.cancelled()) {
            m_stop = true;
            return true;
        }
        return false;
    }
    uint64_t blockSize(uint64_t b) const { return std::min(m_block, m_count - b * m_block); }
    // The values of block b: in place when they are in memory already, else
    // read into a participant's scratch.
    const float* blockValues(uint64_t b, std::unique_ptr<float[]>& scratch);
    // Block b of a mapped tensor: where its bytes are.
    MappedFile::Window window(uint64_t b) const {
        return MappedFile::Window{m_mapped->file, m_mapped->offset + b * m_block * 4,
                                  blockSize(b) * 4};
    }
    static const float* mappedValues(const MappedFile::Window& w) {
        return reinterpret_cast<const float*>(w.file->data() + w.offset);
    }
    void scanBlockAt(uint64_t b, std::unique_ptr<float[]>& scratch);
    void binBlockAt(uint64_t b, BinCounter<float>& counter, std::unique_ptr<float[]>& scratch);
    void pass1();
    void merge();
    void pass2();

    const uint64_t m_count;
    const ValueReader* const m_reader;
    const float* const m_values;
    const MappedValues* const m_mapped;
    const stats::PartialScanner* const m_scan1; // pass 1 other than by values
    const stats::BlockBinner* const m_bin2;     // pass 2 other than by values, where it can
    const StatsOptions& m_options;
    const uint64_t m_block; // values a block (kBlock unless the caller reads more at a time)
    const uint64_t m_blocks;
    const bool m_wantHistogram;
    // Blocks of a mapped tensor left mapped in between the two passes.
    const uint64_t m_keepBlocks;
    const double m_span1; // share of the progress for pass 1
    std::vector<Partial> m_partials;
    StatsResult m_result;
    bool m_binning = false; // set by the merge: pass 2 runs
    // Pass 1's values for pass 2 (null: pass 2 reads again).
    float* m_kept = nullptr;
    std::atomic<uint64_t> m_next1{0}, m_done1{0}, m_next2{0}, m_done2{0};
    std::atomic<bool> m_stop{false};
    std::exception_ptr m_error;
    std::mutex m_mutex; // m_error, histogram merge
};

const float* StatsPasses::blockValues(uint64_t b, std::unique_ptr<float[]>& scratch) {
    const uint64_t first = b * m_block;
    if (m_values)
        return m_values + first;
    if (m_kept) {
        if (!m_binning)
            (*m_reader)(first, blockSize(b), m_kept + first);
        return m_kept + first;
    }
    if (!scratch)
        scratch.reset(new float[size_t(std::min(m_count, m_block))]);
    (*m_reader)(first, blockSize(b), scratch.get());
    return scratch.get();
}

void StatsPasses::scanBlockAt(uint64_t b, std::unique_ptr<float[]>& scratch) {
    const uint64_t n = blockSize(b);
    if (m_scan1) {
        m_partials[b] = (*m_scan1)(b * m_block, n);
        return;
    }
    if (!m_mapped) {
        m_partials[b] = scanBlock(blockValues(b, scratch), n);
        return;
    }
    const MappedFile::Window w = window(b);
    // The body may be left by a jump (SigbusGuard): only the kernel's
    // plain loop and trivial locals in it.
    Partial* const out = &m_partials[b];
    auto scan = [out, v = mappedValues(w), n]() noexcept { *out = scanBlock(v, n); };
    MappedFile::access(&w, 1, scan);
    if (b >= m_keepBlocks)
        w.file->release(w.offset, w.length);
}

void StatsPasses::binBlockAt(uint64_t b, BinCounter<float>& counter,
                             std::unique_ptr<float[]>& scratch) {
    const uint64_t n = blockSize(b);
    if (m_bin2 && (*m_bin2)(b * m_block, n, counter))
        return;
    if (!m_mapped) {
        counter.add(blockValues(b, scratch), n);
        return;
    }
    const MappedFile::Window w = window(b);
    auto add = [&counter, v = mappedValues(w), n]() noexcept { counter.add(v, n); };
    MappedFile::access(&w, 1, add);
    // Each release interrupts the other core (a TLB shootdown): the kept
    // blocks go at once with the whole range at the end.
    if (b >= m_keepBlocks)
        w.file->release(w.offset, w.length);
}

void StatsPasses::pass1() {
    std::unique_ptr<float[]> scratch;
    try {
        while (!cancelled()) {
            const uint64_t b = m_next1.fetch_add(1);
            if (b >= m_blocks)
                break;
            scanBlockAt(b, scratch);
            const uint64_t d = m_done1.fetch_add(1) + 1;
            m_options.report(m_span1 * double(d) / double(m_blocks));
        }
    } catch (...) {
        fail();
    }
}

// On the calling thread, between the passes.
void StatsPasses::merge() {
    TensorStats& s = m_result.stats;
    Histogram& h = m_result.histogram;
    s.count = m_count;
    mergePartials(m_partials, s);
    if (s.finite == 0) {
        h.counts.clear(); // no finite value: no histogram
        return;
    }
    if (m_wantHistogram) {
        h.lo = *s.min;
        h.hi = *s.max;
        if (h.hi > h.lo)
            m_binning = true;
        else
            h.counts[0] = s.finite; // one value: everything is in bin 0
    }
}

void StatsPasses::pass2() {
    std::unique_ptr<float[]> scratch;
    try {
        BinCounter<float> counter(m_result.histogram, stats::Kernel::Auto, Spread::InRange,
                                  m_count);
        while (!cancelled()) {
            // Last block first: pass 1 ended there, so those values are
            // still in cache (counts are sums: the order changes nothing).
            const uint64_t k = m_next2.fetch_add(1);
            if (k >= m_blocks)
                break;
            binBlockAt(m_blocks - 1 - k, counter, scratch);
            const uint64_t d = m_done2.fetch_add(1) + 1;
            m_options.report(0.5 + 0.5 * double(d) / double(m_blocks));
        }
        std::lock_guard lock(m_mutex);
        counter.mergeInto(m_result.histogram.counts);
    } catch (...) {
        fail();
    }
}

StatsResult StatsPasses::run() {
    const bool keep =
        m_reader && !m_scan1 && m_wantHistogram && m_count <= stats::kKeepBytes / sizeof(float);
    const stats::KeptBuffer kept(keep ? m_count * sizeof(float) : UINT64_MAX);
    m_kept = reinterpret_cast<float*>(kept.data());
    const unsigned n = threads();
    std::shared_ptr<Job> job;
    if (n > 1 && HelperPool::instance().size() > 0) {
        job = std::make_shared<Job>();
        job->run = [this](int phase) { phase == 1 ? pass1() : pass2(); };
    }
    // Whatever happens, no helper touches this object after we return.
    struct Closer {
        Job* job;
        ~Closer() {
            if (job)
                job->advance(Job::kClosed);
        }
    } closer{job.get()};
    if (job)
        HelperPool::instance().offer(job, std::min(n - 1, HelperPool::instance().size()));

    pass1();
    if (job)
        job->advance(Job::kBetween); // helpers out of pass 1
    if (!m_stop.load())
        merge();
    if (m_binning && !m_stop.load()) {
        if (job)
            job->advance(2);
        pass2();
    }
    if (job)
        job->advance(Job::kClosed);
    closer.job = nullptr;
    if (m_mapped) // also the pages mapped around the windows
        m_mapped->file->release(m_mapped->offset, m_count * 4);

    if (m_error)
        std::rethrow_exception(m_error);
    if (m_options.cancel && m_options.cancel->load())
        throw Cancelled{};
    m_options.report(1.0);
    return std::move(m_result);
}

StatsResult computeStatsImpl(uint64_t count, const ValueReader* reader, const float* values,
                             const MappedValues* mapped, const StatsOptions& options) {
    return StatsPasses(count, reader, values, mapped, options).run();
}

} // namespace

StatsResult computeStats(uint64_t count, const ValueReader& reader, const StatsOptions& options) {
    return computeStatsImpl(count, &reader, nullptr, nullptr, options);
}

StatsResult computeStats(uint64_t count, const MappedValues& values, const StatsOptions& options) {
    return computeStatsImpl(count, nullptr, nullptr, &values, options);
}

namespace stats {
StatsResult computeStatsScanned(uint64_t count, const ValueReader& values,
                                const PartialScanner& pass1, const BlockBinner* pass2,
                                const StatsOptions& options, uint64_t block) {
    return StatsPasses(count, &values, nullptr, nullptr, options, &pass1, pass2, block).run();
}
} // namespace stats

StatsResult computeStats(const float* values, uint64_t count, int bins) {
    StatsOptions options;
    options.bins = bins;
    options.threads = 1;
    static const float none = 0;
    return computeStatsImpl(count, nullptr, values ? values : &none, nullptr, options);
}

namespace {

template <typename T, typename Reader>
Histogram histogramOverImpl(uint64_t count, const Reader& reader, double lo, double hi, int bins,
                            const TaskControl& control) {
    Histogram h;
    h.lo = lo;
    h.hi = hi;
    h.counts.assign(size_t(std::max(bins, 1)), 0);
    BinCounter<T> counter(h, stats::Kernel::Auto, Spread::Anywhere, count);
    std::vector<T> block(size_t(std::min(count, kBlock)));
    for (uint64_t first = 0; first < count; first += kBlock) {
        control.throwIfCancelled();
        const uint64_t n = std::min(kBlock, count - first);
        reader(first, n, block.data());
        counter.add(block.data(), n);
    }
    counter.mergeInto(h.counts);
    return h;
}

} // namespace

Histogram histogramOver(uint64_t count, const ValueReader& reader, double lo, double hi, int bins,
                        const TaskControl& control) {
    return histogramOverImpl<float>(count, reader, lo, hi, bins, control);
}

Histogram histogramOver(uint64_t count, const ValueReaderF64& reader, double lo, double hi,
                        int bins, const TaskControl& control) {
    return histogramOverImpl<double>(count, reader, lo, hi, bins, control);
}

} // namespace ckptscope
