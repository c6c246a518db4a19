// The hand-painted heatmap: cells where they should be, hover and click on
// the right cell, gaps apart from values, round ticks on every axis and on
// the colour bar, the log scale, and the colour map's even lightness.
#include "testsupport.h"

#include "chart/colormap.h"
#include "guisupport.h"
#include "run/heatmapview.h"

#include "ckptscope/common/numberformat.h"

#include <QApplication>
#include <QSignalSpy>
#include <QTest>

#include <cmath>

namespace {

std::vector<guisupport::Tick> toTicks(const std::vector<AxisTick>& in) {
    std::vector<guisupport::Tick> out;
    for (const AxisTick& t : in)
        out.push_back({t.value, t.label});
    return out;
}

HeatmapData sample() {
    HeatmapData d;
    d.rows = 3;
    d.cols = 4;
    d.colX = {0, 100, 200, 400}; // uneven: the last cell is wider
    d.rowLabels = {QStringLiteral("0"), QStringLiteral("1"), QStringLiteral("10")};
    for (int r = 0; r < d.rows; ++r)
        for (int c = 0; c < d.cols; ++c)
            d.values.push_back(r == 1 && c == 2
                                   ? std::nullopt
                                   : std::optional<double>(0.001 * std::pow(10, r + c)));
    d.xTitle = QStringLiteral("step");
    d.yTitle = QStringLiteral("layer");
    d.valueTitle = QStringLiteral("L2");
    return d;
}

} // namespace

class TestHeatmapView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void cellsHoverAndClick() {
        HeatmapView view;
        view.resize(800, 500);
        view.setData(sample());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 4; ++c) {
                const QRect cell = view.cellRect(r, c);
                QVERIFY(!cell.isEmpty());
                QCOMPARE(view.cellAt(cell.center()), std::make_pair(r, c));
            }
        // Row 0 at the bottom; the wider step gap gives a wider cell.
        QVERIFY(view.cellRect(0, 0).top() > view.cellRect(2, 0).top());
        QVERIFY(view.cellRect(0, 3).width() > view.cellRect(0, 1).width() + 10);
        QCOMPARE(view.hoverText(0, 3),
                 QString::fromStdString(ckptscope::fmt::exact(*sample().at(0, 3))));
        QVERIFY(!view.cellColor(1, 2).isValid()); // a gap
        QVERIFY(view.cellColor(1, 1).isValid());
        QSignalSpy clicked(&view, &HeatmapView::cellClicked);
        QTest::mouseClick(&view, Qt::LeftButton, {}, view.cellRect(2, 1).center());
        QCOMPARE(clicked.size(), 1);
        QCOMPARE(clicked[0][0].toInt(), 2);
        QCOMPARE(clicked[0][1].toInt(), 1);
        QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(2, 2)); // outside the cells
        QCOMPARE(clicked.size(), 1);
        // A new data set leaves nothing of the old one.
        view.setData({}, QStringLiteral("nothing"));
        QCOMPARE(view.cellAt(QPoint(400, 250)), std::make_pair(-1, -1));
        QVERIFY(view.hoverText(0, 0).isEmpty());
    }

    // Two checkpoints at one step (a final model saved at the last
    // checkpoint's step) share its span, each a cell of its own, hovered
    // and clicked apart.
    void columnsAtOneStepShareItsSpan() {
        HeatmapData d = sample();
        d.colX = {0, 100, 200, 200};
        HeatmapView view;
        view.resize(800, 500);
        view.setData(d);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QRect a = view.cellRect(0, 2), b = view.cellRect(0, 3);
        QVERIFY(!a.isEmpty() && !b.isEmpty());
        QVERIFY(std::abs(a.width() - b.width()) <= 1);
        QVERIFY(std::abs(a.right() + 1 - b.left()) <= 1); // side by side
        QVERIFY(std::abs(view.cellRect(0, 1).width() - (a.width() + b.width())) <= 2);
        for (int c = 0; c < 4; ++c)
            QCOMPARE(view.cellAt(view.cellRect(1, c).center()), std::make_pair(1, c));
    }

    void roundTicksAndLogScale() {
        HeatmapView view;
        view.resize(900, 600);
        HeatmapData d = sample();
        // Linear values for the linear check.
        for (size_t i = 0; i < d.values.size(); ++i)
            if (d.values[i])
                d.values[i] = 0.37 + 1.3 * double(i);
        view.setData(d);
        for (const auto& ticks : {view.xAxisTicks(), view.colorBarTicks()}) {
            const QString problem = guisupport::roundnessProblem(toTicks(ticks));
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
        for (const AxisTick& t : view.xAxisTicks())
            QCOMPARE(t.value, std::floor(t.value)); // whole steps
        // Labelled rows: each label on its row.
        const auto rows = view.yAxisTicks();
        QCOMPARE(rows.size(), size_t(3));
        QCOMPARE(rows[2].label, QStringLiteral("10"));
        // Colours follow the values: the largest value gets the top colour.
        QCOMPARE(view.colorRange().first, 0.37);
        QCOMPARE(view.cellColor(2, 3), ColorMap::color(1));
        QCOMPARE(view.cellColor(0, 0), ColorMap::color(0));

        view.setData(sample()); // 1e-3 … 1e2: five decades
        QVERIFY(view.canUseLogScale());
        view.setLogScale(true);
        QVERIFY(view.logScale());
        QCOMPARE(view.colorRange().first, 0.001);
        const auto bar = view.colorBarTicks();
        QVERIFY(bar.size() >= 3);
        for (const AxisTick& t : bar) {
            const double e = std::log10(t.value);
            QVERIFY2(std::fabs(e - std::round(e)) < 1e-9, qPrintable(t.label));
            QCOMPARE(t.label.toDouble(), t.value);
        }
        // Equal ratios, equal colour steps.
        QCOMPARE(view.cellColor(0, 1), ColorMap::color(0.2));
        // Values ≤ 0 cannot be placed on a log scale: not offered.
        HeatmapData negative = sample();
        for (auto& v : negative.values)
            if (v)
                v = -*v;
        view.setData(negative);
        QVERIFY(!view.canUseLogScale());
        QVERIFY(!view.logScale());
    }

    void colorMapLightnessIsEven() {
        // Lightness rises evenly: equal steps in value look like equal steps.
        double previous = -1;
        for (int i = 0; i <= 20; ++i) {
            const double t = i / 20.0;
            const double l = ColorMap::lightnessOf(ColorMap::color(t));
            QVERIFY2(std::fabs(l - ColorMap::lightness(t)) < 0.01,
                     qPrintable(QStringLiteral("t=%1: L=%2").arg(t).arg(l)));
            QVERIFY(l > previous);
            previous = l;
        }
    }
};

QTEST_MAIN(TestHeatmapView)
#include "tst_heatmapview.moc"
