#include "ckptscope/elementdiff.h"

#include "blockworkers.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

namespace ckptscope {

namespace {

// Values per block: 256 KiB of each side, still in cache when scanned right
// after being read. The partition does not depend on the thread count.
constexpr uint64_t kBlock = uint64_t(1) << 16;
// Differences kept between the two passes (16 MiB of doubles): a tensor up
// to this size is read once; a larger one has the rest read again for the
// histogram.
constexpr uint64_t kRetainMax = uint64_t(1) << 21;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Results of one block, merged in block order.
struct Part {
    uint64_t differing = 0, nanMismatch = 0, finite = 0;
    double maxAbs = 0, sumAbs = 0, sumSq = 0, aa = 0, bb = 0, ab = 0;
    double lo = kInf, hi = -kInf; // range of b - a
};

bool special(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return (bits & 0x7f800000u) == 0x7f800000u; // NaN or ±Inf
}

bool anySpecial(const float* v, uint64_t n) {
    uint32_t found = 0;
    for (uint64_t i = 0; i < n; ++i) {
        uint32_t bits;
        std::memcpy(&bits, v + i, 4);
        found |= uint32_t((bits & 0x7f800000u) == 0x7f800000u);
    }
    return found != 0;
}

// Sums of one block in four lanes, so the additions pipeline.
struct Lanes {
    double sumAbs[4] = {}, sumSq[4] = {}, aa[4] = {}, bb[4] = {}, ab[4] = {};
    double maxAbs[4] = {}, lo[4] = {kInf, kInf, kInf, kInf}, hi[4] = {-kInf, -kInf, -kInf, -kInf};
    uint64_t differing[4] = {};

    void add(int k, double da, double db, double atol, double rtol, double* d) {
        const double diff = db - da;
        const double ad = std::fabs(diff);
        differing[k] += ad > atol + rtol * std::fabs(da);
        maxAbs[k] = std::max(maxAbs[k], ad);
        sumAbs[k] += ad;
        sumSq[k] += diff * diff;
        aa[k] += da * da;
        bb[k] += db * db;
        ab[k] += da * db;
        lo[k] = std::min(lo[k], diff);
        hi[k] = std::max(hi[k], diff);
        if (d)
            *d = diff;
    }

    void into(Part& p) const {
        for (int k = 0; k < 4; ++k) {
            p.differing += differing[k];
            p.maxAbs = std::max(p.maxAbs, maxAbs[k]);
            p.lo = std::min(p.lo, lo[k]);
            p.hi = std::max(p.hi, hi[k]);
        }
        p.sumAbs = (sumAbs[0] + sumAbs[1]) + (sumAbs[2] + sumAbs[3]);
        p.sumSq = (sumSq[0] + sumSq[1]) + (sumSq[2] + sumSq[3]);
        p.aa = (aa[0] + aa[1]) + (aa[2] + aa[3]);
        p.bb = (bb[0] + bb[1]) + (bb[2] + bb[3]);
        p.ab = (ab[0] + ab[1]) + (ab[2] + ab[3]);
    }
};

// One block; writes b - a to d (when non-null), NaN where a pair is not
// finite on both sides.
Part scanBlock(const float* a, const float* b, uint64_t n, double atol, double rtol, double* d) {
    Part p;
    Lanes lanes;
    if (!anySpecial(a, n) && !anySpecial(b, n)) { // the common case: no branch per value
        uint64_t i = 0;
        for (; i + 4 <= n; i += 4)
            for (int k = 0; k < 4; ++k)
                lanes.add(k, a[i + k], b[i + k], atol, rtol, d ? d + i + k : nullptr);
        for (; i < n; ++i)
            lanes.add(0, a[i], b[i], atol, rtol, d ? d + i : nullptr);
        p.finite = n;
        lanes.into(p);
        return p;
    }
    for (uint64_t i = 0; i < n; ++i) {
        const float fa = a[i], fb = b[i];
        if (special(fa) || special(fb)) {
            if (d)
                d[i] = kNaN;
            const bool nanA = std::isnan(fa), nanB = std::isnan(fb);
            if (nanA != nanB) {
                ++p.differing;
                ++p.nanMismatch;
            } else if (!nanA && fa != fb) { // an infinity against anything but itself
                ++p.differing;
            }
            continue;
        }
        ++p.finite;
        lanes.add(int(i & 3), fa, fb, atol, rtol, d ? d + i : nullptr);
    }
    lanes.into(p); // adds the finite pairs that differ to those counted above
    return p;
}

} // namespace

struct ValueComparer::Buffers {
    std::vector<double> retained;            // b - a of the first kRetainMax pairs
    std::vector<std::vector<float>> scratch; // per worker: a block of a, then of b
    std::vector<Part> parts;                 // per block
};

ValueComparer::ValueComparer(DiffOptions options)
    : m_options(std::move(options)), m_buffers(std::make_unique<Buffers>()) {}

ValueComparer::~ValueComparer() = default;

ElementDiff ValueComparer::compare(uint64_t count, const ValueReader& readA,
                                   const ValueReader& readB,
                                   const std::function<void(double)>& progressOverride) {
    const DiffOptions& o = m_options;
    const std::function<void(double)>& progress = progressOverride ? progressOverride : o.progress;
    Buffers& buf = *m_buffers;
    const uint64_t blocks = (count + kBlock - 1) / kBlock;
    const unsigned threads = workerCount(o.threads, blocks);
    const bool wantHistogram = o.bins > 0;
    const uint64_t retained = wantHistogram ? std::min(count, kRetainMax) : 0;
    const uint64_t retainedBlocks = (retained + kBlock - 1) / kBlock;
    if (buf.retained.size() < retained)
        buf.retained.resize(size_t(retained));
    if (buf.scratch.size() < threads)
        buf.scratch.resize(threads);
    buf.parts.assign(size_t(blocks), Part{});
    const double span1 = !wantHistogram ? 1.0 : count > kRetainMax ? 0.5 : 0.9;

    std::atomic<uint64_t> next{0}, done{0};
    std::atomic<bool> stop{false};
    auto cancelled = [&] {
        if (stop.load(std::memory_order_relaxed))
            return true;
        if (o.cancel && o.cancel->load(std::memory_order_relaxed)) {
            stop = true;
            return true;
        }
        return false;
    };
    // Reads block b of both sides into the worker's scratch.
    auto readBlock = [&](unsigned worker, uint64_t b, uint64_t n) {
        std::vector<float>& s = buf.scratch[worker];
        if (s.size() < 2 * kBlock)
            s.resize(2 * kBlock);
        readA(b * kBlock, n, s.data());
        readB(b * kBlock, n, s.data() + kBlock);
        return s.data();
    };
    auto run = [&](const std::function<void(unsigned, uint64_t, uint64_t)>& step, double from,
                   double span) {
        next = 0;
        done = 0;
        runOnThreads(threads, [&](unsigned worker) {
            try {
                while (!cancelled()) {
                    const uint64_t b = next.fetch_add(1);
                    if (b >= blocks)
                        break;
                    step(worker, b, std::min(kBlock, count - b * kBlock));
                    const uint64_t d = done.fetch_add(1) + 1;
                    if (progress)
                        progress(from + span * double(d) / double(blocks));
                }
            } catch (...) {
                stop = true;
                throw;
            }
        });
    };

    run(
        [&](unsigned worker, uint64_t b, uint64_t n) {
            const float* v = readBlock(worker, b, n);
            double* d = b < retainedBlocks ? buf.retained.data() + b * kBlock : nullptr;
            buf.parts[size_t(b)] = scanBlock(v, v + kBlock, n, o.atol, o.rtol, d);
        },
        0.0, span1);
    if (o.cancel && o.cancel->load())
        throw Cancelled{};

    ElementDiff r;
    r.count = count;
    double sumAbs = 0, sumSq = 0, aa = 0, bb = 0, ab = 0, maxAbs = 0, lo = kInf, hi = -kInf;
    for (const Part& p : buf.parts) {
        r.differing += p.differing;
        r.nanMismatch += p.nanMismatch;
        r.finitePairs += p.finite;
        sumAbs += p.sumAbs;
        sumSq += p.sumSq;
        aa += p.aa;
        bb += p.bb;
        ab += p.ab;
        maxAbs = std::max(maxAbs, p.maxAbs);
        lo = std::min(lo, p.lo);
        hi = std::max(hi, p.hi);
    }
    r.normA = std::sqrt(aa);
    r.normB = std::sqrt(bb);
    if (r.finitePairs == 0) {
        if (progress)
            progress(1.0);
        return r;
    }
    r.maxAbsDiff = maxAbs;
    r.meanAbsDiff = sumAbs / double(r.finitePairs);
    if (aa > 0)
        r.relL2 = std::sqrt(sumSq) / r.normA;
    if (aa > 0 && bb > 0)
        r.cosine = ab / (r.normA * r.normB);
    if (!wantHistogram)
        return r;

    Histogram& h = r.histogram;
    h.lo = lo;
    h.hi = hi;
    h.counts.assign(size_t(o.bins), 0);
    if (!(hi > lo)) {
        h.counts[0] = r.finitePairs; // one difference: everything in bin 0
        if (progress)
            progress(1.0);
        return r;
    }
    std::mutex mutex;
    std::vector<std::vector<uint64_t>> counts(threads, std::vector<uint64_t>(size_t(o.bins), 0));
    run(
        [&](unsigned worker, uint64_t b, uint64_t n) {
            std::vector<uint64_t>& c = counts[worker];
            if (b < retainedBlocks) {
                const double* d = buf.retained.data() + b * kBlock;
                for (uint64_t i = 0; i < n; ++i)
                    if (!std::isnan(d[i]))
                        ++c[h.binOf(d[i])];
                return;
            }
            const float* v = readBlock(worker, b, n);
            for (uint64_t i = 0; i < n; ++i)
                if (!special(v[i]) && !special(v[kBlock + i]))
                    ++c[h.binOf(double(v[kBlock + i]) - double(v[i]))];
        },
        span1, 1.0 - span1);
    if (o.cancel && o.cancel->load())
        throw Cancelled{};
    for (const auto& c : counts)
        for (size_t k = 0; k < c.size(); ++k)
            h.counts[k] += c[k];
    if (progress)
        progress(1.0);
    return r;
}

ElementDiff compareValues(uint64_t count, const ValueReader& a, const ValueReader& b,
                          const DiffOptions& options) {
    ValueComparer comparer(options);
    return comparer.compare(count, a, b);
}

ElementDiff compareValues(const float* a, const float* b, uint64_t count,
                          const DiffOptions& options) {
    auto from = [](const float* v) {
        return [v](uint64_t first, uint64_t n, float* out) {
            std::memcpy(out, v + first, size_t(n) * sizeof(float));
        };
    };
    return compareValues(count, from(a), from(b), options);
}

Histogram histogramOver(uint64_t count, const ValueReader& reader, double lo, double hi, int bins,
                        const std::atomic<bool>* cancel) {
    Histogram h;
    h.lo = lo;
    h.hi = hi;
    h.counts.assign(size_t(std::max(bins, 1)), 0);
    std::vector<float> block(size_t(std::min(count, kBlock)));
    for (uint64_t first = 0; first < count; first += kBlock) {
        if (cancel && cancel->load(std::memory_order_relaxed))
            throw Cancelled{};
        const uint64_t n = std::min(kBlock, count - first);
        reader(first, n, block.data());
        for (uint64_t i = 0; i < n; ++i)
            if (std::isfinite(block[i]))
                ++h.counts[h.binOf(block[i])];
    }
    return h;
}

} // namespace ckptscope
