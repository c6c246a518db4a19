// The run view: its models under QAbstractItemModelTester, the load in the
// background, the charts of the selected tensor, and a checkpoint that
// appears in the watched folder being added.
#include "testsupport.h"

#include "guisupport.h"
#include "runchartview.h"
#include "runcheckpointmodel.h"
#include "runtensormodel.h"
#include "runwindow.h"

#include "ckptscope/checkpoint.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QChart>
#include <QListView>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QXYSeries>

#include <limits>

using namespace ckptscope;
using testsupport::qstr;
using testsupport::str;

namespace {

void writeStep(const QString& dir, int step, float scale) {
    Checkpoint c;
    c.setMetadata("step", std::to_string(step));
    c.addTensor({"layers.0.w", {3}, {scale, -scale, 0.5f}});
    c.addTensor({"layers.1.w", {2}, {std::numeric_limits<float>::quiet_NaN(), scale}});
    c.save(str(dir) + "/ckpt_" + std::to_string(step) + ".oxck");
}

} // namespace

class TestRunWindow : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        qputenv("XDG_CACHE_HOME", m_tmp.filePath(QStringLiteral("cache")).toUtf8());
    }

    void modelsUnderTester() {
        const QString dir = m_tmp.filePath(QStringLiteral("models"));
        QVERIFY(QDir().mkpath(dir));
        writeStep(dir, 20, 2);
        writeStep(dir, 10, 1);
        RunCheckpointModel checkpoints;
        RunTensorModel tensors;
        QAbstractItemModelTester t1(&checkpoints,
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(&tensors,
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto run = std::make_shared<Run>(readRun({str(dir)}));
        checkpoints.setRun(run);
        tensors.setSeries(std::make_shared<std::vector<TensorSeries>>(tensorSeries(*run)));
        QCOMPARE(checkpoints.rowCount(), 2);
        QCOMPARE(checkpoints.index(0, RunCheckpointModel::Step).data().toString(),
                 QStringLiteral("10"));
        QCOMPARE(checkpoints.index(1, RunCheckpointModel::File).data().toString(),
                 QStringLiteral("ckpt_20.oxck"));
        QCOMPARE(checkpoints.index(0, RunCheckpointModel::NonFinite).data().toString(),
                 QStringLiteral("1 with NaN/Inf"));
        QCOMPARE(tensors.rowCount(), 2);
        QCOMPARE(tensors.index(1).data().toString(), QStringLiteral("layers.1.w"));
        checkpoints.setRun(nullptr);
        QCOMPARE(checkpoints.rowCount(), 0);
    }

    void loadsChartsAndWatchesFolder() {
        const QString dir = m_tmp.filePath(QStringLiteral("watched"));
        QVERIFY(QDir().mkpath(dir));
        writeStep(dir, 100, 1);
        writeStep(dir, 200, 3);
        auto* w = new RunWindow;
        QSignalSpy loaded(w, &RunWindow::runLoaded);
        w->show();
        w->openPaths({dir});
        QVERIFY(loaded.wait(20000));
        QVERIFY(w->run());
        QCOMPARE(w->run()->checkpoints.size(), size_t(2));
        QVERIFY(w->windowTitle().contains(QFileInfo(dir).absoluteFilePath()));
        // The first tensor is selected and charted: mean at steps 100 and 200.
        QChart* chart = w->chartView()->valueChart();
        QXYSeries* mean = nullptr;
        for (QAbstractSeries* s : chart->series())
            if (s->name() == QStringLiteral("mean"))
                mean = qobject_cast<QXYSeries*>(s);
        QVERIFY(mean);
        QCOMPARE(mean->count(), 2);
        QCOMPARE(mean->at(0).x(), 100.0);
        QCOMPARE(mean->at(1).x(), 200.0);
        QCOMPARE(mean->at(1).y(), *w->run()->checkpoints[1].summary.tensors[0].stats.mean);
        // Every axis of both charts ticks on round numbers (steps 100, 120…).
        for (QChart* c : {chart, w->chartView()->normChart()})
            for (QAbstractAxis* axis : c->axes()) {
                auto* value = qobject_cast<QValueAxis*>(axis);
                QVERIFY(value);
                const QString problem = guisupport::roundnessProblem(guisupport::ticksOf(value));
                QVERIFY2(problem.isEmpty(),
                         qPrintable(axis->titleText() + QStringLiteral(": ") + problem));
            }
        // A new checkpoint in the folder is picked up.
        writeStep(dir, 300, 9);
        QVERIFY(loaded.wait(20000));
        QTRY_COMPARE_WITH_TIMEOUT(w->run()->checkpoints.size(), size_t(3), 20000);
        QCOMPARE(*w->run()->checkpoints[2].step, uint64_t(300));
        QVERIFY(w->run()->cacheHits >= 2); // the two seen before came from the cache
        w->close();
    }
};

QTEST_MAIN(TestRunWindow)
#include "tst_runwindow.moc"
