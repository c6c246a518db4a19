#include "diff/integerdiff.h"

#include "stats/bincounter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace ckptscope {

namespace {

__extension__ typedef __int128 i128; // GCC and Clang; -Wpedantic off
__extension__ typedef unsigned __int128 u128;

constexpr uint64_t kBlock = uint64_t(1) << 16;

void widen(Dtype dtype, const uint8_t* raw, uint64_t n, i128* out) {
    stats::withIntegerType(dtype, [&](auto type) {
        using T = decltype(type);
        for (uint64_t i = 0; i < n; ++i) {
            T v;
            std::memcpy(&v, raw + i * sizeof(T), sizeof(T));
            out[i] = v;
        }
    });
}

// One side's block: its stored bytes and their values.
struct Side {
    Dtype dtype;
    const stats::RawReader& read;
    std::vector<uint8_t> raw;
    std::vector<i128> values;

    Side(Dtype d, const stats::RawReader& r, uint64_t count)
        : dtype(d), read(r), raw(size_t(std::min(count, kBlock)) * dtypeSize(d)),
          values(size_t(std::min(count, kBlock))) {}
    const i128* load(uint64_t first, uint64_t n) {
        read(first, n, raw.data());
        widen(dtype, raw.data(), n, values.data());
        return values.data();
    }
};

u128 magnitude(i128 x) {
    return u128(x < 0 ? -x : x); // |b − a| < 2^65
}

struct Totals {
    uint64_t differing = 0;
    u128 maxAbs = 0, sumAbs = 0; // sumAbs: up to 2^65 × 2^62 elements
    i128 lo = std::numeric_limits<i128>::max(), hi = std::numeric_limits<i128>::min();
    double sumSq = 0, aa = 0, bb = 0, ab = 0;
};

void firstPass(const i128* a, const i128* b, uint64_t n, const DiffOptions& o, Totals& t) {
    const bool exact = o.atol == 0 && o.rtol == 0;
    for (uint64_t i = 0; i < n; ++i) {
        const i128 d = b[i] - a[i];
        const u128 m = magnitude(d);
        const double x = double(a[i]), y = double(b[i]), dd = double(d);
        t.differing += exact ? d != 0 : double(m) > o.atol + o.rtol * std::fabs(x);
        t.maxAbs = std::max(t.maxAbs, m);
        t.sumAbs += m;
        t.lo = std::min(t.lo, d);
        t.hi = std::max(t.hi, d);
        t.sumSq += dd * dd;
        t.aa += x * x;
        t.bb += y * y;
        t.ab += x * y;
    }
}

} // namespace

ElementDiff compareIntegers(Dtype dtypeA, Dtype dtypeB, uint64_t count,
                            const stats::RawReader& readA, const stats::RawReader& readB,
                            const DiffOptions& options) {
    Side sa(dtypeA, readA, count), sb(dtypeB, readB, count);
    const auto pass = [&](double from, double share, const auto& step) {
        for (uint64_t first = 0; first < count; first += kBlock) {
            options.throwIfCancelled();
            const uint64_t n = std::min(kBlock, count - first);
            step(sa.load(first, n), sb.load(first, n), n);
            options.report(from + share * double(first + n) / double(count));
        }
    };
    Totals t;
    const bool histogram = options.bins > 0 && count > 0;
    pass(0.0, histogram ? 0.5 : 1.0,
         [&](const i128* a, const i128* b, uint64_t n) { firstPass(a, b, n, options, t); });
    ElementDiff r;
    r.count = count;
    r.finitePairs = count;
    r.differing = t.differing;
    if (count == 0) {
        options.report(1.0);
        return r;
    }
    r.normA = std::sqrt(t.aa);
    r.normB = std::sqrt(t.bb);
    r.maxAbsDiff = double(t.maxAbs);
    r.meanAbsDiff = double(t.sumAbs) / double(count);
    if (t.aa > 0)
        r.relL2 = std::sqrt(t.sumSq) / r.normA;
    if (t.aa > 0 && t.bb > 0)
        r.cosine = t.ab / (r.normA * r.normB);
    if (histogram) {
        Histogram& h = r.histogram;
        h.lo = double(t.lo);
        h.hi = double(t.hi);
        h.counts.assign(size_t(options.bins), 0);
        if (!(h.hi > h.lo)) {
            h.counts[0] = count;
        } else {
            stats::BinCounter<double> counter(h);
            std::vector<double> diffs(sa.values.size());
            pass(0.5, 0.5, [&](const i128* a, const i128* b, uint64_t n) {
                for (uint64_t i = 0; i < n; ++i)
                    diffs[size_t(i)] = double(b[i] - a[i]);
                counter.add(diffs.data(), n);
            });
            counter.mergeInto(h.counts);
        }
    }
    options.report(1.0);
    return r;
}

} // namespace ckptscope
