// Percentiles from a fine histogram against the sorted values: within one
// bin width, and the extremes exact.
#include "testsupport.h"

#include "ckptscope/stats/histogrampercentiles.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace ckptscope;

namespace {

// The value of rank round(p/100 · (n − 1)) among the finite values.
double directPercentile(std::vector<float> v, double p) {
    v.erase(std::remove_if(v.begin(), v.end(), [](float x) { return !std::isfinite(x); }), v.end());
    std::sort(v.begin(), v.end());
    return v[size_t(std::llround(p / 100.0 * double(v.size() - 1)))];
}

void checkAll(const std::vector<float>& values, int bins) {
    const Histogram h = computeStats(values.data(), values.size(), bins).histogram;
    const double width = (h.hi - h.lo) / double(h.counts.size());
    for (double p : kDistributionPercentiles) {
        const auto got = histogramPercentile(h, p);
        QVERIFY(got);
        const double want = directPercentile(values, p);
        if (p == 0 || p == 100) {
            QCOMPARE(*got, want); // the exact min and max
            continue;
        }
        // Bin edges are computed in double from lo and hi: allow their rounding.
        const double bound = width + 1e-12 * std::max(std::fabs(h.lo), std::fabs(h.hi));
        QVERIFY2(std::fabs(*got - want) <= bound,
                 qPrintable(QStringLiteral("p%1: %2 vs %3 (bin width %4)")
                                .arg(p)
                                .arg(*got)
                                .arg(want)
                                .arg(width)));
    }
}

} // namespace

class TestHistogramPercentiles : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void withinOneBinOfTheSortedValues_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("bins");
        QTest::newRow("normal 256") << 0 << 100000 << 256;
        QTest::newRow("normal 8 bins") << 0 << 5000 << 8;
        QTest::newRow("uniform") << 1 << 3001 << 256;
        QTest::newRow("heavy tail") << 2 << 20000 << 256;
        QTest::newRow("few repeated values") << 3 << 999 << 256;
        QTest::newRow("two values") << 3 << 2 << 256;
        QTest::newRow("with NaN and Inf") << 4 << 4000 << 256;
    }
    void withinOneBinOfTheSortedValues() {
        QFETCH(int, kind);
        QFETCH(int, n);
        QFETCH(int, bins);
        std::mt19937 rng(uint32_t(kind * 31 + n));
        std::normal_distribution<float> normal(0.5f, 2.f);
        std::uniform_real_distribution<float> uniform(-3.f, 1.f);
        std::vector<float> v(static_cast<size_t>(n));
        for (size_t i = 0; i < v.size(); ++i) {
            switch (kind) {
            case 0:
                v[i] = normal(rng);
                break;
            case 1:
                v[i] = uniform(rng);
                break;
            case 2:
                v[i] = std::exp(normal(rng) * 2.f);
                break;
            case 3:
                v[i] = float(rng() % 3) * 0.25f;
                break;
            default:
                v[i] = i % 17 == 0 ? (i % 2 ? std::numeric_limits<float>::quiet_NaN()
                                            : std::numeric_limits<float>::infinity())
                                   : normal(rng);
            }
        }
        checkAll(v, bins);
    }

    void degenerateHistograms() {
        // All values equal: lo == hi, every percentile is that value.
        const std::vector<float> same(10, 1.5f);
        const Histogram h = computeStats(same.data(), same.size(), 256).histogram;
        for (double p : kDistributionPercentiles)
            QCOMPARE(*histogramPercentile(h, p), 1.5);
        // No finite value, or no histogram at all: nothing.
        const std::vector<float> nan(3, std::numeric_limits<float>::quiet_NaN());
        QVERIFY(!histogramPercentile(computeStats(nan.data(), nan.size(), 256).histogram, 50));
        QVERIFY(!histogramPercentile(Histogram{}, 50));
        QVERIFY(!histogramPercentile(h, 101));
        QVERIFY(!histogramPercentile(h, std::nan("")));
    }

    // F64 [-max, 0, max] in 4 bins: hi − lo passes the double range; the
    // percentiles are those of the same counts on [-1, 1], scaled.
    void widthBeyondTheDoubleRange() {
        const double top = std::numeric_limits<double>::max();
        const Histogram wide{-top, top, {1, 0, 1, 1}}, unit{-1, 1, {1, 0, 1, 1}};
        for (double p : {10.0, 50.0, 90.0}) {
            const double got = *histogramPercentile(wide, p), want = *histogramPercentile(unit, p);
            QVERIFY2(std::isfinite(got), qPrintable(QString::number(p)));
            QVERIFY2(std::abs(got / top - want) < 1e-12, qPrintable(QString::number(p)));
        }
        QCOMPARE(*histogramPercentile(wide, 50), top / 4); // mid of bin 2: [0, max/2)
    }
};

QTEST_APPLESS_MAIN(TestHistogramPercentiles)
#include "tst_histogrampercentiles.moc"
