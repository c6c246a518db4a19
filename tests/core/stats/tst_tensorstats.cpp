#include "ckptscope/stats/tensorstats.h"

#include <QTest>

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
