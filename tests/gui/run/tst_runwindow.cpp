// The run view: its models under QAbstractItemModelTester, the ways into it
// (a dropped folder, several files, File ▸ Open…), the load in the
// background with progress and cancel, the tensor tree kept by name across
// reloads, the charts (hover, click, compare), and checkpoints appearing in
// the watched folder — added only once completely written.
#include "testsupport.h"

#include "browser/mainwindow.h"
#include "common/windowregistry.h"
#include "compare/comparewindow.h"
#include "dropsupport.h"
#include "guisupport.h"
#include "run/runchartview.h"
#include "run/runcheckpointmodel.h"
#include "run/runtensormodel.h"
#include "run/runwindow.h"
#include "tensor/tensorfilterproxy.h"
#include "tensor/tensortreemodel.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QContextMenuEvent>
#include <QFileDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QTreeView>
#include <QXYSeries>

#include <fstream>
#include <limits>

using namespace ckptscope;
using testsupport::qstr;
using testsupport::str;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

void writeStep(const QString& dir, int step, float scale) {
    Checkpoint c;
    c.setMetadata("step", std::to_string(step));
    c.addTensor({"layers.0.w", {3}, {scale, -scale, 0.5f}});
    c.addTensor({"layers.1.w", {2}, {kNaN, scale}});
    c.save(str(dir) + "/ckpt_" + std::to_string(step) + ".oxck");
}

template <class W> QList<W*> windowsOf() {
    QList<W*> out;
    for (QWidget* w : QApplication::topLevelWidgets())
        if (auto* x = qobject_cast<W*>(w))
            out << x;
    return out;
}

template <class W> void closeAll() {
    for (W* w : windowsOf<W>()) {
        w->close();
        delete w;
    }
}

// Read, and no file held back (files written just now wait a moment).
bool settled(RunWindow* w) {
    return QTest::qWaitFor([w] { return w->run() && w->waitingFiles().empty(); }, 20000);
}

RunWindow* openAndWait(const QStringList& paths) {
    RunWindow* w = WindowRegistry::instance().openRun(paths);
    return settled(w) ? w : nullptr;
}

QXYSeries* seriesNamed(QChart* chart, const QString& name) {
    for (QAbstractSeries* s : chart->series())
        if (s->name() == name)
            return qobject_cast<QXYSeries*>(s);
    return nullptr;
}

void drop(QWidget* target, const QStringList& paths) {
    QMimeData mime;
    QList<QUrl> urls;
    for (const QString& p : paths)
        urls << QUrl::fromLocalFile(p);
    mime.setUrls(urls);
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &enter);
    QDropEvent ev(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &ev);
}

} // namespace

class TestRunWindow : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

    QString folder(const QString& name) {
        const QString dir = m_tmp.filePath(name);
        QDir().mkpath(dir);
        return dir;
    }

private Q_SLOTS:
    // A Trainer checkpoint of pickles: the checkpoint list's menu offers its
    // side files (optimizer, scheduler, RNG states, arguments) and opens one
    // in the browser.
    void sideFilesOpenInTheBrowser() {
        REQUIRE_CONFORMANCE();
        RunWindow* w =
            openAndWait({testsupport::corpus(QStringLiteral("pytorch/valid/checkpoint-50"))});
        QVERIFY(w);
        QCOMPARE(w->run()->checkpoints.size(), size_t(1));
        QTableView* list = w->checkpointView();
        const QModelIndex row0 = w->checkpointProxy()->index(0, RunCheckpointModel::File);
        dropsupport::MenuAnswer answer({}, QStringLiteral("checkpointMenu"));
        answer.setTrigger(QStringLiteral("openSideFile:optimizer.pt"));
        Q_EMIT list->customContextMenuRequested(list->visualRect(row0).center());
        QVERIFY(answer.seen());
        for (const char* name :
             {"optimizer.pt", "rng_state.pth", "scheduler.pt", "training_args.bin"})
            QVERIFY2(
                answer.actions().contains(QStringLiteral("openSideFile:") + QLatin1String(name)),
                qPrintable(answer.actions().join(QLatin1Char(' '))));
        QVERIFY(!answer.actions().contains(QStringLiteral("openSideFile:trainer_state.json")));
        QTRY_COMPARE(windowsOf<MainWindow>().size(), 1);
        QTRY_COMPARE(QFileInfo(windowsOf<MainWindow>().first()->currentPath()).fileName(),
                     QStringLiteral("optimizer.pt"));
    }

    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        qputenv("XDG_CACHE_HOME", m_tmp.filePath(QStringLiteral("cache")).toUtf8());
        qputenv("XDG_CONFIG_HOME", m_tmp.filePath(QStringLiteral("config")).toUtf8());
    }

    void cleanup() {
        closeAll<RunWindow>();
        closeAll<MainWindow>();
        closeAll<CompareWindow>();
    }

    void checkpointModelUnderTester() {
        const QString dir = folder(QStringLiteral("models"));
        writeStep(dir, 20, 2);
        writeStep(dir, 10, 1);
        Checkpoint big; // no step and larger: last by step, first by size
        big.addTensor({"layers.0.w", {64}, std::vector<float>(64, 1.0f)});
        big.save(str(dir) + "/zz_nostep.oxck");
        RunCheckpointModel checkpoints;
        QAbstractItemModelTester t1(&checkpoints,
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto run = std::make_shared<Run>(readRun({str(dir)}));
        checkpoints.setRun(run);
        QCOMPARE(checkpoints.rowCount(), 3);
        QCOMPARE(checkpoints.index(0, RunCheckpointModel::Step).data().toString(),
                 QStringLiteral("10"));
        QCOMPARE(checkpoints.index(1, RunCheckpointModel::File).data().toString(),
                 QStringLiteral("ckpt_20.oxck"));
        QCOMPARE(checkpoints.index(0, RunCheckpointModel::NonFinite).data().toString(),
                 QStringLiteral("1"));
        QCOMPARE(
            checkpoints.index(0, RunCheckpointModel::NonFinite).data(Qt::ToolTipRole).toString(),
            QStringLiteral("1 tensor holding NaN or Inf"));
        QVERIFY(
            !checkpoints.index(0, RunCheckpointModel::NonFinite).data(Qt::DecorationRole).isNull());
        QVERIFY(
            checkpoints.index(2, RunCheckpointModel::NonFinite).data(Qt::DecorationRole).isNull());
        // Every column sorts by value (steps: none last; sizes in bytes).
        QSortFilterProxyModel* proxy = nullptr;
        RunWindow w;
        proxy = w.checkpointProxy();
        w.checkpointModel()->setRun(run);
        w.checkpointView()->sortByColumn(RunCheckpointModel::Step, Qt::DescendingOrder);
        QCOMPARE(proxy->index(0, RunCheckpointModel::File).data().toString(),
                 QStringLiteral("zz_nostep.oxck"));
        QCOMPARE(proxy->index(1, RunCheckpointModel::Step).data().toString(), QStringLiteral("20"));
        w.checkpointView()->sortByColumn(RunCheckpointModel::Size, Qt::DescendingOrder);
        QCOMPARE(proxy->index(0, RunCheckpointModel::File).data().toString(),
                 QStringLiteral("zz_nostep.oxck"));
        w.checkpointView()->sortByColumn(RunCheckpointModel::NonFinite, Qt::AscendingOrder);
        QCOMPARE(proxy->index(0, RunCheckpointModel::File).data().toString(),
                 QStringLiteral("zz_nostep.oxck"));
        checkpoints.setRun(nullptr);
        QCOMPARE(checkpoints.rowCount(), 0);
    }

    void tensorTreeUnderTester() {
        const QString dir = folder(QStringLiteral("tree"));
        for (int step : {1, 2}) {
            Checkpoint c;
            c.setMetadata("step", std::to_string(step));
            c.addTensor({"layers.10.w", {1}, {1.0f}});
            c.addTensor({"layers.2.w", {1}, {step == 2 ? kNaN : 1.0f}});
            c.addTensor({"head/bias", {1}, {0.0f}});
            c.addTensor({"head/bias", {1}, {2.0f}}); // a name repeated within the file
            c.save(str(dir) + "/s" + std::to_string(step) + ".oxck");
        }
        auto run = std::make_shared<Run>(readRun({str(dir)}));
        auto series = std::make_shared<std::vector<TensorSeries>>(tensorSeries(*run));
        RunTensorModel model;
        TensorFilterProxy proxy;
        proxy.setSourceModel(&model);
        QAbstractItemModelTester t1(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSeries(run, series);
        // Split on '.' and '/', natural order: head, layers; 2 before 10.
        QCOMPARE(model.rowCount(), 2);
        const QModelIndex head = model.index(0, 0), layers = model.index(1, 0);
        QCOMPARE(head.data().toString(), QStringLiteral("head"));
        QCOMPARE(layers.data().toString(), QStringLiteral("layers"));
        QCOMPARE(model.index(0, 0, layers).data().toString(), QStringLiteral("2"));
        QCOMPARE(model.index(1, 0, layers).data().toString(), QStringLiteral("10"));
        QCOMPARE(model.rowCount(head), 2);
        QCOMPARE(model.index(1, 0, head).data().toString(),
                 QStringLiteral("bias (#2 of that name)"));
        const QModelIndex w2 = model.index(0, 0, model.index(0, 0, layers));
        QCOMPARE(w2.data(TensorTreeModel::FullNameRole).toString(), QStringLiteral("layers.2.w"));
        QCOMPARE((*series)[size_t(model.seriesOf(w2))].name, std::string("layers.2.w"));
        QCOMPARE(model.indexOfSeries(model.seriesOf(w2)), w2);
        // NaN in one checkpoint marks the tensor and its groups, nothing else.
        QVERIFY(!w2.data(Qt::DecorationRole).isNull());
        QVERIFY(!layers.data(Qt::DecorationRole).isNull());
        QVERIFY(head.data(Qt::DecorationRole).isNull());
        QVERIFY(model.index(1, 0, model.index(1, 0, layers)).data(Qt::DecorationRole).isNull());
        QCOMPARE(model.nonFiniteCheckpoints(model.seriesOf(w2)), size_t(1));
        QVERIFY(w2.data(Qt::ToolTipRole).toString().contains(QStringLiteral("in 1 of them")));
        // The filter keeps matches and their parents.
        proxy.setFilterFixedString(QStringLiteral("bias"));
        QCOMPARE(proxy.rowCount(), 1);
        QCOMPARE(proxy.index(0, 0).data().toString(), QStringLiteral("head"));
        QCOMPARE(model.findSeries("head/bias", 1), 3);
        model.setSeries(nullptr, nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void loadsCharts() {
        const QString dir = folder(QStringLiteral("charts"));
        writeStep(dir, 100, 1);
        writeStep(dir, 200, 3);
        RunWindow* w = openAndWait({dir});
        QVERIFY(w);
        QVERIFY(w->run());
        QCOMPARE(w->run()->checkpoints.size(), size_t(2));
        QCOMPARE(w->windowTitle(), QStringLiteral("charts — run — Ckptscope"));
        // The first tensor is selected and charted: mean at steps 100 and 200.
        QCOMPARE(w->currentTensorName(), QStringLiteral("layers.0.w"));
        QChart* chart = w->chartView()->valueChart();
        const TensorStats& s1 = w->run()->checkpoints[1].summary.tensors[0].stats;
        QXYSeries* mean = seriesNamed(chart, QStringLiteral("mean"));
        QVERIFY(mean);
        QCOMPARE(mean->count(), 2);
        QCOMPARE(mean->at(0).x(), 100.0);
        QCOMPARE(mean->at(1).x(), 200.0);
        QCOMPARE(mean->at(1).y(), *s1.mean);
        QCOMPARE(seriesNamed(chart, QStringLiteral("min"))->at(1).y(), *s1.min);
        QCOMPARE(seriesNamed(chart, QStringLiteral("max"))->at(1).y(), *s1.max);
        QChart* norms = w->chartView()->normChart();
        QCOMPARE(seriesNamed(norms, QStringLiteral("L2 norm"))->at(1).y(), s1.l2);
        QVERIFY(w->selectTensorNamed(QStringLiteral("layers.1.w")));
        QXYSeries* bad = seriesNamed(w->chartView()->normChart(), QStringLiteral("NaN/Inf count"));
        QVERIFY(bad);
        QCOMPARE(bad->count(), 2);
        QCOMPARE(bad->at(0).y(), 1.0);
        // Every marker whole inside the plot, the first and last steps' and
        // a count of 0 included (the plot clips what reaches past it).
        const QRectF plot = norms->plotArea();
        const double half = bad->markerSize() / 2;
        for (int i = 0; i < bad->count(); ++i) {
            const QPointF at = norms->mapToPosition(bad->at(i), bad);
            QVERIFY2(plot.adjusted(half, half, -half, -half).contains(at),
                     qPrintable(QStringLiteral("marker %1 at %2,%3 in %4,%5 %6x%7")
                                    .arg(i)
                                    .arg(at.x())
                                    .arg(at.y())
                                    .arg(plot.x())
                                    .arg(plot.y())
                                    .arg(plot.width())
                                    .arg(plot.height())));
        }
        // One set of grid lines on the lower chart: the NaN/Inf axis on the
        // right draws none of its own.
        for (QAbstractAxis* axis : w->chartView()->normChart()->axes(Qt::Vertical))
            QCOMPARE(axis->isGridLineVisible(), axis->alignment() == Qt::AlignLeft);
        // Every axis of both charts ticks on round numbers (steps 100, 120…).
        for (QChart* c : {chart, w->chartView()->normChart()})
            for (QAbstractAxis* axis : c->axes()) {
                auto* value = qobject_cast<QValueAxis*>(axis);
                QVERIFY(value);
                const QString problem = guisupport::roundnessProblem(guisupport::ticksOf(value));
                QVERIFY2(problem.isEmpty(),
                         qPrintable(axis->titleText() + QStringLiteral(": ") + problem));
            }
    }

    // A run of one checkpoint (issue 22, defect 7): markers where a line
    // cannot be drawn, an x axis around the one step, an L2 axis whose top
    // label is above the norm.
    void oneCheckpointDrawsMarkers() {
        const QString dir = folder(QStringLiteral("single"));
        writeStep(dir, 500, 3.5f);
        RunWindow* w = openAndWait({dir});
        QVERIFY(w);
        QCOMPARE(w->run()->checkpoints.size(), size_t(1));
        QChart* values = w->chartView()->valueChart();
        QChart* norms = w->chartView()->normChart();
        for (const auto& [chart, name] : {std::pair{values, QStringLiteral("mean")},
                                          {values, QStringLiteral("min")},
                                          {values, QStringLiteral("max")},
                                          {norms, QStringLiteral("L2 norm")}}) {
            QXYSeries* s = seriesNamed(chart, name);
            QVERIFY(s);
            QCOMPARE(s->count(), 1);
            QVERIFY2(s->pointsVisible(), qPrintable(name));
        }
        for (QChart* c : {values, norms}) {
            auto* x = qobject_cast<QValueAxis*>(c->axes(Qt::Horizontal).first());
            QVERIFY(x);
            QVERIFY2(x->min() < 500 && x->max() > 500,
                     qPrintable(QStringLiteral("%1..%2").arg(x->min()).arg(x->max())));
            QVERIFY(x->max() - x->min() >= 2);
        }
        const double l2 = w->run()->checkpoints[0].summary.tensors[0].stats.l2;
        QValueAxis* yL2 = nullptr;
        for (QAbstractAxis* a : norms->axes(Qt::Vertical))
            if (a->alignment() == Qt::AlignLeft)
                yL2 = qobject_cast<QValueAxis*>(a);
        QVERIFY(yL2);
        const auto ticks = guisupport::ticksOf(yL2);
        QVERIFY(!ticks.empty());
        QVERIFY2(ticks.back().value >= l2, qPrintable(QString::number(l2)));
        QVERIFY(yL2->max() >= l2);
    }

    void statusLineCountsAgree() {
        // One checkpoint of two tensors: nouns agree with their counts.
        const QString dir = folder(QStringLiteral("one"));
        writeStep(dir, 100, 1);
        RunWindow* w = openAndWait({dir});
        QVERIFY(w);
        QString status;
        for (QLabel* label : w->statusBar()->findChildren<QLabel*>())
            if (label->text().contains(QStringLiteral("skipped")))
                status = label->text();
        QVERIFY2(status.startsWith(QStringLiteral("1 checkpoint, 2 tensors, 0 skipped; cache: ")),
                 qPrintable(status));
    }

    void hoverAndClickOpenCheckpoints() {
        const QString dir = folder(QStringLiteral("hover"));
        writeStep(dir, 100, 1);
        writeStep(dir, 200, 3.25f);
        RunWindow* w = openAndWait({dir});
        QVERIFY(w);
        QVERIFY(QTest::qWaitForWindowExposed(w));
        RunChartView* charts = w->chartView();
        // The mouse over step 200's point: that checkpoint, marked, exact values.
        QChartView* view = charts->valueView();
        QChart* chart = view->chart();
        QXYSeries* mean = seriesNamed(chart, QStringLiteral("mean"));
        const QPoint at = view->mapFromScene(chart->mapToPosition(mean->at(1), mean));
        QCOMPARE(charts->checkpointAt(view, at), 1);
        QTest::mouseMove(view->viewport(), at);
        QTRY_COMPARE(charts->hovered(), 1);
        const TensorStats& s = w->run()->checkpoints[1].summary.tensors[0].stats;
        const QString text = charts->hoverLabel();
        QVERIFY2(text.contains(QStringLiteral("step 200")), qPrintable(text));
        for (double v : {*s.mean, *s.std, *s.min, *s.max, s.l2})
            QVERIFY2(text.contains(QString::fromStdString(fmt::exact(v))), qPrintable(text));
        // Near step 100 on the lower chart: the first checkpoint.
        QChartView* normView = charts->normView();
        const QRectF area = normView->chart()->plotArea();
        QCOMPARE(charts->checkpointAt(normView,
                                      normView->mapFromScene(area.bottomLeft() + QPointF(3, -3))),
                 0);
        QCOMPARE(charts->checkpointAt(normView, QPoint(1, 1)), -1); // outside the plot
        QTest::mouseMove(normView->viewport(), QPoint(1, 1));       // (0, 0) would mean the centre
        QTRY_COMPARE(charts->hovered(), -1);
        QVERIFY(charts->hoverLabel().isEmpty());
        QTest::mouseMove(view->viewport(), at);
        QTRY_COMPARE(charts->hovered(), 1);
        // A click opens that checkpoint in a main window.
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
        QTRY_COMPARE(windowsOf<MainWindow>().size(), 1);
        MainWindow* opened = windowsOf<MainWindow>().first();
        QTRY_COMPARE(QFileInfo(opened->currentPath()).fileName(), QStringLiteral("ckpt_200.oxck"));
        // The checkpoint list: double-click opens; its context menu opens too,
        // and compares with the previous checkpoint (not offered on the first).
        QTableView* list = w->checkpointView();
        const QModelIndex row0 = w->checkpointProxy()->index(0, RunCheckpointModel::File);
        Q_EMIT list->doubleClicked(row0);
        QTRY_COMPARE(windowsOf<MainWindow>().size(), 2);
        {
            dropsupport::MenuAnswer answer({}, QStringLiteral("checkpointMenu"));
            answer.setTrigger(QStringLiteral("openCheckpoint"));
            Q_EMIT list->customContextMenuRequested(list->visualRect(row0).center());
            QVERIFY(answer.seen());
            QCOMPARE(answer.actions(), (QStringList{QStringLiteral("openCheckpoint"),
                                                    QStringLiteral("compareWithPrevious")}));
            QCOMPARE(answer.enabled(), QStringList{QStringLiteral("openCheckpoint")});
            // Open already (the double-click): that window comes to the front.
            QCOMPARE(windowsOf<MainWindow>().size(), 2);
        }
        {
            // The chart's context menu at step 200: compare 100 with 200.
            dropsupport::MenuAnswer answer({}, QStringLiteral("checkpointMenu"));
            answer.setTrigger(QStringLiteral("compareWithPrevious"));
            QContextMenuEvent menuEvent(QContextMenuEvent::Mouse, at,
                                        view->viewport()->mapToGlobal(at));
            QApplication::sendEvent(view->viewport(), &menuEvent);
            QVERIFY(answer.seen());
            QCOMPARE(answer.enabled(), (QStringList{QStringLiteral("openCheckpoint"),
                                                    QStringLiteral("compareWithPrevious")}));
        }
        QCOMPARE(windowsOf<CompareWindow>().size(), 1);
        CompareWindow* compare = windowsOf<CompareWindow>().first();
        QVERIFY(QSignalSpy(compare, &CompareWindow::comparisonFinished).wait(20000));
        const QString title = compare->windowTitle();
        QVERIFY2(title.contains(QStringLiteral("ckpt_100.oxck")) &&
                     title.contains(QStringLiteral("ckpt_200.oxck")),
                 qPrintable(title));
        w->compareWithPrevious(0); // nothing before the first
        QCOMPARE(windowsOf<CompareWindow>().size(), 1);
        // The list's rows are one line of text high, not a button's height.
        QVERIFY(list->rowHeight(0) <= list->fontMetrics().height() + 8);
    }

    void openingARun() {
        const QString dir = folder(QStringLiteral("dropped"));
        writeStep(dir, 1, 1);
        writeStep(dir, 2, 2);
        // A folder dropped on the start page, and on a window showing a file.
        auto* main = new MainWindow;
        main->show();
        drop(main, {dir});
        QTRY_COMPARE(windowsOf<RunWindow>().size(), 1);
        RunWindow* run = windowsOf<RunWindow>().first();
        QCOMPARE(run->windowTitle(), QStringLiteral("dropped — run — Ckptscope"));
        QCOMPARE(run->loader()->paths(), QStringList{dir});
        QVERIFY(main->currentPath().isEmpty()); // the main window opened nothing
        main->openFile(dir + QStringLiteral("/ckpt_1.oxck"));
        QTRY_VERIFY(main->document());
        drop(main, {dir}); // that run is open already: its window comes to the front
        QCOMPARE(windowsOf<RunWindow>().size(), 1);
        closeAll<RunWindow>();
        drop(main, {dir});
        QTRY_COMPARE(windowsOf<RunWindow>().size(), 1);
        QCOMPARE(QFileInfo(main->currentPath()).fileName(), QStringLiteral("ckpt_1.oxck"));
        closeAll<RunWindow>();
        // Several files chosen in File ▸ Open…: one run of those files.
        QAction* open = nullptr;
        for (QAction* a : main->menuBar()->actions().first()->menu()->actions())
            if (a->shortcut() == QKeySequence(QKeySequence::Open))
                open = a;
        QVERIFY(open);
        QTimer::singleShot(200, [dir] {
            for (QFileDialog* d : windowsOf<QFileDialog>()) {
                d->setDirectory(dir);
                d->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"))
                    ->setText(QStringLiteral("\"ckpt_1.oxck\" \"ckpt_2.oxck\""));
                static_cast<QDialog*>(d)->accept(); // QFileDialog's own is protected
            }
        });
        open->trigger();
        QTRY_COMPARE(windowsOf<RunWindow>().size(), 1);
        run = windowsOf<RunWindow>().first();
        QCOMPARE(run->windowTitle(), QStringLiteral("2 files — run — Ckptscope"));
        QVERIFY(settled(run));
        QCOMPARE(run->run()->checkpoints.size(), size_t(2));
    }

    void progressAndCancel() {
        const QString dir = folder(QStringLiteral("progress"));
        for (int i = 0; i < 3; ++i) {
            Checkpoint c;
            c.setMetadata("step", std::to_string(i));
            c.addTensor({"w", {1 << 20}, std::vector<float>(1 << 20, float(i))});
            c.save(str(dir) + "/p" + std::to_string(i) + ".oxck");
        }
        QTest::qWait(1100); // written a moment ago: not held back as still being written
        // Cancelled at once: nothing shown, the status says so.
        auto* w = new RunWindow;
        w->show();
        QSignalSpy loaded(w, &RunWindow::runLoaded);
        w->openPaths({dir});
        QVERIFY(w->cancelButton()->isVisible());
        w->cancelButton()->click();
        QCOMPARE(loaded.size(), 1);
        QVERIFY(!w->run());
        QVERIFY(!w->progressBar()->isVisible());
        // No tensor to pick while nothing is read: the chart does not ask for one.
        QCOMPARE(w->chartView()->valueChart()->title(), QStringLiteral("No checkpoints read yet"));
        // Read in full: files done of total and MB/s along the way.
        RunLoader::Progress last;
        connect(w->loader(), &RunLoader::progress, w,
                [&last](const RunLoader::Progress& p) { last = p; });
        w->loader()->reload();
        QVERIFY(settled(w));
        QCOMPARE(last.filesTotal, size_t(3));
        QCOMPARE(last.filesDone, size_t(3));
        // Every byte of the files not already cached: a file the cancelled
        // read finished before it saw the flag (a busy machine) is a hit now.
        QCOMPARE(last.bytesRead, (uint64_t(3) - w->run()->cacheHits) * (4u << 20));
        QVERIFY(
            w->chartView()->valueChart()->title().endsWith(QStringLiteral("values over steps")));
        const QString text = runProgressText(last);
        QVERIFY2(
            text.startsWith(QStringLiteral("3 of 3 files · ")) &&
                (text.endsWith(QStringLiteral(" MB/s")) || text.endsWith(QStringLiteral(" GB/s"))),
            qPrintable(text));
        QCOMPARE(runProgressText({1, 8, 0, 0.5}), QStringLiteral("1 of 8 files"));
        QCOMPARE(runProgressText({2, 8, 3'000'000, 2.0}),
                 QStringLiteral("2 of 8 files · 1.5 MB/s"));
        QCOMPARE(runProgressText({5, 8, 1'342'177'280, 0.6703}),
                 QStringLiteral("5 of 8 files · 2.0 GB/s"));
        QCOMPARE(runProgressText({5, 8, 999'000'000, 1.0}),
                 QStringLiteral("5 of 8 files · 999.0 MB/s"));
        // From the cache the second time: no values read.
        last = {};
        w->loader()->reload();
        QVERIFY(loaded.wait(20000));
        QCOMPARE(w->run()->cacheHits, uint64_t(3));
        QCOMPARE(last.bytesRead, uint64_t(0));
        // A new checkpoint: the three from the cache are shown at once, before
        // the new one is summarised.
        Checkpoint c;
        c.setMetadata("step", "3");
        c.addTensor({"w", {1 << 20}, std::vector<float>(1 << 20, 3.0f)});
        c.save(str(dir) + "/p3.oxck");
        QTest::qWait(1100);
        std::vector<size_t> previews;
        connect(w->loader(), &RunLoader::preview, w,
                [&previews](std::shared_ptr<const RunLoader::Result> r) {
                    previews.push_back(r->run->checkpoints.size());
                });
        w->loader()->reload();
        QVERIFY(loaded.wait(20000));
        QCOMPARE(previews, std::vector<size_t>{3});
        QCOMPARE(w->run()->checkpoints.size(), size_t(4));
        QCOMPARE(w->run()->cacheMisses, uint64_t(1));
    }

    void reloadKeepsTheTensorByName() {
        const QString dir = folder(QStringLiteral("keep"));
        writeStep(dir, 100, 1);
        RunWindow* w = openAndWait({dir});
        QVERIFY(w);
        QVERIFY(w->selectTensorNamed(QStringLiteral("layers.1.w")));
        QSignalSpy changed(w, &RunWindow::currentTensorChanged);
        // A checkpoint that adds a tensor sorting first changes every index.
        Checkpoint c;
        c.setMetadata("step", "200");
        c.addTensor({"a.first", {1}, {1.0f}});
        c.addTensor({"layers.1.w", {2}, {1.0f, 2.0f}});
        c.save(str(dir) + "/ckpt_200.oxck");
        QTRY_COMPARE_WITH_TIMEOUT(w->run()->checkpoints.size(), size_t(2), 20000);
        QCOMPARE(w->currentTensorName(), QStringLiteral("layers.1.w"));
        QCOMPARE(w->tensorView()->currentIndex().data(TensorTreeModel::FullNameRole).toString(),
                 QStringLiteral("layers.1.w"));
        QVERIFY(changed.isEmpty());
        QXYSeries* mean = seriesNamed(w->chartView()->valueChart(), QStringLiteral("mean"));
        QCOMPARE(mean->count(), 2);
        QCOMPARE(mean->at(1).y(), 1.5);
    }

    void addsACheckpointOnceCompletelyWritten() {
        const QString dir = folder(QStringLiteral("live"));
        writeStep(dir, 100, 1);
        writeStep(dir, 200, 3);
        RunWindow* w = openAndWait({dir});
        QVERIFY(w);
        QCOMPARE(w->run()->checkpoints.size(), size_t(2));
        QVERIFY(w->waitingFiles().empty());
        // The bytes of the next checkpoint, written into the folder in pieces.
        const QString staging = folder(QStringLiteral("staging"));
        writeStep(staging, 300, 9);
        QFile source(staging + QStringLiteral("/ckpt_300.oxck"));
        QVERIFY(source.open(QIODevice::ReadOnly));
        const QByteArray bytes = source.readAll();
        const QString target = dir + QStringLiteral("/ckpt_300.oxck");
        bool complete = false, addedEarly = false, heldBack = false;
        connect(w, &RunWindow::runLoaded, w, [&] {
            for (const std::string& f : w->waitingFiles())
                heldBack =
                    heldBack || QFileInfo(qstr(f)).fileName() == QStringLiteral("ckpt_300.oxck");
            if (!complete && w->run() && w->run()->checkpoints.size() > 2)
                addedEarly = true;
        });
        QFile out(target);
        QVERIFY(out.open(QIODevice::WriteOnly));
        const int pieces = 8;
        for (int i = 0; i < pieces; ++i) {
            const qsizetype from = bytes.size() * i / pieces, to = bytes.size() * (i + 1) / pieces;
            QCOMPARE(out.write(bytes.mid(from, to - from)), to - from);
            QVERIFY(out.flush());
            QTest::qWait(250);
        }
        out.close();
        complete = true;
        QTRY_COMPARE_WITH_TIMEOUT(w->run()->checkpoints.size(), size_t(3), 20000);
        QVERIFY(heldBack); // seen while written, and held back
        QVERIFY(!addedEarly);
        QCOMPARE(*w->run()->checkpoints[2].step, uint64_t(300));
        QVERIFY(w->run()->cacheHits >= 2); // the two seen before came from the cache
        QTRY_VERIFY(w->waitingFiles().empty());
    }

    // A checkpoint rewritten in place (last.oxck, saved over at every
    // step): the folder sees no file come or go, yet the run follows it.
    void checkpointRewrittenInPlaceIsReadAgain() {
        const QString dir = folder(QStringLiteral("inplace"));
        writeStep(dir, 100, 1);
        writeStep(dir, 200, 3);
        RunWindow* w = openAndWait({dir});
        QVERIFY(w);
        QCOMPARE(w->run()->checkpoints[1].summary.tensors[0].stats.max, 3.0);
        const QString staging = folder(QStringLiteral("inplace-next"));
        writeStep(staging, 200, 7);
        QFile source(staging + QStringLiteral("/ckpt_200.oxck"));
        QVERIFY(source.open(QIODevice::ReadOnly));
        QFile out(dir + QStringLiteral("/ckpt_200.oxck"));
        QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate)); // same inode
        QCOMPARE(out.write(source.readAll()), source.size());
        out.close();
        QTRY_VERIFY_WITH_TIMEOUT(w->run()->checkpoints.size() == 2 &&
                                     w->run()->checkpoints[1].summary.tensors[0].stats.max == 7.0,
                                 20000);
    }
};

QTEST_MAIN(TestRunWindow)
#include "tst_runwindow.moc"
