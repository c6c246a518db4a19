#include "chart/axisticks.h"
#include "guisupport.h"
#include "tensor/histogramview.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QTest>
#include <QValueAxis>

#include <cmath>
#include <limits>
#include <vector>

class TestHistogramView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void axesFollowTheHistogram() {
        HistogramView view;
        ckptscope::Histogram h;
        h.lo = -1;
        h.hi = 3;
        h.counts = {5, 0, 20, 1};
        view.setHistogram(h);
        auto* x = qobject_cast<QValueAxis*>(view.chart()->axes(Qt::Horizontal).value(0));
        QVERIFY(x);
        QCOMPARE(x->min(), -1.0);
        QCOMPARE(x->max(), 3.0);
        QVERIFY(qobject_cast<QValueAxis*>(view.chart()->axes(Qt::Vertical).value(0)));
        view.setLogScale(true);
        QVERIFY(qobject_cast<QLogValueAxis*>(view.chart()->axes(Qt::Vertical).value(0)));
        QCOMPARE(view.chart()->series().size(), 1);
    }
    // One value (issue 22, defect 11): a constant tensor or a scalar gets an
    // axis centred on the value and a bar there holding every value.
    void oneValueCentred_data() {
        QTest::addColumn<double>("value");
        QTest::addColumn<quint64>("count");
        QTest::newRow("constant") << 2.5 << quint64(1000);
        QTest::newRow("scalar") << -7.0 << quint64(1);
        QTest::newRow("zero") << 0.0 << quint64(3);
    }
    void oneValueCentred() {
        QFETCH(double, value);
        QFETCH(quint64, count);
        HistogramView view;
        ckptscope::Histogram h;
        h.lo = h.hi = value;
        h.counts.assign(64, 0);
        h.counts[0] = count;
        view.setHistogram(h);
        auto* x = qobject_cast<QValueAxis*>(view.chart()->axes(Qt::Horizontal).value(0));
        QVERIFY(x);
        QVERIFY(x->min() < value && x->max() > value);
        QVERIFY(std::abs((x->min() + x->max()) / 2 - value) <= 1e-9 * (x->max() - x->min()));
        auto* area = qobject_cast<QAreaSeries*>(view.chart()->series().value(0));
        QVERIFY(area);
        // The bar: points at height `count` on both sides of the value, at
        // least a twentieth of the axis wide.
        double left = value, right = value;
        for (const QPointF& p : area->upperSeries()->points())
            if (p.y() == double(count)) {
                left = std::min(left, p.x());
                right = std::max(right, p.x());
            }
        QVERIFY(left < value && right > value);
        QVERIFY(right - left >= (x->max() - x->min()) / 20);
        auto* y = qobject_cast<QValueAxis*>(view.chart()->axes(Qt::Vertical).value(0));
        QVERIFY(y && y->max() >= double(count));
    }
    // One value at the ends of the double range: the axis stays finite and
    // not empty, the bar within it, at ±max (v ± 10 % overflows) and for a
    // denormal (10 % of it underflows to zero).
    void oneValueAtTheEndsOfTheRange_data() {
        QTest::addColumn<double>("value");
        QTest::newRow("+max") << std::numeric_limits<double>::max();
        QTest::newRow("-max") << -std::numeric_limits<double>::max();
        QTest::newRow("denormal") << std::numeric_limits<double>::denorm_min();
    }
    void oneValueAtTheEndsOfTheRange() {
        QFETCH(double, value);
        const SingleValueSpan s = singleValueSpan(value);
        QVERIFY(std::isfinite(s.lo) && std::isfinite(s.hi) && s.lo < s.hi);
        QVERIFY(s.lo <= s.barLo && s.barLo <= value && value <= s.barHi && s.barHi <= s.hi);
        QVERIFY(s.barLo < s.barHi);
        HistogramView view;
        ckptscope::Histogram h;
        h.lo = h.hi = value;
        h.counts.assign(8, 0);
        h.counts[0] = 5;
        view.setHistogram(h);
        auto* x = qobject_cast<QValueAxis*>(view.chart()->axes(Qt::Horizontal).value(0));
        QVERIFY(x && std::isfinite(x->min()) && std::isfinite(x->max()) && x->min() < x->max());
    }

    void ticksFallOnRoundNumbers_data() {
        QTest::addColumn<double>("lo");
        QTest::addColumn<double>("hi");
        QTest::addColumn<int>("peak");
        QTest::newRow("unit") << 0.1234 << 0.9876 << 112;
        QTest::newRow("weights") << -0.0375 << 0.0412 << 37;
        QTest::newRow("tiny") << 1.1e-7 << 1.93e-7 << 5;
        QTest::newRow("counts") << 37.0 << 112.0 << 123456;
        QTest::newRow("f32 range") << -3.4028234663852886e38 << 3.4028234663852886e38 << 2;
        QTest::newRow("large offset") << 1000.25 << 1000.75 << 999;
    }
    void ticksFallOnRoundNumbers() {
        QFETCH(double, lo);
        QFETCH(double, hi);
        QFETCH(int, peak);
        HistogramView view;
        ckptscope::Histogram h;
        h.lo = lo;
        h.hi = hi;
        h.counts = {uint64_t(peak), 1, uint64_t(peak / 2), 0};
        view.setHistogram(h);
        auto* x = qobject_cast<QValueAxis*>(view.chart()->axes(Qt::Horizontal).value(0));
        auto* y = qobject_cast<QValueAxis*>(view.chart()->axes(Qt::Vertical).value(0));
        QVERIFY(x && y);
        QCOMPARE(x->min(), lo); // the axis still spans the histogram exactly
        QCOMPARE(x->max(), hi);
        const QString xProblem = guisupport::roundnessProblem(guisupport::ticksOf(x));
        QVERIFY2(xProblem.isEmpty(), qPrintable(QStringLiteral("x: ") + xProblem));
        const QString yProblem = guisupport::roundnessProblem(guisupport::ticksOf(y));
        QVERIFY2(yProblem.isEmpty(), qPrintable(QStringLiteral("y: ") + yProblem));
        QVERIFY(y->max() >= peak);
    }
    // F64 values at ±max (issue 21, item 6): hi − lo passes the double
    // range, so the chart plots value / 2 and labels the ticks with the
    // values themselves; nothing is infinite, every bin is drawn.
    void wholeDoubleRange() {
        constexpr double mx = std::numeric_limits<double>::max();
        HistogramView view;
        ckptscope::Histogram h;
        h.lo = -mx;
        h.hi = mx;
        h.counts = {1, 0, 2, 1};
        view.setHistogram(h);
        auto* x = qobject_cast<QValueAxis*>(view.chart()->axes(Qt::Horizontal).value(0));
        QVERIFY(x);
        QCOMPARE(x->min(), -mx / 2);
        QCOMPARE(x->max(), mx / 2);
        auto* area = qobject_cast<QAreaSeries*>(view.chart()->series().value(0));
        QVERIFY(area);
        // Two points per bin, at its edges / 2 and its count.
        const QList<QPointF> pts = area->upperSeries()->points();
        QCOMPARE(pts.size(), qsizetype(8));
        std::vector<double> tops;
        for (qsizetype k = 0; k < pts.size(); k += 2) {
            const auto bin = size_t(k / 2);
            QCOMPARE(pts[k].x(), h.edge(bin) / 2);
            QCOMPARE(pts[k + 1].x(), h.edge(bin + 1) / 2);
            QVERIFY(std::isfinite(pts[k].x()) && std::isfinite(pts[k + 1].x()));
            tops.push_back(pts[k].y());
        }
        QCOMPARE(tops, (std::vector<double>{1, 0, 2, 1}));
        const auto ticks = guisupport::ticksOf(x);
        QVERIFY(ticks.size() >= 3);
        const double step = 2 * (ticks[1].value - ticks[0].value);
        const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
        QVERIFY2(std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 ||
                     std::abs(mantissa - 5) < 1e-6,
                 qPrintable(QString::number(step)));
        for (const auto& t : ticks) {
            bool ok = false;
            const double read = t.label.toDouble(&ok);
            QVERIFY2(ok && std::abs(read - 2 * t.value) <= step * 1e-6, qPrintable(t.label));
        }
        QCOMPARE(view.binText(mx), QStringLiteral("[8.98847e+307, 1.79769e+308]\n1 values"));
        QCOMPARE(view.binText(-mx), QStringLiteral("[-1.79769e+308, -8.98847e+307)\n1 values"));
    }
    void hoverTextNamesBinAndCount() {
        HistogramView view;
        ckptscope::Histogram h;
        h.lo = 0;
        h.hi = 4;
        h.counts = {1, 2, 3, 4};
        view.setHistogram(h);
        QCOMPARE(view.binText(2.5), QStringLiteral("[2, 3)\n3 values"));
        QCOMPARE(view.binText(4.0), QStringLiteral("[3, 4]\n4 values"));
        QVERIFY(view.binText(5.0).isEmpty());
        view.clear();
        QVERIFY(view.chart()->series().isEmpty());
    }
};

QTEST_MAIN(TestHistogramView)
#include "tst_histogramview.moc"
