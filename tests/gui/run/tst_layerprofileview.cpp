// The layer profile tab: the heatmap's cells against statistics computed
// directly from the values written, the hover text, the family and
// statistic choosers, a click choosing the layer's tensor, the selected
// tensor's family shown, and nothing left over when the run goes.
#include "testsupport.h"

#include "run/heatmapview.h"
#include "run/layerprofileview.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <QCheckBox>

#include <QComboBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <limits>

#include <cmath>

using namespace ckptscope;
using testsupport::str;

namespace {

// values[checkpoint][layer] of "blocks.{N}.w"; "blocks.3.w" is missing at step 20.
struct Fixture {
    QTemporaryDir tmp;
    std::vector<std::vector<std::vector<float>>> values;
    std::shared_ptr<const Run> run;
    std::shared_ptr<const std::vector<TensorSeries>> series;

    Fixture() {
        const std::vector<int> steps = {10, 20, 40};
        for (size_t c = 0; c < steps.size(); ++c) {
            Checkpoint ck;
            ck.setMetadata("step", std::to_string(steps[c]));
            values.emplace_back();
            for (int layer : {0, 1, 3, 12}) {
                std::vector<float> v;
                for (int i = 0; i < 20; ++i)
                    v.push_back(float((i * 37 + layer * 11) % 23 - 11) * 0.1f *
                                float(1 + layer * int(c)));
                values.back().push_back(v);
                if (!(layer == 3 && c == 1))
                    ck.addTensor({"blocks." + std::to_string(layer) + ".w", {20}, v});
                ck.addTensor({"blocks." + std::to_string(layer) + ".norm", {2}, {1.f, 2.f}});
            }
            ck.save(str(tmp.path()) + "/c" + std::to_string(c) + ".oxck");
        }
        RunOptions opt;
        opt.useCache = false;
        auto r = std::make_shared<Run>(readRun({str(tmp.path())}, opt));
        series = std::make_shared<const std::vector<TensorSeries>>(tensorSeries(*r));
        run = std::move(r);
    }
};

double l2(const std::vector<float>& v) {
    double s = 0;
    for (float x : v)
        s += double(x) * x;
    return std::sqrt(s);
}

double maxAbs(const std::vector<float>& v) {
    double m = 0;
    for (float x : v)
        m = std::max(m, std::fabs(double(x)));
    return m;
}

bool shown(LayerProfileView& view, const Fixture& f) {
    view.resize(900, 600);
    view.setRun(f.run, f.series);
    view.show();
    return QTest::qWaitForWindowExposed(&view);
}

int familyIndex(const LayerProfileView& view, const std::string& pattern) {
    for (size_t i = 0; i < view.families().size(); ++i)
        if (view.families()[i].pattern() == pattern)
            return int(i);
    return -1;
}

} // namespace

class TestLayerProfileView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void cellsAgainstDirectComputation() {
        Fixture f;
        LayerProfileView view;
        QVERIFY(shown(view, f));
        const int fam = familyIndex(view, "blocks.{N}.w");
        QVERIFY(fam >= 0);
        view.familyChooser()->setCurrentIndex(fam);
        const std::vector<int> layers = {0, 1, 3, 12};
        struct Case {
            int statistic;
            double (*direct)(const std::vector<float>&);
        };
        for (const Case& k :
             {Case{int(LayerStatistic::L2), l2}, Case{int(LayerStatistic::MaxAbs), maxAbs}}) {
            view.statisticChooser()->setCurrentIndex(k.statistic);
            const HeatmapData& d = view.heatmap()->data();
            QCOMPARE(d.rows, 4);
            QCOMPARE(d.cols, 3);
            QCOMPARE(d.colX, (std::vector<double>{10, 20, 40}));
            QCOMPARE(d.rowLabels, (QStringList{QStringLiteral("0"), QStringLiteral("1"),
                                               QStringLiteral("3"), QStringLiteral("12")}));
            for (int r = 0; r < 4; ++r)
                for (int c = 0; c < 3; ++c) {
                    if (layers[size_t(r)] == 3 && c == 1) {
                        QVERIFY(!d.at(r, c));
                        QVERIFY(view.heatmap()->hoverText(r, c).contains(
                            QStringLiteral("not in this checkpoint")));
                        continue;
                    }
                    const double want = k.direct(f.values[size_t(c)][size_t(r)]);
                    QVERIFY(d.at(r, c));
                    QVERIFY2(std::fabs(*d.at(r, c) - want) <= 1e-9 * std::max(1.0, want),
                             qPrintable(QStringLiteral("row %1 col %2").arg(r).arg(c)));
                }
        }
        // Hover: family, layer number, tensor, step and the exact value.
        view.statisticChooser()->setCurrentIndex(int(LayerStatistic::L2));
        const QString hover = view.heatmap()->hoverText(3, 2);
        QVERIFY2(hover.contains(QStringLiteral("blocks.{N}.w — layer 12")), qPrintable(hover));
        QVERIFY(hover.contains(QStringLiteral("blocks.12.w")));
        QVERIFY(hover.contains(QStringLiteral("step 40")));
        QVERIFY(hover.contains(QString::fromStdString(fmt::exact(*view.profile().values[3][2]))));
        // The relative change is labelled as what it is, and its gaps explained.
        view.statisticChooser()->setCurrentIndex(int(LayerStatistic::L2RelativeChange));
        QVERIFY(view.statisticChooser()->currentText().contains(QStringLiteral("L2")));
        const double want = std::fabs(l2(f.values[2][1]) - l2(f.values[1][1])) / l2(f.values[1][1]);
        QVERIFY(std::fabs(*view.heatmap()->data().at(1, 2) - want) < 1e-9 * want);
        QVERIFY(view.heatmap()->hoverText(2, 2).contains(QStringLiteral("previous checkpoint")));
    }

    // A layer holding NaN/Inf: its cell is flagged (framed in red) and the
    // hover says its figure is of the finite values only (issue 38 item 19).
    void nonFiniteCellsAreFlagged() {
        QTemporaryDir tmp;
        const float nan = std::numeric_limits<float>::quiet_NaN();
        const float inf = std::numeric_limits<float>::infinity();
        for (int c = 0; c < 2; ++c) {
            Checkpoint ck;
            ck.setMetadata("step", std::to_string(100 * (c + 1)));
            ck.addTensor({"h.0.w", {3}, {1.f, 2.f, 3.f}});
            ck.addTensor({"h.1.w", {3}, {c == 1 ? nan : 1.f, c == 1 ? inf : 2.f, 3.f}});
            ck.save(str(tmp.path()) + "/c" + std::to_string(c) + ".oxck");
        }
        RunOptions opt;
        opt.useCache = false;
        auto run = std::make_shared<const Run>(readRun({str(tmp.path())}, opt));
        auto series = std::make_shared<const std::vector<TensorSeries>>(tensorSeries(*run));
        LayerProfileView view;
        view.resize(900, 600);
        view.setRun(run, series);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const HeatmapData& d = view.heatmap()->data();
        QCOMPARE(d.flagged, (std::vector<bool>{false, false, false, true}));
        const QString hover = view.heatmap()->hoverText(1, 1);
        QVERIFY2(hover.contains(QStringLiteral("holds 2 NaN/Inf")), qPrintable(hover));
        QVERIFY(!view.heatmap()->hoverText(0, 1).contains(QStringLiteral("NaN/Inf")));
        QVERIFY(!view.grab().isNull()); // painted with the frame
    }

    void clickChoosesTensorAndSelectionPicksFamily() {
        Fixture f;
        LayerProfileView view;
        QVERIFY(shown(view, f));
        view.setSelectedTensor(QStringLiteral("blocks.12.norm"));
        QCOMPARE(view.families()[size_t(view.currentFamily())].pattern(),
                 std::string("blocks.{N}.norm"));
        view.setSelectedTensor(QStringLiteral("blocks.1.w"));
        QCOMPARE(view.families()[size_t(view.currentFamily())].pattern(),
                 std::string("blocks.{N}.w"));
        QSignalSpy chosen(&view, &LayerProfileView::tensorChosen);
        QTest::mouseClick(view.heatmap(), Qt::LeftButton, {},
                          view.heatmap()->cellRect(2, 0).center());
        QCOMPARE(chosen.size(), 1);
        QCOMPARE(chosen[0][0].toString(), QStringLiteral("blocks.3.w"));
        // The Family box changes the family even while the selected tensor
        // is in another (issue 38 item 15): the heatmap shows the chosen one,
        // with no row highlighted.
        const int norm = familyIndex(view, "blocks.{N}.norm");
        view.familyChooser()->setCurrentIndex(norm);
        QCOMPARE(view.currentFamily(), norm);
        QVERIFY(view.heatmap()->data().yTitle.contains(QStringLiteral("blocks.{N}.norm")));
        // By keys too.
        view.familyChooser()->setFocus();
        QTest::keyClick(view.familyChooser(), norm > 0 ? Qt::Key_Up : Qt::Key_Down);
        QCOMPARE(view.currentFamily(), norm > 0 ? norm - 1 : norm + 1);
        // The run goes: nothing of it stays.
        view.setRun(nullptr, nullptr);
        QCOMPARE(view.heatmap()->data().rows, 0);
        QVERIFY(view.families().empty());
        QCOMPARE(view.familyChooser()->count(), 0);
        QVERIFY(!view.logScale()->isEnabled());
    }
};

QTEST_MAIN(TestLayerProfileView)
#include "tst_layerprofileview.moc"
