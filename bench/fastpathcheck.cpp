// ckptscope-fastpathcheck: the fast paths added for performance give the
// numbers the plain code gives. Run by ctest in a build with benchmarks
// (bench_fastpathcheck, and bench_fastpathcheck_scalar with CKPTSCOPE_SIMD=0).
//
// 1. Statistics: computeStats against a direct computation — histogram counts
//    equal to Histogram::binOf's for every finite value, min/max/counts exact,
//    mean/std within 1e-9 relative of a long-double two-pass — over
//    adversarial data (values on bin edges, tiny and huge ranges, specials),
//    bin counts 1..5000, 1 and 2 threads, tensors below and above the
//    in-memory budget.
// (The gradient JSON reader's two paths are compared by tst_gradientjsonpaths.)
#include "ckptscope/stats/tensorstats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace ckptscope;

int g_failures = 0;

void fail(const std::string& what) {
    if (++g_failures <= 20)
        std::cerr << "FAIL: " << what << "\n";
}

// --- statistics ---------------------------------------------------------------

struct Reference {
    uint64_t finite = 0, nan = 0, posInf = 0, negInf = 0, zeros = 0;
    float min = 0, max = 0;
    long double mean = 0, stdev = 0;
    std::vector<uint64_t> counts;
};

Reference reference(const std::vector<float>& v, int bins) {
    Reference r;
    long double sum = 0;
    bool any = false;
    for (float f : v) {
        if (std::isnan(f)) {
            ++r.nan;
        } else if (std::isinf(f)) {
            ++(f > 0 ? r.posInf : r.negInf);
        } else {
            ++r.finite;
            r.zeros += f == 0.0f;
            r.min = any ? std::min(r.min, f) : f;
            r.max = any ? std::max(r.max, f) : f;
            any = true;
            sum += f;
        }
    }
    if (r.finite == 0)
        return r;
    r.mean = sum / static_cast<long double>(r.finite);
    long double m2 = 0;
    for (float f : v)
        if (std::isfinite(f))
            m2 += (static_cast<long double>(f) - r.mean) * (static_cast<long double>(f) - r.mean);
    r.stdev = std::sqrt(m2 / static_cast<long double>(r.finite));
    Histogram h;
    h.lo = r.min;
    h.hi = r.max;
    h.counts.assign(size_t(bins), 0);
    r.counts.assign(size_t(bins), 0);
    for (float f : v)
        if (std::isfinite(f))
            ++r.counts[h.binOf(f)];
    return r;
}

bool close(double got, long double want, double spread) {
    const long double tol =
        1e-9L * std::max<long double>(std::fabs(want), spread * 1e-6L) + 1e-300L;
    return std::fabs(static_cast<long double>(got) - want) <= tol;
}

void checkStats(const std::string& name, const std::vector<float>& v, int bins) {
    const Reference want = reference(v, bins);
    for (unsigned threads : {1u, 2u}) {
        StatsOptions o;
        o.bins = bins;
        o.threads = threads;
        const StatsResult r = computeStats(
            v.size(),
            [&](uint64_t first, uint64_t n, float* out) {
                std::memcpy(out, v.data() + first, size_t(n) * 4);
            },
            o);
        const std::string where =
            name + " (bins " + std::to_string(bins) + ", threads " + std::to_string(threads) + ")";
        const TensorStats& s = r.stats;
        if (s.finite != want.finite || s.nan != want.nan || s.posInf != want.posInf ||
            s.negInf != want.negInf || s.zeros != want.zeros)
            fail(where + ": counts differ");
        if (want.finite == 0) {
            if (s.min || !r.histogram.counts.empty())
                fail(where + ": no finite value, but min or a histogram");
            continue;
        }
        if (!s.min || *s.min != want.min || *s.max != want.max)
            fail(where + ": min/max differ");
        const double spread = std::max(std::fabs(double(want.min)), std::fabs(double(want.max)));
        if (!close(*s.mean, want.mean, spread))
            fail(where + ": mean " + std::to_string(*s.mean));
        if (!close(*s.std, want.stdev, spread))
            fail(where + ": std " + std::to_string(*s.std));
        if (r.histogram.counts != want.counts)
            fail(where + ": histogram counts differ from Histogram::binOf's");
    }
    // The in-memory convenience overload takes its own path.
    const StatsResult m = computeStats(v.data(), v.size(), bins);
    if (want.finite > 0 && m.histogram.counts != want.counts)
        fail(name + ": in-memory histogram differs (bins " + std::to_string(bins) + ")");
}

void statsChecks() {
    std::mt19937_64 rng(11);
    std::vector<std::pair<std::string, std::vector<float>>> sets;
    auto make = [&](const std::string& name, size_t n, auto gen) {
        std::vector<float> v(n);
        for (size_t i = 0; i < n; ++i)
            v[i] = gen(i);
        sets.emplace_back(name, std::move(v));
    };
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    make("normal", 300'000, [&](size_t) { return normal(rng); });
    make("offset mean", 300'000, [&](size_t) { return 1000.0f + normal(rng); });
    make("relu (half zeros at lo)", 200'000, [&](size_t) { return std::max(0.0f, uniform(rng)); });
    make("constant", 70'000, [](size_t) { return 4.0f; });
    make("two values", 70'000, [](size_t i) { return i % 3 ? -1.0f : 1.0f; });
    make("integers 0..100 (many on bin edges)", 200'000,
         [&](size_t) { return float(rng() % 101); });
    make("eighths (on edges of power-of-two bins)", 200'000,
         [&](size_t) { return float(rng() % 65) / 8.0f - 4.0f; });
    make("tiny range (subnormals)", 100'000,
         [&](size_t) { return float(rng() % 50) * std::numeric_limits<float>::denorm_min(); });
    make("huge range", 100'000, [&](size_t i) {
        return i == 0   ? -std::numeric_limits<float>::max()
               : i == 1 ? std::numeric_limits<float>::max()
                        : uniform(rng) * 3e38f;
    });
    make("random bit patterns (NaN, Inf, denormals)", 200'000, [&](size_t) {
        const auto bits = uint32_t(rng());
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    });
    make("specials sprinkled", 150'000, [&](size_t i) {
        return i % 997 == 0   ? std::numeric_limits<float>::quiet_NaN()
               : i % 991 == 0 ? -std::numeric_limits<float>::infinity()
                              : uniform(rng);
    });
    make("short", 13, [&](size_t) { return uniform(rng); });
    for (const auto& [name, v] : sets)
        for (int bins : {1, 2, 3, 7, 32, 64, 65, 100, 1000, 4096, 5000})
            checkStats(name, v, bins);
    // Beyond the 16M-value in-memory budget: the tail is read twice.
    std::vector<float> big(17'000'000);
    for (auto& f : big)
        f = normal(rng);
    big[16'900'000] = 1.0f; // the maximum, past the budget
    checkStats("17M values (beyond the in-memory budget)", big, 64);
}

} // namespace

int main() {
    statsChecks();
    if (g_failures) {
        std::cerr << g_failures << " failures\n";
        return 1;
    }
    std::cout << "fast paths agree with the plain code\n";
    return 0;
}
