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

// Element i of values with `Parts` parts each (1: real, 2: complex).
template <int Parts> struct Element {
    const double* p;
    bool hasNan() const { return std::isnan(p[0]) || (Parts == 2 && std::isnan(p[1])); }
    bool finite() const { return std::isfinite(p[0]) && (Parts == 1 || std::isfinite(p[1])); }
    bool operator==(const Element& o) const {
        return p[0] == o.p[0] && (Parts == 1 || p[1] == o.p[1]);
    }
    double magnitude() const { return Parts == 1 ? std::fabs(p[0]) : std::hypot(p[0], p[1]); }
    double largestPart() const {
        return Parts == 1 ? std::fabs(p[0]) : std::max(std::fabs(p[0]), std::fabs(p[1]));
    }
};

// What the histogram bins for a pair of finite values: b − a, or for
// complex values |b − a|.
template <int Parts> double binned(const double* a, const double* b) {
    return Parts == 1 ? b[0] - a[0] : std::hypot(b[0] - a[0], b[1] - a[1]);
}

template <int Parts>
void firstPass(const double* a, const double* b, uint64_t n, const DiffOptions& o, Extremes& e) {
    for (uint64_t i = 0; i < n; ++i) {
        const Element<Parts> x{a + i * Parts}, y{b + i * Parts};
        if (!x.finite() || !y.finite()) {
            const bool nanA = x.hasNan(), nanB = y.hasNan();
            if (nanA != nanB) {
                ++e.differing;
                ++e.nanMismatch;
            } else if (!nanA && !(x == y)) { // an infinity against anything but itself
                ++e.differing;
                ++e.infMismatch;
            }
            continue;
        }
        ++e.finite;
        const double diff = binned<Parts>(x.p, y.p); // infinite only when it passes the range
        const double ad = std::fabs(diff);
        e.differing += ad > o.atol + o.rtol * x.magnitude();
        e.maxAbs = std::max(e.maxAbs, ad);
        e.maxValue = std::max({e.maxValue, x.largestPart(), y.largestPart()});
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

template <int Parts>
void secondPass(const double* a, const double* b, uint64_t n, const Scales& scale, ScaledSums& s,
                std::vector<double>& diffs) {
    for (uint64_t i = 0; i < n; ++i) {
        const double *pa = a + i * Parts, *pb = b + i * Parts;
        const bool finite = Element<Parts>{pa}.finite() && Element<Parts>{pb}.finite();
        // Non-finite differences are not binned.
        diffs[size_t(i)] =
            finite || Parts == 1 ? binned<Parts>(pa, pb) : std::numeric_limits<double>::quiet_NaN();
        if (!finite)
            continue;
        double d[Parts];
        for (int k = 0; k < Parts; ++k) {
            const double x = pa[k] * scale.values, y = pb[k] * scale.values;
            d[k] = scale.diffsOverflow ? y - x : (pb[k] - pa[k]) * scale.diffs;
            s.sumSq += d[k] * d[k];
            s.aa += x * x;
            s.bb += y * y;
            s.ab += x * y;
        }
        s.sumAbs += Parts == 1 ? std::fabs(d[0]) : std::hypot(d[0], d[Parts - 1]);
    }
}

template <int Parts>
ElementDiff compareInDouble(uint64_t count, const ValueReaderF64& readA,
                            const ValueReaderF64& readB, const DiffOptions& options) {
    std::vector<double> a(size_t(std::min(count, kBlock)) * Parts), b(a.size());
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
    pass(0.0, [&](uint64_t n) { firstPass<Parts>(a.data(), b.data(), n, options, e); });
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
    std::vector<double> diffs(a.size() / Parts);
    pass(0.5, [&](uint64_t n) {
        secondPass<Parts>(a.data(), b.data(), n, scale, s, diffs);
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

} // namespace

ElementDiff compareValuesF64(uint64_t count, const ValueReaderF64& a, const ValueReaderF64& b,
                             const DiffOptions& options) {
    return compareInDouble<1>(count, a, b, options);
}

ElementDiff compareComplex(uint64_t count, const ValueReaderF64& a, const ValueReaderF64& b,
                           const DiffOptions& options) {
    return compareInDouble<2>(count, a, b, options);
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
