#include "histogramview.h"

#include <QCategoryAxis>
#include <QChart>
#include <QLogValueAxis>
#include <QTest>
#include <QValueAxis>

#include <cmath>

namespace {

struct Tick {
    double value;
    QString label;
};

// The ticks an axis draws, with their labels, whatever kind of value axis.
std::vector<Tick> ticksOf(QValueAxis* axis) {
    std::vector<Tick> out;
    auto label = [&](double v) {
        const QString f = axis->labelFormat();
        return f.endsWith(QLatin1Char('d')) ? QString::asprintf(qPrintable(f), int(v))
                                            : QString::asprintf(qPrintable(f), v);
    };
    if (auto* cat = qobject_cast<QCategoryAxis*>(axis)) {
        for (const QString& l : cat->categoriesLabels()) {
            const double v = cat->endValue(l);
            if (v >= axis->min() && v <= axis->max())
                out.push_back({v, l});
        }
    } else if (axis->tickType() == QValueAxis::TicksDynamic) {
        const double step = axis->tickInterval();
        double v =
            axis->tickAnchor() - std::floor((axis->tickAnchor() - axis->min()) / step) * step;
        for (; v <= axis->max(); v += step)
            out.push_back({v, label(v)});
    } else {
        const int n = axis->tickCount();
        for (int i = 0; i < n; ++i) {
            const double v = axis->min() + i * (axis->max() - axis->min()) / (n - 1);
            out.push_back({v, label(v)});
        }
    }
    return out;
}

// Ticks a reader can use: evenly spaced by 1, 2 or 5 × 10^k, on multiples of
// that step, labelled with text that reads back to the tick's value.
QString roundnessProblem(const std::vector<Tick>& ticks) {
    if (ticks.size() < 3)
        return QStringLiteral("only %1 ticks").arg(ticks.size());
    const double step = ticks[1].value - ticks[0].value;
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    bool round = false;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        round = round || std::abs(mantissa - m) < 1e-6;
    if (!round)
        return QStringLiteral("step %1 is not 1, 2 or 5 x 10^k").arg(step);
    for (size_t i = 0; i < ticks.size(); ++i) {
        const Tick& t = ticks[i];
        const double k = t.value / step;
        if (std::abs(k - std::round(k)) > 1e-6)
            return QStringLiteral("tick %1 is not a multiple of %2").arg(t.value).arg(step);
        bool ok = false;
        const double read = QString(t.label).remove(QLatin1Char(',')).toDouble(&ok);
        if (!ok || std::abs(read - t.value) > step * 1e-6)
            return QStringLiteral("label '%1' for tick %2").arg(t.label).arg(t.value);
    }
    return {};
}

} // namespace

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
        const QString xProblem = roundnessProblem(ticksOf(x));
        QVERIFY2(xProblem.isEmpty(), qPrintable(QStringLiteral("x: ") + xProblem));
        const QString yProblem = roundnessProblem(ticksOf(y));
        QVERIFY2(yProblem.isEmpty(), qPrintable(QStringLiteral("y: ") + yProblem));
        QVERIFY(y->max() >= peak);
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
