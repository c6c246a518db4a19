#include "ckptscope/stats/tensorstats.h"

#include <QTest>

#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

using namespace ckptscope;

class TestTensorStats : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Bins over [-max, max], whose width passes the double range: each
    // value's position is computed on halves, as (x/2 - lo/2)/(hi/2 - lo/2).
    void binOfAWidthBeyondDouble() {
        constexpr double mx = std::numeric_limits<double>::max();
        Histogram h;
        h.lo = -mx;
        h.hi = mx;
        h.counts.assign(4, 0);
        QCOMPARE(h.binOf(-mx), size_t(0));
        QCOMPARE(h.binOf(-mx / 4), size_t(1)); // 3/8 of the way
        QCOMPARE(h.binOf(0), size_t(2));
        QCOMPARE(h.binOf(mx / 4), size_t(2)); // 5/8
        QCOMPARE(h.binOf(mx * 0.75), size_t(3));
        QCOMPARE(h.binOf(mx), size_t(3));
    }

    void countsSpecialValues() {
        const float inf = std::numeric_limits<float>::infinity();
        const std::vector<float> v = {0.0f, -0.0f, 1.0f, -3.0f, std::nanf(""),
                                      inf,  -inf,  -inf, 2.0f};
        const StatsResult r = computeStats(v.data(), v.size(), 4);
        const TensorStats& s = r.stats;
        QCOMPARE(s.count, uint64_t(9));
        QCOMPARE(s.finite, uint64_t(5));
        QCOMPARE(s.nan, uint64_t(1));
        QCOMPARE(s.posInf, uint64_t(1));
        QCOMPARE(s.negInf, uint64_t(2));
        QCOMPARE(s.zeros, uint64_t(2));
        QCOMPARE(*s.min, -3.0);
        QCOMPARE(*s.max, 2.0);
        QCOMPARE(s.finiteSum, 0.0);
        QCOMPARE(*s.mean, 0.0);
        QCOMPARE(*s.std, std::sqrt(14.0 / 5.0));
        QCOMPARE(s.l2, std::sqrt(14.0));
        // bins over [-3, 2], width 1.25: -3 | 0,-0 | 1 | 2
        QCOMPARE(r.histogram.counts, (std::vector<uint64_t>{1, 0, 2, 2}));
    }
    // A zero extreme is +0 whichever zeros the tensor holds and wherever
    // they sit (vector lanes, the scalar tail, one block or several).
    void zeroExtremesArePositive() {
        for (const size_t n : {size_t(3), size_t(40), size_t(200000)})
            for (const float first : {-0.0f, 0.0f})
                for (const float second : {-0.0f, 0.0f}) {
                    std::vector<float> up(n, 1.0f), down(n, -1.0f);
                    up[n / 3] = down[n / 3] = first;
                    up[n - 1] = down[n - 1] = second;
                    const StatsResult lo = computeStats(up.data(), n, 4);
                    const StatsResult hi = computeStats(down.data(), n, 4);
                    QCOMPARE(*lo.stats.min, 0.0);
                    QVERIFY2(!std::signbit(*lo.stats.min), qPrintable(QString::number(n)));
                    QVERIFY(!std::signbit(lo.histogram.lo));
                    QCOMPARE(*hi.stats.max, 0.0);
                    QVERIFY2(!std::signbit(*hi.stats.max), qPrintable(QString::number(n)));
                }
    }
    void noFiniteValues() {
        const std::vector<float> v = {std::nanf(""), std::numeric_limits<float>::infinity()};
        const StatsResult r = computeStats(v.data(), v.size(), 8);
        QVERIFY(!r.stats.min && !r.stats.max && !r.stats.mean && !r.stats.std);
        QVERIFY(r.histogram.counts.empty());
        const StatsResult empty = computeStats(nullptr, 0, 8);
        QCOMPARE(empty.stats.count, uint64_t(0));
        QVERIFY(!empty.stats.min);
    }
    void constantTensorHasOneFullBin() {
        const std::vector<float> v(10, 4.0f);
        const StatsResult r = computeStats(v.data(), v.size(), 5);
        QCOMPARE(r.histogram.counts[0], uint64_t(10));
        QCOMPARE(*r.stats.std, 0.0);
    }
    void largeParallelMatchesDirectComputation() {
        // Several blocks, an offset mean (cancellation-prone), a few specials.
        std::mt19937 rng(7);
        std::normal_distribution<float> d(1000.0f, 0.5f);
        std::vector<float> v(3'500'000);
        for (auto& f : v)
            f = d(rng);
        v[12] = std::nanf("");
        v[2'000'000] = -std::numeric_limits<float>::infinity();
        double sum = 0, sq = 0;
        uint64_t n = 0;
        for (float f : v)
            if (std::isfinite(f)) {
                sum += f;
                ++n;
            }
        const double mean = sum / double(n);
        for (float f : v)
            if (std::isfinite(f))
                sq += (f - mean) * (f - mean);
        StatsOptions o;
        o.bins = 64;
        double lastProgress = 0;
        o.threads = 1;
        o.progress = [&](double p) { lastProgress = p; };
        auto reader = [&](uint64_t first, uint64_t count, float* out) {
            std::copy_n(v.data() + first, count, out);
        };
        const StatsResult one = computeStats(v.size(), reader, o);
        o.progress = nullptr;
        o.threads = 4;
        const StatsResult four = computeStats(v.size(), reader, o);
        QCOMPARE(lastProgress, 1.0);
        QCOMPARE(one.stats.finite, n);
        QVERIFY(std::abs(*one.stats.mean - mean) < 1e-9 * mean);
        QVERIFY(std::abs(*one.stats.std - std::sqrt(sq / double(n))) < 1e-6);
        // Thread count does not change the result.
        QCOMPARE(*four.stats.mean, *one.stats.mean);
        QCOMPARE(*four.stats.std, *one.stats.std);
        QCOMPARE(four.histogram.counts, one.histogram.counts);
        QCOMPARE(
            std::accumulate(one.histogram.counts.begin(), one.histogram.counts.end(), uint64_t(0)),
            n);
    }
    // Pass 2 bins the values pass 1 read, kept in memory, up to 64 MiB of
    // f32: each value is read once (a page-cache copy or a decode saved);
    // beyond, twice. The bins are those of values given in memory, on one
    // thread and two, and when a reader itself computes statistics (a
    // nested computation on the same thread keeps its own values).
    void passTwoReusesPassOnesValues() {
        for (const uint64_t count : {uint64_t(3'000'000), uint64_t(17) << 20}) {
            std::vector<float> v(count);
            std::mt19937 rng(3);
            std::normal_distribution<float> d(0.0f, 0.02f);
            for (auto& f : v)
                f = d(rng);
            const StatsResult direct = computeStats(v.data(), count, 100);
            for (const unsigned threads : {1u, 2u}) {
                std::atomic<uint64_t> read{0};
                auto reader = [&](uint64_t first, uint64_t n, float* out) {
                    std::copy_n(v.data() + first, n, out);
                    read += n;
                    // A nested computation while the outer one keeps values.
                    if (first == 0) {
                        StatsOptions inner;
                        inner.bins = 10;
                        inner.threads = 1;
                        // 0.5, 1.5, … 999.5: a hundred values a bin, binned
                        // by pass 2 from the inner computation's own kept values.
                        std::vector<float> small(1000);
                        for (size_t i = 0; i < small.size(); ++i)
                            small[i] = float(i) + 0.5f;
                        auto innerReader = [&small](uint64_t f, uint64_t k, float* o) {
                            std::copy_n(small.data() + f, k, o);
                        };
                        const StatsResult r = computeStats(small.size(), innerReader, inner);
                        QCOMPARE(r.histogram.counts, std::vector<uint64_t>(10, 100));
                    }
                };
                StatsOptions o;
                o.bins = 100;
                o.threads = threads;
                const StatsResult got = computeStats(count, reader, o);
                const bool kept = count * sizeof(float) <= (uint64_t(64) << 20);
                QCOMPARE(read.load(), kept ? count : 2 * count);
                QCOMPARE(got.histogram.counts, direct.histogram.counts);
                QCOMPARE(*got.stats.mean, *direct.stats.mean);
            }
        }
    }
    void cancelStops() {
        std::vector<float> v(5'000'000, 1.0f);
        std::atomic<bool> cancel{false};
        StatsOptions o;
        o.cancel = &cancel;
        o.threads = 1;
        int blocks = 0;
        auto reader = [&](uint64_t first, uint64_t count, float* out) {
            std::copy_n(v.data() + first, count, out);
            if (++blocks == 2)
                cancel = true;
        };
        QVERIFY_THROWS_EXCEPTION(Cancelled, computeStats(v.size(), reader, o));
        QCOMPARE(blocks, 2);
    }
    void readerErrorsPropagate() {
        StatsOptions o;
        o.threads = 2;
        auto reader = [](uint64_t first, uint64_t, float*) {
            if (first > 0)
                throw std::runtime_error("file changed on disk while reading — reload");
        };
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, computeStats(4'000'000, reader, o));
    }
};

QTEST_APPLESS_MAIN(TestTensorStats)
#include "tst_tensorstats.moc"
