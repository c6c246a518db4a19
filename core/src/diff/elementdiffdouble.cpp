#include "ckptscope/diff/elementdiff.h"

#include "stats/bincounter.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace ckptscope {

namespace {

constexpr uint64_t kBlock = uint64_t(1) << 16;
constexpr double kInf = std::numeric_limits<double>::infinity();
// Below this |value| no sum of up to 2^63 squares can overflow.
constexpr double kNoScale = 0x1p480;

// Pass 1: what needs no sums: counts, the largest |value|, the range of b - a.
struct Extremes {
    uint64_t differing = 0, nanMismatch = 0, infMismatch = 0, finite = 0, finiteDiffs = 0;
    double maxAbs = 0, maxValue = 0, lo = kInf, hi = -kInf;
};

// Pass 2: sums over the values times `scale`.
struct ScaledSums {
    double sumAbs = 0, sumSq = 0, aa = 0, bb = 0, ab = 0;
};

void firstPass(const double* a, const double* b, uint64_t n, const DiffOptions& o, Extremes& e) {
    for (uint64_t i = 0; i < n; ++i) {
        const double da = a[i], db = b[i];
        if (!std::isfinite(da) || !std::isfinite(db)) {
            const bool nanA = std::isnan(da), nanB = std::isnan(db);
            if (nanA != nanB) {
                ++e.differing;
                ++e.nanMismatch;
            } else if (!nanA && da != db) { // an infinity against anything but itself
                ++e.differing;
                ++e.infMismatch;
            }
            continue;
        }
        ++e.finite;
        const double diff = db - da; // infinite only when it passes the range
        const double ad = std::fabs(diff);
        e.differing += ad > o.atol + o.rtol * std::fabs(da);
        e.maxAbs = std::max(e.maxAbs, ad);
        e.maxValue = std::max({e.maxValue, std::fabs(da), std::fabs(db)});
        if (std::isfinite(diff)) {
            ++e.finiteDiffs;
            e.lo = std::min(e.lo, diff);
            e.hi = std::max(e.hi, diff);
        }
    }
}

// Powers of two for the values and for their differences.
struct Scales {
    double values = 1, diffs = 1;
    bool diffsOverflow = false; // some b - a passes the range: scaled as the values
};

void secondPass(const double* a, const double* b, uint64_t n, const Scales& scale, ScaledSums& s,
                std::vector<double>& diffs) {
    for (uint64_t i = 0; i < n; ++i) {
        const double da = a[i], db = b[i];
        diffs[size_t(i)] = db - da; // non-finite ones are not binned
        if (!std::isfinite(da) || !std::isfinite(db))
            continue;
        const double x = da * scale.values, y = db * scale.values;
        const double d = scale.diffsOverflow ? y - x : (db - da) * scale.diffs;
        s.sumAbs += std::fabs(d);
        s.sumSq += d * d;
        s.aa += x * x;
        s.bb += y * y;
        s.ab += x * y;
    }
}

} // namespace

ElementDiff compareValuesF64(uint64_t count, const ValueReaderF64& readA,
                             const ValueReaderF64& readB, const DiffOptions& options) {
    std::vector<double> a(size_t(std::min(count, kBlock))), b(a.size());
    const bool histogram = options.bins > 0;
    const auto pass = [&](double from, const auto& step) {
        for (uint64_t first = 0; first < count; first += kBlock) {
            options.throwIfCancelled();
            const uint64_t n = std::min(kBlock, count - first);
            readA(first, n, a.data());
            readB(first, n, b.data());
            step(n);
            options.report(from + 0.5 * double(first + n) / double(count));
        }
    };
    Extremes e;
    pass(0.0, [&](uint64_t n) { firstPass(a.data(), b.data(), n, options, e); });
    ElementDiff r;
    r.count = count;
    r.differing = e.differing;
    r.nanMismatch = e.nanMismatch;
    r.infMismatch = e.infMismatch;
    r.finitePairs = e.finite;
    if (e.finite == 0) {
        options.report(1.0);
        return r;
    }
    // Powers of two: scaling is exact but for values far below the largest.
    // Differences get their own, so that small ones do not vanish.
    const auto exponent = [](double m) { return m < kNoScale ? 0 : std::ilogb(m) + 1; };
    const int k = exponent(e.maxValue);
    const bool overflow = !std::isfinite(e.maxAbs);
    const int kd = overflow ? k : exponent(e.maxAbs);
    const Scales scale{std::ldexp(1.0, -k), std::ldexp(1.0, -kd), overflow};
    Histogram& h = r.histogram;
    if (histogram) {
        h.lo = e.lo;
        h.hi = e.hi;
        h.counts.assign(size_t(options.bins), 0);
        if (!(e.hi > e.lo))
            h.counts[0] = e.finiteDiffs;
    }
    stats::BinCounter<double> counter(h);
    const bool bin = histogram && e.hi > e.lo;
    ScaledSums s;
    std::vector<double> diffs(a.size());
    pass(0.5, [&](uint64_t n) {
        secondPass(a.data(), b.data(), n, scale, s, diffs);
        if (bin)
            counter.add(diffs.data(), n);
    });
    if (bin)
        counter.mergeInto(h.counts);
    const double normA = std::sqrt(s.aa), normB = std::sqrt(s.bb);
    r.normA = std::ldexp(normA, k);
    r.normB = std::ldexp(normB, k);
    r.maxAbsDiff = e.maxAbs;
    r.meanAbsDiff = std::ldexp(s.sumAbs / double(e.finite), kd);
    if (s.aa > 0)
        r.relL2 = std::ldexp(std::sqrt(s.sumSq) / normA, kd - k);
    if (s.aa > 0 && s.bb > 0)
        r.cosine = s.ab / (normA * normB);
    options.report(1.0);
    return r;
}

std::vector<std::string> overflowedFigures(const ElementDiff& d) {
    std::vector<std::string> out;
    const auto check = [&out](const char* name, const std::optional<double>& v) {
        if (v && !std::isfinite(*v))
            out.push_back(std::string(name) + ": overflows double");
    };
    check("max_abs_diff", d.maxAbsDiff);
    check("mean_abs_diff", d.meanAbsDiff);
    check("rel_l2", d.relL2);
    check("cosine", d.cosine);
    if (!d.histogram.counts.empty()) {
        uint64_t binned = 0;
        for (uint64_t c : d.histogram.counts)
            binned += c;
        if (binned < d.finitePairs)
            out.push_back("histogram: " + std::to_string(d.finitePairs - binned) + " of " +
                          std::to_string(d.finitePairs) +
                          " differences overflow double (not binned)");
    }
    return out;
}

} // namespace ckptscope
