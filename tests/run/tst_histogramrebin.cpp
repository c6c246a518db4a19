// A histogram moved onto a shared range: shares sum to one, whole bins land
// where they belong, a split bin splits by overlap, and against the values.
#include "testsupport.h"

#include "ckptscope/stats/histogramrebin.h"

#include <QTest>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>

using namespace ckptscope;

class TestHistogramRebin : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sharesByOverlap() {
        Histogram h{0, 4, {1, 0, 2, 1}}; // bins [0,1) [1,2) [2,3) [3,4]
        const auto same = rebinHistogram(h, 0, 4, 4);
        QCOMPARE(same, (std::vector<double>{0.25, 0, 0.5, 0.25}));
        const auto wide = rebinHistogram(h, -4, 4, 2); // [-4,0) [0,4]
        QCOMPARE(wide, (std::vector<double>{0, 1}));
        const auto half = rebinHistogram(h, 0, 4, 8); // each source bin splits in two
        QCOMPARE(half, (std::vector<double>{0.125, 0.125, 0, 0, 0.25, 0.25, 0.125, 0.125}));
        Histogram point{2, 2, {0, 5, 0}};
        QCOMPARE(rebinHistogram(point, 0, 4, 4), (std::vector<double>{0, 0, 1, 0}));
        QCOMPARE(rebinHistogram(Histogram{}, 0, 1, 3), (std::vector<double>{0, 0, 0}));
    }

    // F64 [-max, 0, max]: hi − lo passes the double range, yet the shares
    // land where they do for the same histogram at a finite scale.
    void widthBeyondTheDoubleRange() {
        const double top = std::numeric_limits<double>::max();
        Histogram h{-top, top, {1, 0, 1, 1}};
        auto near = [](const std::vector<double>& got, const std::vector<double>& want) {
            QCOMPARE(got.size(), want.size());
            for (size_t j = 0; j < got.size(); ++j)
                QVERIFY2(std::abs(got[j] - want[j]) < 1e-12, qPrintable(QString::number(j)));
        };
        near(rebinHistogram(h, -top, top, 2), {1.0 / 3, 2.0 / 3});
        near(rebinHistogram(h, -top, top, 4), {1.0 / 3, 0, 1.0 / 3, 1.0 / 3});
        Histogram unit{-1, 1, {1, 0, 1, 1}};
        near(rebinHistogram(h, -top, top, 8), rebinHistogram(unit, -1, 1, 8));
    }

    void againstTheValues() {
        std::mt19937 rng(3);
        std::normal_distribution<float> normal(1.f, 0.5f);
        std::vector<float> v(20000);
        for (float& x : v)
            x = normal(rng);
        const Histogram fine = computeStats(v.data(), v.size(), 256).histogram;
        const double lo = -2, hi = 4;
        const int bins = 24;
        const auto shares = rebinHistogram(fine, lo, hi, bins);
        QVERIFY(std::fabs(std::accumulate(shares.begin(), shares.end(), 0.0) - 1) < 1e-12);
        // Direct shares; only values within one fine bin of an edge can differ.
        const double fineWidth = (fine.hi - fine.lo) / 256;
        const double width = (hi - lo) / bins;
        for (int j = 0; j < bins; ++j) {
            const double a = lo + j * width, b = a + width;
            double inside = 0, nearEdge = 0;
            for (float x : v) {
                inside += x >= a && x < b;
                nearEdge += std::fabs(x - a) < fineWidth || std::fabs(x - b) < fineWidth;
            }
            QVERIFY2(std::fabs(shares[size_t(j)] - inside / v.size()) <=
                         nearEdge / v.size() + 1e-12,
                     qPrintable(QString::number(j)));
        }
    }
};

QTEST_APPLESS_MAIN(TestHistogramRebin)
#include "tst_histogramrebin.moc"
