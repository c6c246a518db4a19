#include "ckptscope/diff/elementdiff.h"

#include "ckptscope/io/mappedfile.h"

#include "stats/bincounter.h"
#include "stats/blockworkers.h"
#include "stats/statskernels.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "common/simd.h"

#ifdef CKPTSCOPE_STATS_AVX2
#define CKPTSCOPE_DIFF_AVX2 1
#endif

namespace ckptscope {

bool elementsDiffer(double a, double b, double atol, double rtol) {
    const bool nanA = std::isnan(a), nanB = std::isnan(b);
    if (nanA || nanB)
        return nanA != nanB;
    if (std::isinf(a) || std::isinf(b))
        return a != b;
    return std::fabs(b - a) > atol + rtol * std::fabs(a);
}

bool elementsDiffer(std::complex<double> a, std::complex<double> b, double atol, double rtol) {
    const bool nanA = std::isnan(a.real()) || std::isnan(a.imag());
    const bool nanB = std::isnan(b.real()) || std::isnan(b.imag());
    if (nanA || nanB)
        return nanA != nanB;
    if (std::isinf(a.real()) || std::isinf(a.imag()) || std::isinf(b.real()) ||
        std::isinf(b.imag()))
        return a != b;
    return std::abs(b - a) > atol + rtol * std::abs(a);
}

std::optional<double> parseTolerance(std::string_view text) {
    if (text.empty())
        return std::nullopt;
    double x = 0;
    const char* end = text.data() + text.size();
    const auto [p, ec] = std::from_chars(text.data(), end, x);
    if (ec != std::errc() || p != end || !std::isfinite(x) || x < 0)
        return std::nullopt;
    return x;
}

namespace {

// Values per block: 256 KiB of each side, still in cache when scanned right
// after being read. The partition does not depend on the thread count.
constexpr uint64_t kBlock = uint64_t(1) << 16;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Results of one block, merged in block order.
struct Part {
    uint64_t differing = 0, nanMismatch = 0, infMismatch = 0, finite = 0;
    double maxAbs = 0, sumAbs = 0, sumSq = 0, aa = 0, bb = 0, ab = 0;
    double lo = kInf, hi = -kInf; // range of b - a
};

bool special(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return (bits & 0x7f800000u) == 0x7f800000u; // NaN or ±Inf
}

// Sums of one block in four lanes, so the additions pipeline.
struct Lanes {
    double sumAbs[4] = {}, sumSq[4] = {}, aa[4] = {}, bb[4] = {}, ab[4] = {};
    double maxAbs[4] = {}, lo[4] = {kInf, kInf, kInf, kInf}, hi[4] = {-kInf, -kInf, -kInf, -kInf};
    uint64_t differing[4] = {};

    void add(int k, double da, double db, double atol, double rtol) {
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
    }

    void into(Part& p) const {
        for (int k = 0; k < 4; ++k) {
            p.differing += differing[k];
            p.maxAbs = std::max(p.maxAbs, maxAbs[k]);
            p.lo = std::min(p.lo, lo[k]);
            p.hi = std::max(p.hi, hi[k]);
        }
        p.sumAbs += (sumAbs[0] + sumAbs[1]) + (sumAbs[2] + sumAbs[3]);
        p.sumSq += (sumSq[0] + sumSq[1]) + (sumSq[2] + sumSq[3]);
        p.aa += (aa[0] + aa[1]) + (aa[2] + aa[3]);
        p.bb += (bb[0] + bb[1]) + (bb[2] + bb[3]);
        p.ab += (ab[0] + ab[1]) + (ab[2] + ab[3]);
    }
};

// One pair: the rules for NaN and infinities, else the finite figures.
void addPair(Part& p, Lanes& lanes, int lane, float fa, float fb, double atol, double rtol) {
    if (special(fa) || special(fb)) {
        const bool nanA = std::isnan(fa), nanB = std::isnan(fb);
        if (nanA != nanB) {
            ++p.differing;
            ++p.nanMismatch;
        } else if (!nanA && fa != fb) { // an infinity against anything but itself
            ++p.differing;
            ++p.infMismatch;
        }
        return;
    }
    ++p.finite;
    lanes.add(lane, fa, fb, atol, rtol);
}

#ifdef CKPTSCOPE_DIFF_AVX2

using simd::combineLanes;
using simd::hsum;
using simd::useAvx2;
using simd::useAvx512;

__attribute__((target("avx2,fma"))) double hmax(__m256d x) {
    const __m128d s = _mm_max_pd(_mm256_castpd256_pd128(x), _mm256_extractf128_pd(x, 1));
    return std::max(_mm_cvtsd_f64(s), _mm_cvtsd_f64(_mm_unpackhi_pd(s, s)));
}

__attribute__((target("avx2,fma"))) double hmin(__m256d x) {
    const __m128d s = _mm_min_pd(_mm256_castpd256_pd128(x), _mm256_extractf128_pd(x, 1));
    return std::min(_mm_cvtsd_f64(s), _mm_cvtsd_f64(_mm_unpackhi_pd(s, s)));
}

// Four pairs at a time in double (exact widening, FMA for the products):
// the same figures as Lanes::add, summed in another order; a group holding
// NaN or Inf goes through addPair. Returns how many pairs it took.
__attribute__((target("avx2,fma"))) uint64_t scanAvx2(const float* a, const float* b, uint64_t n,
                                                      double atol, double rtol, Part& p,
                                                      Lanes& lanes) {
    const __m128i expMask = _mm_set1_epi32(0x7f800000);
    const __m256d sign = _mm256_set1_pd(-0.0), vatol = _mm256_set1_pd(atol),
                  vrtol = _mm256_set1_pd(rtol);
    __m256d maxAbs = _mm256_setzero_pd(), sumAbs = maxAbs, sumSq = maxAbs, aa = maxAbs, bb = maxAbs,
            ab = maxAbs;
    __m256d lo = _mm256_set1_pd(kInf), hi = _mm256_set1_pd(-kInf);
    __m256i differing = _mm256_setzero_si256();
    uint64_t i = 0;
    uint64_t finite = 0;
    for (; i + 4 <= n; i += 4) {
        const __m128 fa = _mm_loadu_ps(a + i), fb = _mm_loadu_ps(b + i);
        const __m128i special =
            _mm_or_si128(_mm_cmpeq_epi32(_mm_and_si128(_mm_castps_si128(fa), expMask), expMask),
                         _mm_cmpeq_epi32(_mm_and_si128(_mm_castps_si128(fb), expMask), expMask));
        if (!_mm_testz_si128(special, special)) { // NaN or Inf among the four: rare
            for (int k = 0; k < 4; ++k)
                addPair(p, lanes, k, valueAt(a, i + k), valueAt(b, i + k), atol, rtol);
            continue;
        }
        finite += 4;
        const __m256d da = _mm256_cvtps_pd(fa);
        const __m256d db = _mm256_cvtps_pd(fb);
        const __m256d diff = _mm256_sub_pd(db, da);
        const __m256d ad = _mm256_andnot_pd(sign, diff);
        // atol + rtol |a| rounded twice, as the plain loop: no FMA here.
        const __m256d tol = _mm256_add_pd(_mm256_mul_pd(vrtol, _mm256_andnot_pd(sign, da)), vatol);
        differing =
            _mm256_sub_epi64(differing, _mm256_castpd_si256(_mm256_cmp_pd(ad, tol, _CMP_GT_OQ)));
        maxAbs = _mm256_max_pd(maxAbs, ad);
        sumAbs = _mm256_add_pd(sumAbs, ad);
        sumSq = _mm256_fmadd_pd(diff, diff, sumSq);
        aa = _mm256_fmadd_pd(da, da, aa);
        bb = _mm256_fmadd_pd(db, db, bb);
        ab = _mm256_fmadd_pd(da, db, ab);
        lo = _mm256_min_pd(lo, diff);
        hi = _mm256_max_pd(hi, diff);
    }
    alignas(32) uint64_t counts[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(counts), differing);
    p.finite += finite;
    p.differing += counts[0] + counts[1] + counts[2] + counts[3];
    p.maxAbs = std::max(p.maxAbs, hmax(maxAbs));
    p.sumAbs += hsum(sumAbs);
    p.sumSq += hsum(sumSq);
    p.aa += hsum(aa);
    p.bb += hsum(bb);
    p.ab += hsum(ab);
    p.lo = std::min(p.lo, hmin(lo));
    p.hi = std::max(p.hi, hmax(hi));
    return i;
}

CKPTSCOPE_AVX512_BEGIN

// Eight pairs at a time, as scanAvx2 with twice the lanes.
CKPTSCOPE_AVX512 uint64_t scanAvx512(const float* a, const float* b, uint64_t n, double atol,
                                     double rtol, Part& p, Lanes& lanes) {
    const __m512d vatol = _mm512_set1_pd(atol), vrtol = _mm512_set1_pd(rtol);
    const __m512i one = _mm512_set1_epi64(1);
    __m512d maxAbs = _mm512_setzero_pd(), sumAbs = maxAbs, sumSq = maxAbs, aa = maxAbs, bb = maxAbs,
            ab = maxAbs;
    __m512d lo = _mm512_set1_pd(kInf), hi = _mm512_set1_pd(-kInf);
    __m512i differing = _mm512_setzero_si512();
    uint64_t i = 0;
    uint64_t finite = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 fa = _mm256_loadu_ps(a + i), fb = _mm256_loadu_ps(b + i);
        // Quiet or signalling NaN, ±Inf on either side: rare.
        if (_mm256_fpclass_ps_mask(fa, 0x99) | _mm256_fpclass_ps_mask(fb, 0x99)) {
            for (int k = 0; k < 8; ++k)
                addPair(p, lanes, k & 3, valueAt(a, i + k), valueAt(b, i + k), atol, rtol);
            continue;
        }
        finite += 8;
        // (maskz forms: GCC 12 warns of the plain ones' undefined operand)
        const __m512d da = _mm512_maskz_cvtps_pd(0xff, fa);
        const __m512d db = _mm512_maskz_cvtps_pd(0xff, fb);
        const __m512d diff = _mm512_sub_pd(db, da);
        const __m512d ad = _mm512_abs_pd(diff);
        // atol + rtol |a| rounded twice, as the plain loop: no FMA here.
        const __m512d tol = _mm512_add_pd(_mm512_mul_pd(vrtol, _mm512_abs_pd(da)), vatol);
        differing = _mm512_mask_add_epi64(differing, _mm512_cmp_pd_mask(ad, tol, _CMP_GT_OQ),
                                          differing, one);
        maxAbs = _mm512_max_pd(maxAbs, ad);
        sumAbs = _mm512_add_pd(sumAbs, ad);
        sumSq = _mm512_fmadd_pd(diff, diff, sumSq);
        aa = _mm512_fmadd_pd(da, da, aa);
        bb = _mm512_fmadd_pd(db, db, bb);
        ab = _mm512_fmadd_pd(da, db, ab);
        lo = _mm512_min_pd(lo, diff);
        hi = _mm512_max_pd(hi, diff);
    }
    const auto add = [](auto x, auto y) { return x + y; };
    const auto least = [](double x, double y) { return std::min(x, y); };
    const auto most = [](double x, double y) { return std::max(x, y); };
    p.finite += finite;
    p.differing += combineLanes<uint64_t>(differing, add);
    p.maxAbs = std::max(p.maxAbs, combineLanes<double>(maxAbs, most));
    p.sumAbs += combineLanes<double>(sumAbs, add);
    p.sumSq += combineLanes<double>(sumSq, add);
    p.aa += combineLanes<double>(aa, add);
    p.bb += combineLanes<double>(bb, add);
    p.ab += combineLanes<double>(ab, add);
    p.lo = std::min(p.lo, combineLanes<double>(lo, least));
    p.hi = std::max(p.hi, combineLanes<double>(hi, most));
    return i;
}

CKPTSCOPE_AVX512_END

#endif // CKPTSCOPE_DIFF_AVX2

// The figures of one block.
Part scanBlock(const float* a, const float* b, uint64_t n, double atol, double rtol) {
    Part p;
    Lanes lanes;
    uint64_t i = 0;
#ifdef CKPTSCOPE_DIFF_AVX2
    if (useAvx512())
        i = scanAvx512(a, b, n, atol, rtol, p, lanes);
    else if (useAvx2())
        i = scanAvx2(a, b, n, atol, rtol, p, lanes);
#endif
    for (; i < n; ++i)
        addPair(p, lanes, int(i & 3), valueAt(a, i), valueAt(b, i), atol, rtol);
    lanes.into(p); // adds to what the vector loop summed
    return p;
}

} // namespace

struct ValueComparer::Buffers {
    std::vector<std::vector<float>> scratch; // per worker: a block of a, then of b
    std::vector<std::vector<double>> diffs;  // per worker: b - a of a block (pass 2)
    std::vector<Part> parts;                 // per block
};

namespace {

// The sums of the block results, in block order.
struct Totals {
    double sumAbs = 0, sumSq = 0, aa = 0, bb = 0, ab = 0, maxAbs = 0, lo = kInf, hi = -kInf;
};

Totals mergeParts(const std::vector<Part>& parts, ElementDiff& r) {
    Totals t;
    for (const Part& p : parts) {
        r.differing += p.differing;
        r.nanMismatch += p.nanMismatch;
        r.infMismatch += p.infMismatch;
        r.finitePairs += p.finite;
        t.sumAbs += p.sumAbs;
        t.sumSq += p.sumSq;
        t.aa += p.aa;
        t.bb += p.bb;
        t.ab += p.ab;
        t.maxAbs = std::max(t.maxAbs, p.maxAbs);
        t.lo = std::min(t.lo, p.lo);
        t.hi = std::max(t.hi, p.hi);
    }
    r.normA = std::sqrt(t.aa);
    r.normB = std::sqrt(t.bb);
    if (r.finitePairs == 0)
        return t;
    r.maxAbsDiff = t.maxAbs;
    r.meanAbsDiff = t.sumAbs / double(r.finitePairs);
    if (t.aa > 0)
        r.relL2 = std::sqrt(t.sumSq) / r.normA;
    if (t.aa > 0 && t.bb > 0)
        r.cosine = t.ab / (r.normA * r.normB);
    return t;
}

// b - a of n pairs into d, NaN where a pair is not finite on both sides.
void differences(const float* a, const float* b, uint64_t n, double* d) {
    for (uint64_t i = 0; i < n; ++i) {
        const float fa = valueAt(a, i), fb = valueAt(b, i);
        d[i] = special(fa) || special(fb) ? kNaN : double(fb) - double(fa);
    }
}

} // namespace

// The two passes of one comparison over the blocks of both sides: (1) the
// figures of each block, (2) the histogram of b - a, reading each block
// again. Both sides are read block by block into the worker's scratch
// (readers), or scanned in place in their maps (mapA, mapB). (Keeping the
// first 2^21 differences of pass 1 for pass 2 instead measured slower: the
// fresh memory's page faults cost more than reading the page cache again.)
class ValueComparer::Passes {
public:
    Passes(uint64_t count, const ValueReader* readA, const ValueReader* readB,
           const MappedValues* mapA, const MappedValues* mapB, const DiffOptions& options,
           const std::function<void(double)>& progress, Buffers& buffers)
        : m_count(count), m_readA(readA), m_readB(readB), m_mapA(mapA), m_mapB(mapB), m_o(options),
          m_control(options.cancel, progress ? progress : options.progress), m_buf(buffers),
          m_blocks((count + kBlock - 1) / kBlock),
          m_threads(workerCount(options.threads, m_blocks)),
          m_span1(options.bins <= 0 ? 1.0 : 0.5) {}

    ElementDiff run();

private:
    using Step = std::function<void(unsigned worker, uint64_t block, uint64_t n)>;
    void prepareBuffers();
    const float* readBlock(unsigned worker, uint64_t b, uint64_t n);
    template <typename Use> void withBlock(unsigned worker, uint64_t b, uint64_t n, Use& use);
    void runBlocks(const Step& step, double from, double span);
    void scanPass();
    void histogramPass(Histogram& h);

    const uint64_t m_count;
    const ValueReader *const m_readA, *const m_readB;
    const MappedValues *const m_mapA, *const m_mapB;
    const DiffOptions& m_o;
    const TaskControl m_control; // the options' flag, the call's progress
    Buffers& m_buf;
    const uint64_t m_blocks;
    const unsigned m_threads;
    const double m_span1; // share of the progress for pass 1
    std::atomic<uint64_t> m_next{0}, m_done{0};
    std::atomic<bool> m_stop{false};
};

void ValueComparer::Passes::prepareBuffers() {
    if (m_buf.scratch.size() < m_threads)
        m_buf.scratch.resize(m_threads);
    if (m_buf.diffs.size() < m_threads)
        m_buf.diffs.resize(m_threads);
    m_buf.parts.assign(size_t(m_blocks), Part{});
}

// Reads block b of both sides into the worker's scratch.
const float* ValueComparer::Passes::readBlock(unsigned worker, uint64_t b, uint64_t n) {
    std::vector<float>& s = m_buf.scratch[worker];
    if (s.size() < 2 * kBlock)
        s.resize(2 * kBlock);
    (*m_readA)(b * kBlock, n, s.data());
    (*m_readB)(b * kBlock, n, s.data() + kBlock);
    return s.data();
}

// Runs use(a, b) over block b of both sides: read, or in place in the two
// maps, inside MappedFile::access (so `use` is a plain loop), whose pages are
// released afterwards.
template <typename Use>
void ValueComparer::Passes::withBlock(unsigned worker, uint64_t b, uint64_t n, Use& use) {
    if (!m_mapA) {
        const float* v = readBlock(worker, b, n);
        use(v, v + kBlock);
        return;
    }
    const MappedFile::Window w[2] = {{m_mapA->file, m_mapA->offset + b * kBlock * 4, n * 4},
                                     {m_mapB->file, m_mapB->offset + b * kBlock * 4, n * 4}};
    auto body = [&use, va = reinterpret_cast<const float*>(w[0].file->data() + w[0].offset),
                 vb = reinterpret_cast<const float*>(w[1].file->data() + w[1].offset)]() noexcept {
        use(va, vb);
    };
    MappedFile::access(w, 2, body);
    for (const MappedFile::Window& x : w)
        x.file->release(x.offset, x.length);
}

// step(worker, b, n) for every block on the threads; progress over
// [from, from + span]. Throws Cancelled when asked to stop.
void ValueComparer::Passes::runBlocks(const Step& step, double from, double span) {
    m_next = 0;
    m_done = 0;
    runOnThreads(m_threads, [&](unsigned worker) {
        try {
            while (!m_stop.load(std::memory_order_relaxed) && !m_control.cancelled()) {
                const uint64_t b = m_next.fetch_add(1);
                if (b >= m_blocks)
                    break;
                step(worker, b, std::min(kBlock, m_count - b * kBlock));
                const uint64_t d = m_done.fetch_add(1) + 1;
                m_control.report(from + span * double(d) / double(m_blocks));
            }
        } catch (...) {
            m_stop = true;
            throw;
        }
    });
    m_control.throwIfCancelled();
}

void ValueComparer::Passes::scanPass() {
    runBlocks(
        [&](unsigned worker, uint64_t b, uint64_t n) {
            Part* const out = &m_buf.parts[size_t(b)];
            auto scan = [out, n, this](const float* va, const float* vb) noexcept {
                *out = scanBlock(va, vb, n, m_o.atol, m_o.rtol);
            };
            withBlock(worker, b, n, scan);
        },
        0.0, m_span1);
}

void ValueComparer::Passes::histogramPass(Histogram& h) {
    std::vector<std::unique_ptr<stats::BinCounter<double>>> counters(m_threads);
    for (auto& c : counters)
        c = std::make_unique<stats::BinCounter<double>>(h);
    runBlocks(
        [&](unsigned worker, uint64_t b, uint64_t n) {
            std::vector<double>& d = m_buf.diffs[worker];
            if (d.size() < kBlock)
                d.resize(kBlock);
            auto differ = [to = d.data(), n](const float* va, const float* vb) noexcept {
                differences(va, vb, n, to);
            };
            withBlock(worker, b, n, differ);
            counters[worker]->add(d.data(), n);
        },
        m_span1, 1.0 - m_span1);
    for (auto& c : counters)
        c->mergeInto(h.counts);
}

ElementDiff ValueComparer::Passes::run() {
    prepareBuffers();
    scanPass();
    ElementDiff r;
    r.count = m_count;
    const Totals t = mergeParts(m_buf.parts, r);
    if (r.finitePairs == 0) {
        m_control.report(1.0);
        return r;
    }
    if (m_o.bins <= 0)
        return r;
    Histogram& h = r.histogram;
    h.lo = t.lo;
    h.hi = t.hi;
    h.counts.assign(size_t(m_o.bins), 0);
    if (!(t.hi > t.lo))
        h.counts[0] = r.finitePairs; // one difference: everything in bin 0
    else
        histogramPass(h);
    m_control.report(1.0);
    return r;
}

ValueComparer::ValueComparer(DiffOptions options)
    : m_options(std::move(options)), m_buffers(std::make_unique<Buffers>()) {}

ValueComparer::~ValueComparer() = default;

ElementDiff ValueComparer::compare(uint64_t count, const ValueReader& readA,
                                   const ValueReader& readB,
                                   const std::function<void(double)>& progress) {
    return Passes(count, &readA, &readB, nullptr, nullptr, m_options, progress, *m_buffers).run();
}

ElementDiff ValueComparer::compare(uint64_t count, const MappedValues& a, const MappedValues& b,
                                   const std::function<void(double)>& progress) {
    return Passes(count, nullptr, nullptr, &a, &b, m_options, progress, *m_buffers).run();
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

} // namespace ckptscope
