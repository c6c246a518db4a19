// The run window's chart tabs: a loaded run reaches the layer profile, the
// distribution and the metadata chart; the selected tensor reaches them by
// name; a click in the layer profile selects that layer's tensor. The
// window's menus: File, View (a tab each), Help, with the standard shortcuts.
#include "optimizerfixture.h"
#include "testsupport.h"

#include "run/distributionview.h"
#include "run/heatmapview.h"
#include "run/layerprofileview.h"
#include "run/metadatachartview.h"
#include "run/runchartview.h"
#include "run/runcheckpointmodel.h"
#include "run/runoverview.h"
#include "run/runwindow.h"

#include "ckptscope/formats/oxck/checkpoint.h"

#include "ckptscope/common/numberformat.h"
#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QHeaderView>
#include <QLineEdit>
#include <QMenuBar>
#include <QPointer>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QXYSeries>

#include <QTest>

#include <cmath>

using namespace ckptscope;
using testsupport::str;

// Opens dir as a run and waits until its `checkpoints` are all read
// (files written a moment ago are held back until they settle).
bool openRun(RunWindow& w, const QString& dir, size_t checkpoints) {
    w.show();
    w.openPaths({dir});
    return QTest::qWaitFor(
        [&] {
            return w.run() && w.run()->checkpoints.size() == checkpoints &&
                   w.waitingFiles().empty() && w.run()->notCached == 0;
        },
        20000);
}

class TestRunWindowTabs : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private Q_SLOTS:
    void initTestCase() {
        qputenv("XDG_CACHE_HOME", m_tmp.filePath(QStringLiteral("cache")).toUtf8());
    }

    void tabsFollowTheSelection() {
        const QString dir = m_tmp.filePath(QStringLiteral("run"));
        QVERIFY(QDir().mkpath(dir));
        for (int c = 0; c < 3; ++c) {
            Checkpoint ck;
            ck.setMetadata("step", std::to_string(c * 5));
            ck.setMetadata("loss", std::to_string(3 - c));
            for (int layer = 0; layer < 3; ++layer)
                ck.addTensor(
                    {"h." + std::to_string(layer) + ".w", {4}, {1.f, 2.f, float(layer), float(c)}});
            ck.save(str(dir) + "/s" + std::to_string(c) + ".oxck");
        }
        RunWindow w;
        QSignalSpy loaded(&w, &RunWindow::runLoaded);
        w.show();
        w.openPaths({dir});
        // Files written a moment ago are held back until they settle (WriteSettle).
        QTRY_VERIFY_WITH_TIMEOUT(w.run() && w.run()->checkpoints.size() == 3 &&
                                     w.waitingFiles().empty() && w.run()->notCached == 0,
                                 20000);
        QVERIFY(!loaded.isEmpty());
        QStringList titles;
        for (int i = 0; i < w.chartTabs()->count(); ++i)
            titles << w.chartTabs()->tabText(i);
        QCOMPARE(titles, (QStringList{QStringLiteral("Over steps"), QStringLiteral("Distribution"),
                                      QStringLiteral("Layer profile"), QStringLiteral("Metadata"),
                                      QStringLiteral("Overview")}));
        QVERIFY(w.showTab(QStringLiteral("layer profile")));
        QCOMPARE(w.chartTabs()->currentWidget(), w.layerProfileView());
        QCOMPARE(w.layerProfileView()->heatmap()->data().rows, 3);
        QCOMPARE(w.metadataChartView()->keyChooser()->currentText(), QStringLiteral("loss"));
        // The first tensor is selected at load; its distribution is read.
        QTRY_COMPARE_WITH_TIMEOUT(w.distributionView()->tensor(), QStringLiteral("h.0.w"), 20000);
        // A click on layer 2 selects h.2.w everywhere.
        LayerProfileView* lp = w.layerProfileView();
        QTest::mouseClick(lp->heatmap(), Qt::LeftButton, {},
                          lp->heatmap()->cellRect(2, 1).center());
        QCOMPARE(w.distributionView()->tensor(), QStringLiteral("h.2.w"));
        QTRY_VERIFY_WITH_TIMEOUT(!w.distributionView()->isLoading() &&
                                     !w.distributionView()->percentiles().empty(),
                                 20000);
        QVERIFY(w.selectTensorNamed(QStringLiteral("h.1.w")));
        QCOMPARE(w.distributionView()->tensor(), QStringLiteral("h.1.w"));
        QVERIFY(!w.selectTensorNamed(QStringLiteral("nope")));
    }

    // A Trainer run folder: config.json's facts in the Overview, the loss
    // from trainer_state.json charted first, side files in their column.
    void trainerFolderOverviewAndLoss() {
        const QString dir = m_tmp.filePath(QStringLiteral("trainer"));
        const std::vector<uint64_t> steps = {50, 100, 150};
        std::vector<double> loss;
        for (uint64_t step : steps) {
            const std::string ck = str(dir) + "/checkpoint-" + std::to_string(step);
            QVERIFY(QDir().mkpath(QString::fromStdString(ck)));
            Checkpoint c;
            c.addTensor({"h.0.w", {2}, {1.f, float(step)}});
            c.save(ck + "/model.oxck");
            loss.push_back(3.0 / double(step) + 0.25);
            testsupport::writeFile(QString::fromStdString(ck + "/trainer_state.json"),
                                   "{\"global_step\": " + std::to_string(step) +
                                       ", \"log_history\": [{\"learning_rate\": 1e-4, "
                                       "\"loss\": " +
                                       std::to_string(loss.back()) +
                                       ", \"step\": " + std::to_string(step) + "}]}");
            testsupport::writeFile(QString::fromStdString(ck + "/optimizer.pt"), "PK");
        }
        testsupport::writeFile(dir + QStringLiteral("/checkpoint-150/config.json"),
                               R"({"architectures": ["MistralForCausalLM"], "hidden_size": 96,
                                   "num_key_value_heads": 2, "torch_dtype": "bfloat16"})");
        RunWindow w;
        QVERIFY(openRun(w, dir, 3));
        RunOverview* o = w.overview();
        QCOMPARE(o->valueOf(QStringLiteral("architecture")), QStringLiteral("MistralForCausalLM"));
        QCOMPARE(o->valueOf(QStringLiteral("hidden_size")), QStringLiteral("96"));
        QCOMPARE(o->valueOf(QStringLiteral("num_key_value_heads")), QStringLiteral("2"));
        QCOMPARE(o->valueOf(QStringLiteral("torch_dtype")), QStringLiteral("bfloat16"));
        QVERIFY(o->valueOf(QStringLiteral("vocab_size")).isNull()); // not in this config
        QCOMPARE(o->valueOf(QStringLiteral("Checkpoints")), QStringLiteral("3 checkpoints"));
        // What `timeline` finds: no NaN/Inf, h.0.w's L2 from √2 to √(1 + 150²),
        // and per logged key its count and last, lowest and highest values.
        QCOMPARE(o->valueOf(QStringLiteral("First NaN/Inf")),
                 QStringLiteral("none in any checkpoint"));
        const QString growth = o->valueOf(QStringLiteral("L2 norm grew most"));
        QVERIFY2(
            growth.startsWith(QStringLiteral("h.0.w: ×")) &&
                growth.contains(
                    QStringLiteral("(L2 %1 → %2, steps 50 → 150)")
                        .arg(QString::fromStdString(fmt::display(std::sqrt(1.0 + 50 * 50))),
                             QString::fromStdString(fmt::display(std::sqrt(1.0 + 150 * 150))))),
            qPrintable(growth));
        // (each trainer_state.json here holds its own step's log only; the
        // latest's is the history)
        const QString logged = o->valueOf(QStringLiteral("Logged: loss"));
        QVERIFY2(
            logged ==
                QStringLiteral("1 time; last %1 at 150; lowest %1 at 150; highest %1 at 150")
                    .arg(QString::fromStdString(fmt::exact(std::stod(std::to_string(loss[2]))))),
            qPrintable(logged));
        QVERIFY(w.showTab(QStringLiteral("Overview")));
        QCOMPARE(w.chartTabs()->currentWidget(), o);
        // The loss first among the numeric keys, one point per checkpoint.
        MetadataChartView* m = w.metadataChartView();
        QCOMPARE(m->keyChooser()->currentText(), QStringLiteral("loss"));
        QCOMPARE(m->keyChooser()->count(), 2); // learning_rate, loss
        QXYSeries* points = nullptr;
        for (QAbstractSeries* s : m->chart()->series())
            if (auto* x = qobject_cast<QScatterSeries*>(s))
                points = x;
        QVERIFY(points);
        QCOMPARE(points->count(), int(steps.size()));
        for (int i = 0; i < points->count(); ++i) {
            QCOMPARE(points->at(i).x(), double(steps[size_t(i)]));
            QCOMPARE(points->at(i).y(), std::stod(std::to_string(loss[size_t(i)])));
        }
        // Side files: a count, the names in the tooltip.
        const QModelIndex side = w.checkpointModel()->index(0, RunCheckpointModel::SideFiles);
        QCOMPARE(side.data().toString(), QStringLiteral("2"));
        QCOMPARE(side.data(Qt::ToolTipRole).toString(),
                 QStringLiteral("optimizer.pt\ntrainer_state.json"));
    }

    // A Trainer run with Adam's state (optimizerfixture.h), one layer's
    // weights 1000× smaller: the Overview names it an optimizer outlier at
    // every step, the Layer profile's "update / weight" turns log colours on
    // and its cells are the formula's, the tensor chart plots the ratio.
    void optimizerStateOverTheRun() {
        const QString dir = m_tmp.filePath(QStringLiteral("adam"));
        const std::vector<std::string> names = {"layers.0.weight", "layers.1.weight",
                                                "layers.2.weight", "layers.3.weight"};
        std::vector<testsupport::AdamFixture> fixtures;
        for (int c = 0; c < 3; ++c) {
            auto f = testsupport::AdamFixture::make(names, 64, {1, 1, 1e-3, 1}, uint32_t(c + 1));
            f.step = double(10 * (c + 1));
            const QString ck = dir + QStringLiteral("/checkpoint-%1").arg(10 * (c + 1));
            QVERIFY(QDir().mkpath(ck));
            f.writeTo(str(ck));
            fixtures.push_back(std::move(f));
        }
        RunWindow w;
        QVERIFY(openRun(w, dir, 3));
        const QString outliers = w.overview()->valueOf(QStringLiteral("Optimizer outliers"));
        QVERIFY2(outliers.startsWith(QStringLiteral("layers.2.weight: update / weight ×")) &&
                     outliers.contains(QStringLiteral("(at 3 checkpoints, steps 10 – 30)")) &&
                     !outliers.contains(QLatin1Char('\n')),
                 qPrintable(outliers));
        LayerProfileView* lp = w.layerProfileView();
        lp->logScale()->setChecked(false);
        QVERIFY(lp->setStatistic(QStringLiteral("Update / Weight")));
        QVERIFY(lp->logScale()->isChecked());
        const LayerProfile& p = lp->profile();
        QCOMPARE(p.statistic, LayerStatistic::UpdateToWeight);
        QCOMPARE(p.values.size(), names.size());
        for (size_t layer = 0; layer < names.size(); ++layer)
            for (size_t c = 0; c < 3; ++c) {
                const double want = fixtures[c].expected(layer).updateToWeight;
                QVERIFY(p.values[layer][c] && std::abs(*p.values[layer][c] - want) <= 1e-12 * want);
            }
        QVERIFY(w.selectTensorNamed(QStringLiteral("layers.2.weight")));
        QVERIFY(w.showTab(QStringLiteral("Over steps")));
        RunChartView* chart = w.findChild<RunChartView*>();
        QVERIFY(chart && chart->optimizerView()->isVisible());
        QXYSeries* ratio = nullptr;
        for (QAbstractSeries* s : chart->optimizerView()->chart()->series())
            if (s->name() == QStringLiteral("update / weight"))
                ratio = qobject_cast<QXYSeries*>(s);
        QVERIFY(ratio && ratio->count() == 3);
        QCOMPARE(ratio->at(2).x(), 30.0);
        QVERIFY(std::abs(ratio->at(2).y() - fixtures[2].expected(2).updateToWeight) <=
                1e-12 * ratio->at(2).y());
        QVERIFY(chart->describe(2).contains(QStringLiteral("update / weight ")));
    }

    // A key whose last value logged is NaN says so; one logged only as NaN
    // has no extremes, and the row is still there (issue 38 item 18).
    void overviewLastLoggedValueMayBeNaN() {
        auto run = std::make_shared<Run>();
        run->kind = RunKind::Tensors;
        run->trainerHistoryFile = "trainer_state.json";
        const double nan = std::nan("");
        run->trainerHistory["loss"] = {{100, 2.5}, {200, 1.5}, {300, nan}};
        run->trainerHistory["eval_loss"] = {{300, nan}};
        RunOverview o;
        o.setRun(run, std::make_shared<const std::vector<TensorSeries>>());
        QCOMPARE(o.valueOf(QStringLiteral("Logged: loss")),
                 QStringLiteral("3 times; last nan at 300; lowest 1.5 at 200; highest 2.5 at 100; "
                                "1 NaN/Inf"));
        QCOMPARE(o.valueOf(QStringLiteral("Logged: eval_loss")),
                 QStringLiteral("1 time; last nan at 300; 1 NaN/Inf"));
    }

    // At 1024 × 700 nothing is cut (issue 22, defect 10): the NaN/Inf
    // column in view, the layer profile's controls within the page (the
    // family box elides, its tooltip names the family), legends and axis
    // titles short enough for the charts.
    void nothingCutAt1024x700() {
        const QString dir = m_tmp.filePath(QStringLiteral("narrow"));
        QVERIFY(QDir().mkpath(dir));
        for (int c = 0; c < 2; ++c) {
            Checkpoint ck;
            ck.setMetadata("step", std::to_string(c + 1));
            for (int layer = 0; layer < 3; ++layer)
                ck.addTensor({"model.decoder.layers." + std::to_string(layer) +
                                  ".self_attention.query_key_value.weight",
                              {4},
                              {1.f, 2.f, float(layer), c ? std::nanf("") : 1.f}});
            ck.save(str(dir) + "/s" + std::to_string(c) + ".oxck");
        }
        RunWindow w;
        w.resize(1024, 700);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.openPaths({dir});
        QTRY_VERIFY_WITH_TIMEOUT(w.run() && w.run()->checkpoints.size() == 2 &&
                                     w.waitingFiles().empty() && w.run()->notCached == 0,
                                 20000);
        QTableView* list = w.checkpointView();
        const int col = RunCheckpointModel::NonFinite;
        QTRY_VERIFY(!list->model()->index(1, col).data().toString().isEmpty());
        QHeaderView* h = list->horizontalHeader();
        QVERIFY2(h->sectionViewportPosition(col) + h->sectionSize(col) <= list->viewport()->width(),
                 "the NaN/Inf column is cut");
        QVERIFY(list->model()
                    ->index(1, col)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("NaN")));
        QVERIFY(w.showTab(QStringLiteral("layer profile")));
        LayerProfileView* lp = w.layerProfileView();
        QTRY_VERIFY(lp->isVisible());
        QVERIFY2(
            lp->minimumSizeHint().width() <= lp->width(),
            qPrintable(
                QStringLiteral("%1 > %2").arg(lp->minimumSizeHint().width()).arg(lp->width())));
        auto* family = lp->findChild<QComboBox*>();
        QVERIFY(family);
        QVERIFY(family->geometry().right() <= lp->width());
        QVERIFY(family->toolTip().contains(QStringLiteral("query_key_value")));
        // The charts' legends and axis titles: short names.
        for (QAbstractAxis* axis : w.chartView()->normChart()->axes(Qt::Vertical))
            QVERIFY2(axis->titleText().size() <= 8, qPrintable(axis->titleText()));
    }

    void menusAndStandardShortcuts() {
        QPointer<RunWindow> w = new RunWindow; // deletes itself on close
        w->show();
        w->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(w));
        QStringList menus;
        for (QAction* a : w->menuBar()->actions())
            menus << a->text().remove(QLatin1Char('&'));
        QCOMPARE(menus, (QStringList{QStringLiteral("File"), QStringLiteral("View"),
                                     QStringLiteral("Help")}));
        QTest::keyClick(w, Qt::Key_3, Qt::ControlModifier);
        QCOMPARE(w->chartTabs()->currentWidget(), w->layerProfileView());
        QTest::keyClick(w, Qt::Key_F, Qt::ControlModifier);
        QCOMPARE(QApplication::focusWidget(), w->filterEdit());
        // Help ▸ Keyboard Shortcuts: this window's first, then the others'.
        QAction* help = nullptr;
        for (QAction* a : w->menuBar()->findChildren<QAction*>())
            if (a->text().remove(QLatin1Char('&')) == QStringLiteral("Keyboard Shortcuts"))
                help = a;
        QVERIFY(help);
        help->trigger();
        auto* dialog = w->findChild<QDialog*>(QStringLiteral("keyboardShortcuts"));
        QVERIFY(dialog);
        auto* table = dialog->findChild<QTableWidget*>();
        QVERIFY(table && table->rowCount() > 0);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("Run window"));
        QStringList listed;
        for (int r = 0; r < table->rowCount(); ++r)
            listed << table->item(r, 0)->text() + QLatin1Char('|') + table->item(r, 2)->text() +
                          QLatin1Char('|') + table->item(r, 3)->text();
        QStringList closeKeys; // every binding, as the list spells them
        for (const QKeySequence& k : QKeySequence::keyBindings(QKeySequence::Close))
            closeKeys << k.toString(QKeySequence::NativeText);
        const QString close = closeKeys.join(QStringLiteral(", "));
        for (const QString& row : {QStringLiteral("Run window|Close Window|") + close,
                                   QStringLiteral("Browser window|Close Window|") + close,
                                   QStringLiteral("Compare window|Swap A ↔ B|Ctrl+Shift+S")})
            QVERIFY2(listed.contains(row), qPrintable(row));
        // Ctrl+W closes it, as every window (the action holds every binding
        // of the platform's Close, not only the first).
        dialog->close();
        w->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(w));
        QTest::keyClick(w, Qt::Key_W, Qt::ControlModifier);
        QTRY_VERIFY(w.isNull());
    }
};

QTEST_MAIN(TestRunWindowTabs)
#include "tst_runwindowtabs.moc"
