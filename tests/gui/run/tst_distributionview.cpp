// The distribution tab: percentiles per step against the sorted values
// (within one bin width), the bands drawn from them, the hover text, the
// heatmap of per-step histograms, histograms read for the selected tensor
// only, and nothing left over from a previous selection.
#include "testsupport.h"

#include "run/distributionview.h"
#include "run/heatmapview.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <QApplication>
#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QHelpEvent>
#include <QLabel>
#include <QLineSeries>
#include <QMouseEvent>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <random>

using namespace ckptscope;
using testsupport::str;

namespace {

struct Fixture {
    QTemporaryDir tmp;
    std::vector<std::vector<float>> a, b; // per checkpoint
    std::shared_ptr<const Run> run;
    std::shared_ptr<const std::vector<TensorSeries>> series;

    Fixture() {
        std::mt19937 rng(5);
        for (int c = 0; c < 4; ++c) {
            std::normal_distribution<float> normal(0.1f * float(c), 1.f + float(c));
            std::vector<float> va(4000), vb(10);
            for (float& x : va)
                x = normal(rng);
            for (float& x : vb)
                x = float(c);
            a.push_back(va);
            b.push_back(vb);
            Checkpoint ck;
            ck.setMetadata("step", std::to_string(100 * c));
            if (c != 2) // "a" is absent at step 200
                ck.addTensor({"a", {4000}, va});
            ck.addTensor({"b", {10}, vb});
            ck.save(str(tmp.path()) + "/c" + std::to_string(c) + ".oxck");
        }
        // The run is read through the cache the view reads histograms from.
        auto r = std::make_shared<Run>(readRun({str(tmp.path())}));
        series = std::make_shared<const std::vector<TensorSeries>>(tensorSeries(*r));
        run = std::move(r);
    }
};

double direct(std::vector<float> v, double p) {
    std::sort(v.begin(), v.end());
    return v[size_t(std::llround(p / 100 * double(v.size() - 1)))];
}

void waitLoaded(DistributionView& view) {
    QTRY_VERIFY_WITH_TIMEOUT(!view.isLoading() && !view.percentiles().empty(), 20000);
}

void showLoaded(DistributionView& view, const Fixture& f, const QString& tensor) {
    view.resize(900, 600);
    view.setRun(f.run, f.series);
    view.setSelectedTensor(tensor);
    view.show();
    waitLoaded(view);
}

} // namespace

class TestDistributionView : public QObject {
    Q_OBJECT
    QTemporaryDir m_cache;

private Q_SLOTS:
    void initTestCase() { qputenv("XDG_CACHE_HOME", m_cache.path().toUtf8()); }

    void percentilesBandsAndHover() {
        Fixture f;
        DistributionView view;
        showLoaded(view, f, QStringLiteral("a"));
        QCOMPARE(view.tensor(), QStringLiteral("a"));
        const auto& ps = view.percentiles();
        QCOMPARE(ps.size(), size_t(4));
        QVERIFY(!ps[2]); // absent at step 200
        for (size_t c : {size_t(0), size_t(1), size_t(3)}) {
            QVERIFY(ps[c]);
            const auto& v = f.a[c];
            const double width =
                (*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end())) /
                kSummaryHistogramBins;
            for (size_t i = 0; i < kDistributionPercentiles.size(); ++i) {
                const double want = direct(v, kDistributionPercentiles[i]);
                QVERIFY2(std::fabs((*ps[c])[i] - want) <= width * (1 + 1e-9),
                         qPrintable(QStringLiteral("checkpoint %1, p%2: %3 vs %4")
                                        .arg(c)
                                        .arg(kDistributionPercentiles[i])
                                        .arg((*ps[c])[i])
                                        .arg(want)));
            }
            QCOMPARE((*ps[c]).front(), double(*std::min_element(v.begin(), v.end())));
        }
        // Bands: four nested areas per run of steps, never across the gap;
        // the median line through the medians.
        int areas = 0;
        std::vector<QPointF> median;
        for (QAbstractSeries* s : view.bandChart()->series()) {
            areas += qobject_cast<QAreaSeries*>(s) != nullptr;
            if (s->name() == QStringLiteral("median"))
                for (const QPointF& p : qobject_cast<QLineSeries*>(s)->points())
                    median.push_back(p);
        }
        QCOMPARE(areas, 4 * 2); // steps 0–100 and 300
        QStringList bands;
        for (QAbstractSeries* s : view.bandChart()->series())
            if (qobject_cast<QAreaSeries*>(s) && !bands.contains(s->name()))
                bands << s->name();
        QCOMPARE(bands, QStringList({QStringLiteral("p0–p100"), QStringLiteral("p7–p93"),
                                     QStringLiteral("p16–p84"), QStringLiteral("p31–p69")}));
        QCOMPARE(median.size(), size_t(3));
        QCOMPARE(median[2], QPointF(300, (*ps[3])[4]));
        // Hover: the step and the exact percentile values.
        const QString hover = view.hoverText(1);
        QVERIFY2(hover.contains(QStringLiteral("step 100")), qPrintable(hover));
        QVERIFY(hover.contains(QStringLiteral("median: ") +
                               QString::fromStdString(fmt::exact((*ps[1])[4]))));
        QVERIFY2(hover.contains(QStringLiteral("\npercentile 31: ")), qPrintable(hover));
        QVERIFY(view.hoverText(2).contains(QStringLiteral("no histogram")));
        // Moving the mouse over the plot at step 100 shows that text.
        auto* chartView = view.findChild<QChartView*>();
        QVERIFY(chartView);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QChart* chart = view.bandChart();
        const QPointF at = chart->mapToPosition(QPointF(100, (*ps[1])[4]), chart->series().first());
        const QPoint pixel = chartView->mapFromScene(chart->mapToScene(at));
        QMouseEvent move(QEvent::MouseMove, pixel, chartView->viewport()->mapToGlobal(pixel),
                         Qt::NoButton, Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(chartView->viewport(), &move);
        QTRY_COMPARE(QToolTip::text(), view.hoverText(1));
        // The tooltip event that follows a pause keeps it (the chart's scene
        // would answer it by hiding the text).
        QToolTip::hideText();
        QHelpEvent help(QEvent::ToolTip, pixel, chartView->viewport()->mapToGlobal(pixel));
        QVERIFY(QApplication::sendEvent(chartView->viewport(), &help)); // taken, not passed on
        QTRY_COMPARE(QToolTip::text(), view.hoverText(1));
    }

    void heatmapAndNothingLeftOver() {
        Fixture f;
        DistributionView view;
        showLoaded(view, f, QStringLiteral("a"));
        view.showHeatmap(true);
        const HeatmapData& d = view.heatmap()->data();
        QCOMPARE(d.rows, DistributionView::kHeatmapBins);
        QCOMPARE(d.cols, 4);
        // The shared value range is the union of the steps' ranges.
        double lo = 1e30, hi = -1e30;
        for (size_t c : {size_t(0), size_t(1), size_t(3)}) {
            lo = std::min(lo, double(*std::min_element(f.a[c].begin(), f.a[c].end())));
            hi = std::max(hi, double(*std::max_element(f.a[c].begin(), f.a[c].end())));
        }
        QCOMPARE(d.yLo, lo);
        QCOMPARE(d.yHi, hi);
        for (int c = 0; c < 4; ++c) {
            double sum = 0;
            for (int r = 0; r < d.rows; ++r)
                sum += d.at(r, c).value_or(0);
            QVERIFY(std::fabs(sum - (c == 2 ? 0 : 1)) < 1e-9);
        }
        // A cell's share against the values in its bin: equal up to the
        // values within one fine bin of its edges.
        const double w = (hi - lo) / d.rows;
        const auto& v = f.a[3];
        const double fine =
            (*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end())) /
            kSummaryHistogramBins;
        for (int r = 0; r < d.rows; r += 7) {
            const double a = lo + r * w, b = a + w;
            double inside = 0, edge = 0;
            for (float x : v) {
                inside += x >= a && x < b;
                edge += std::fabs(x - a) < fine || std::fabs(x - b) < fine;
            }
            QVERIFY(std::fabs(*d.at(r, 3) - inside / double(v.size())) <=
                    edge / double(v.size()) + 1e-12);
        }
        QVERIFY(view.heatmap()->hoverText(10, 3).contains(QStringLiteral("step 300")));
        // Another tensor: the old one's bands and cells go at once.
        view.setSelectedTensor(QStringLiteral("b"));
        QVERIFY(view.percentiles().empty());
        QCOMPARE(view.heatmap()->data().rows, 0);
        QVERIFY(view.bandChart()->series().isEmpty());
        waitLoaded(view);
        QCOMPARE(view.tensor(), QStringLiteral("b"));
        QCOMPARE((*view.percentiles()[2])[4], 2.0); // all values equal
        view.setSelectedTensor(QString());
        QVERIFY(view.percentiles().empty());
        QVERIFY(view.bandChart()->series().isEmpty());
    }
};

QTEST_MAIN(TestDistributionView)
#include "tst_distributionview.moc"
