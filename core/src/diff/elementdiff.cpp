#include "ckptscope/diff/elementdiff.h"

#include "ckptscope/io/mappedfile.h"

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

#include "stats/slicedbins.h"
#include "stats/statssimd.h"

#ifdef CKPTSCOPE_STATS_AVX2
#define CKPTSCOPE_DIFF_AVX2 1
#endif

namespace ckptscope {

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

using stats::valueAt;

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
        p.sumAbs += (sumAbs[0] + sumAbs[1]) + (sumAbs[2] + sumAbs[3]);
        p.sumSq += (sumSq[0] + sumSq[1]) + (sumSq[2] + sumSq[3]);
        p.aa += (aa[0] + aa[1]) + (aa[2] + aa[3]);
        p.bb += (bb[0] + bb[1]) + (bb[2] + bb[3]);
        p.ab += (ab[0] + ab[1]) + (ab[2] + ab[3]);
    }
};

// One pair: the rules for NaN and infinities, else the finite figures.
void addPair(Part& p, Lanes& lanes, int lane, float fa, float fb, double atol, double rtol,
             double* d) {
    if (special(fa) || special(fb)) {
        if (d)
            *d = kNaN;
        const bool nanA = std::isnan(fa), nanB = std::isnan(fb);
        if (nanA != nanB) {
            ++p.differing;
            ++p.nanMismatch;
        } else if (!nanA && fa != fb) { // an infinity against anything but itself
            ++p.differing;
        }
        return;
    }
    ++p.finite;
    lanes.add(lane, fa, fb, atol, rtol, d);
}

// Histogram bin of a difference by one multiplication; a value within
// `guard` of a bin edge (far beyond the few ulps the two ways of computing
// can differ) goes to Histogram::binOf, so the counts are exactly binOf's.
struct Binner {
    const Histogram& h;
    double lo, scale, guard;
    size_t bins;

    explicit Binner(const Histogram& histogram)
        : h(histogram), lo(h.lo), scale(double(h.counts.size()) / (h.hi - h.lo)),
          guard(double(h.counts.size()) * 0x1p-40), bins(h.counts.size()) {}

    size_t operator()(double v) const {
        const double pos = (v - lo) * scale;
        const auto whole = size_t(pos);
        const double frac = pos - double(whole);
        if (frac < guard || frac > 1.0 - guard || !(pos < double(bins)))
            return h.binOf(v);
        return whole;
    }
};

#ifdef CKPTSCOPE_DIFF_AVX2

using stats::combineLanes;
using stats::hsum;
using stats::useAvx2;
using stats::useAvx512;

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
                                                      double atol, double rtol, double* d, Part& p,
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
                addPair(p, lanes, k, valueAt(a, i + k), valueAt(b, i + k), atol, rtol,
                        d ? d + i + k : nullptr);
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
        if (d)
            _mm256_storeu_pd(d + i, diff);
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
                                     double rtol, double* d, Part& p, Lanes& lanes) {
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
                addPair(p, lanes, k & 3, valueAt(a, i + k), valueAt(b, i + k), atol, rtol,
                        d ? d + i + k : nullptr);
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
        if (d)
            _mm512_storeu_pd(d + i, diff);
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

// Bins four differences at a time; a group with a NaN or a value near a bin
// edge goes through the Binner one by one. Returns how many it took.
__attribute__((target("avx2,fma"))) uint64_t binAvx2(const double* d, uint64_t n,
                                                     const Binner& binner, uint64_t* counts) {
    const __m256d lo = _mm256_set1_pd(binner.lo), scale = _mm256_set1_pd(binner.scale);
    const __m256d guard = _mm256_set1_pd(binner.guard),
                  guardHi = _mm256_set1_pd(1.0 - binner.guard),
                  bins = _mm256_set1_pd(double(binner.bins));
    uint64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const __m256d v = _mm256_loadu_pd(d + i);
        const __m256d pos = _mm256_mul_pd(_mm256_sub_pd(v, lo), scale);
        const __m256d inRange = _mm256_cmp_pd(pos, bins, _CMP_LT_OQ); // false for NaN
        // Out-of-range lanes are zeroed before the conversion; they are checked anyway.
        const __m128i whole = _mm256_cvttpd_epi32(_mm256_and_pd(pos, inRange));
        const __m256d frac = _mm256_sub_pd(pos, _mm256_cvtepi32_pd(whole));
        const __m256d check =
            _mm256_or_pd(_mm256_or_pd(_mm256_cmp_pd(frac, guard, _CMP_NGE_UQ),
                                      _mm256_cmp_pd(frac, guardHi, _CMP_GT_OQ)),
                         _mm256_xor_pd(inRange, _mm256_castsi256_pd(_mm256_set1_epi64x(-1))));
        if (_mm256_movemask_pd(check)) {
            for (int k = 0; k < 4; ++k)
                if (!std::isnan(d[i + k]))
                    ++counts[binner(d[i + k])];
            continue;
        }
        alignas(16) int32_t at[4];
        _mm_store_si128(reinterpret_cast<__m128i*>(at), whole);
        ++counts[at[0]];
        ++counts[at[1]];
        ++counts[at[2]];
        ++counts[at[3]];
    }
    return i;
}

// Bins of sixteen differences for SlicedBins, as in the float statistics
// (statshistogram.cpp, FloatBins) but in double: q = (v - lo) × scale +
// guard in one FMA is within a few units of 2^-53 × bins of binOf's
// position + guard, far inside the guard (bins × 2^-40). Where q's fraction
// is at least 2 × guard, floor(q) is binOf's bin; other lanes (near an edge,
// the maximum, NaN) go through the Binner one by one.
template <bool Tail> struct DoubleBins {
    const double* d;
    uint64_t i, n;
    const Binner& binner;
    uint64_t* counts;
    __m512d lo, scale, guard, twoGuards;

    CKPTSCOPE_AVX512 __attribute__((always_inline)) inline __mmask8 near(__m512d q,
                                                                         __mmask8 valid) {
        const __m512d fraction = _mm512_reduce_pd(q, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        return _mm512_mask_cmp_pd_mask(valid, fraction, twoGuards, _CMP_NGE_UQ);
    }

    CKPTSCOPE_AVX512 __attribute__((always_inline)) inline stats::SixteenBins operator()() {
        __mmask8 valid0 = 0xff, valid1 = 0xff;
        if constexpr (Tail) {
            const uint64_t left = n - i;
            valid0 = left >= 8 ? __mmask8(0xff) : __mmask8((1u << left) - 1);
            valid1 = left >= 16  ? __mmask8(0xff)
                     : left <= 8 ? __mmask8(0)
                                 : __mmask8((1u << (left - 8)) - 1);
        }
        const __m512d q0 =
            _mm512_fmadd_pd(_mm512_sub_pd(_mm512_maskz_loadu_pd(valid0, d + i), lo), scale, guard);
        const __m512d q1 = _mm512_fmadd_pd(
            _mm512_sub_pd(_mm512_maskz_loadu_pd(valid1, d + i + 8), lo), scale, guard);
        const __mmask8 near0 = near(q0, valid0), near1 = near(q1, valid1);
        const unsigned nearAll = unsigned(near0) | unsigned(near1) << 8;
        for (unsigned lanes = nearAll; lanes; lanes &= lanes - 1) { // rare
            const double v = d[i + unsigned(__builtin_ctz(lanes))];
            if (!std::isnan(v))
                ++counts[binner(v)];
        }
        i += 16;
        const __mmask8 take0 = valid0 & ~near0, take1 = valid1 & ~near1;
        // (maskz forms: GCC 12 warns of the plain ones' undefined operand)
        const __m512i bins = _mm512_maskz_inserti64x4(
            0xff, _mm512_castsi256_si512(_mm512_maskz_cvttpd_epi32(take0, q0)),
            _mm512_maskz_cvttpd_epi32(take1, q1), 1);
        return {bins, __mmask16(unsigned(take0) | unsigned(take1) << 8)};
    }
};

// All n differences of d into `sliced`, the few it cannot vouch for into
// `counts` by the Binner.
CKPTSCOPE_AVX512 void binAvx512(const double* d, uint64_t n, const Binner& binner,
                                stats::SlicedBins& sliced, uint64_t* counts) {
    const __m512d lo = _mm512_set1_pd(binner.lo), scale = _mm512_set1_pd(binner.scale),
                  guard = _mm512_set1_pd(binner.guard),
                  twoGuards = _mm512_set1_pd(2 * binner.guard);
    DoubleBins<false> full{d, 0, n, binner, counts, lo, scale, guard, twoGuards};
    DoubleBins<true> tail{d, n - n % 256, n, binner, counts, lo, scale, guard, twoGuards};
    stats::countValues(sliced, n, full, tail);
}

CKPTSCOPE_AVX512_END

#endif // CKPTSCOPE_DIFF_AVX2

// One block; writes b - a to d (when non-null), NaN where a pair is not
// finite on both sides.
Part scanBlock(const float* a, const float* b, uint64_t n, double atol, double rtol, double* d) {
    Part p;
    Lanes lanes;
    uint64_t i = 0;
#ifdef CKPTSCOPE_DIFF_AVX2
    if (useAvx512())
        i = scanAvx512(a, b, n, atol, rtol, d, p, lanes);
    else if (useAvx2())
        i = scanAvx2(a, b, n, atol, rtol, d, p, lanes);
#endif
    for (; i < n; ++i)
        addPair(p, lanes, int(i & 3), valueAt(a, i), valueAt(b, i), atol, rtol,
                d ? d + i : nullptr);
    lanes.into(p); // adds to what the vector loop summed
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
                                   const std::function<void(double)>& progress) {
    return compareImpl(count, &readA, &readB, nullptr, nullptr, progress);
}

ElementDiff ValueComparer::compare(uint64_t count, const MappedValues& a, const MappedValues& b,
                                   const std::function<void(double)>& progress) {
    return compareImpl(count, nullptr, nullptr, &a, &b, progress);
}

// Both sides are read block by block into the worker's scratch (readers), or
// scanned in place in their maps (mapA, mapB).
ElementDiff ValueComparer::compareImpl(uint64_t count, const ValueReader* readA,
                                       const ValueReader* readB, const MappedValues* mapA,
                                       const MappedValues* mapB,
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
        (*readA)(b * kBlock, n, s.data());
        (*readB)(b * kBlock, n, s.data() + kBlock);
        return s.data();
    };
    // Runs use(a, b) over block b of both sides: read, or in place in the
    // two maps, inside MappedFile::access (so `use` is a plain loop), whose
    // pages are released afterwards.
    auto withBlock = [&](unsigned worker, uint64_t b, uint64_t n, auto& use) {
        if (!mapA) {
            const float* v = readBlock(worker, b, n);
            use(v, v + kBlock);
            return;
        }
        const MappedFile::Window w[2] = {{mapA->file, mapA->offset + b * kBlock * 4, n * 4},
                                         {mapB->file, mapB->offset + b * kBlock * 4, n * 4}};
        auto body = [&use, va = reinterpret_cast<const float*>(w[0].file->data() + w[0].offset),
                     vb = reinterpret_cast<const float*>(w[1].file->data() +
                                                         w[1].offset)]() noexcept { use(va, vb); };
        MappedFile::access(w, 2, body);
        for (const MappedFile::Window& x : w)
            x.file->release(x.offset, x.length);
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
            double* d = b < retainedBlocks ? buf.retained.data() + b * kBlock : nullptr;
            Part* const out = &buf.parts[size_t(b)];
            auto scan = [out, d, n, &o](const float* va, const float* vb) noexcept {
                *out = scanBlock(va, vb, n, o.atol, o.rtol, d);
            };
            withBlock(worker, b, n, scan);
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
    const Binner binner(h);
    std::vector<std::vector<uint64_t>> counts(threads, std::vector<uint64_t>(size_t(o.bins), 0));
#ifdef CKPTSCOPE_DIFF_AVX2
    // Bit-sliced counting (AVX-512) needs a scale that is a normal double.
    std::vector<std::unique_ptr<stats::SlicedBins>> sliced;
    if (o.bins <= int(stats::SlicedBins::kMaxBins) && stats::useAvx512() &&
        std::isfinite(binner.scale) && binner.scale >= std::numeric_limits<double>::min())
        for (unsigned k = 0; k < threads; ++k)
            sliced.push_back(std::make_unique<stats::SlicedBins>(unsigned(o.bins)));
#endif
    run(
        [&](unsigned worker, uint64_t b, uint64_t n) {
            std::vector<uint64_t>& c = counts[worker];
            if (b < retainedBlocks) {
                const double* d = buf.retained.data() + b * kBlock;
                uint64_t i = 0;
#ifdef CKPTSCOPE_DIFF_AVX2
                if (!sliced.empty()) {
                    binAvx512(d, n, binner, *sliced[worker], c.data());
                    return;
                }
                if (useAvx2())
                    i = binAvx2(d, n, binner, c.data());
#endif
                for (; i < n; ++i)
                    if (!std::isnan(d[i]))
                        ++c[binner(d[i])];
                return;
            }
            uint64_t* const into = c.data();
            auto bin = [into, n, &binner](const float* va, const float* vb) noexcept {
                for (uint64_t i = 0; i < n; ++i) {
                    const float fa = valueAt(va, i), fb = valueAt(vb, i);
                    if (!special(fa) && !special(fb))
                        ++into[binner(double(fb) - double(fa))];
                }
            };
            withBlock(worker, b, n, bin);
        },
        span1, 1.0 - span1);
    if (o.cancel && o.cancel->load())
        throw Cancelled{};
#ifdef CKPTSCOPE_DIFF_AVX2
    for (size_t k = 0; k < sliced.size(); ++k)
        sliced[k]->drainInto(counts[k].data());
#endif
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
