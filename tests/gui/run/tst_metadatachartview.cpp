// The metadata tab: numeric keys charted over the steps with their exact
// values, other keys named as not charted, gaps where a checkpoint lacks the
// key, and nothing left over when the run goes.
#include "testsupport.h"

#include "chart/charthover.h"
#include "guisupport.h"
#include "run/metadatachartview.h"

#include "ckptscope/formats/oxck/checkpoint.h"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>
#include <QXYSeries>

#include <algorithm>

using namespace ckptscope;
using testsupport::str;

namespace {

// A Trainer run in `dir`: the loss logged every 10 steps to 300 (2.75 at
// 170, between checkpoints), eval_bleu at 150 only, a checkpoint folder at
// 100, 200 and 300 with its trainer_state.json; the loss as logged.
std::vector<QPointF> writeTrainerRun(const QString& dir) {
    std::string log;
    std::vector<QPointF> logged;
    for (int step = 10; step <= 300; step += 10) {
        const double loss = step == 170 ? 2.75 : 3.0 - step / 200.0;
        logged.emplace_back(step, loss);
        log += (log.empty() ? "" : ", ") + std::string("{\"loss\": ") + std::to_string(loss) +
               ", \"step\": " + std::to_string(step) + "}";
        if (step == 150)
            log += ", {\"eval_bleu\": 31.5, \"step\": 150}";
        if (step % 100 != 0)
            continue;
        const std::string ck = str(dir) + "/checkpoint-" + std::to_string(step);
        QDir().mkpath(QString::fromStdString(ck));
        Checkpoint c;
        c.addTensor({"w", {1}, {float(step)}});
        c.save(ck + "/model.oxck");
        testsupport::writeFile(QString::fromStdString(ck + "/trainer_state.json"),
                               "{\"global_step\": " + std::to_string(step) +
                                   ", \"log_history\": [" + log + "]}");
    }
    return logged;
}

// What the hover shows with the mouse over (step, value) of the view's chart.
QString hoverOver(MetadataChartView& view, double step, double value) {
    auto* hover = view.findChild<ChartHover*>();
    auto* chartView = view.findChild<QChartView*>();
    QChart* chart = view.chart();
    // (kept a pixel inside the plot: the last step lies on its edge)
    const QRectF plot = chart->plotArea().adjusted(1, 1, -1, -1);
    const QPointF at = chart->mapToPosition({step, value}, chart->series().value(0));
    const QPointF inside(std::clamp(at.x(), plot.left(), plot.right()),
                         std::clamp(at.y(), plot.top(), plot.bottom()));
    return hover->text(chartView->mapFromScene(chart->mapToScene(inside)));
}

} // namespace

class TestMetadataChartView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void numericKeysOverSteps() {
        QTemporaryDir tmp;
        const std::vector<std::string> loss = {"2.5", "1.75", "", "0.125"};
        for (int c = 0; c < 4; ++c) {
            Checkpoint ck;
            ck.setMetadata("step", std::to_string(10 * c));
            if (!loss[size_t(c)].empty())
                ck.setMetadata("loss", loss[size_t(c)]);
            ck.setMetadata("lr", c == 1 ? "nan" : "1e-3");
            ck.setMetadata("optimizer", "adamw");
            ck.addTensor({"w", {1}, {1.f}});
            ck.save(str(tmp.path()) + "/c" + std::to_string(c) + ".oxck");
        }
        RunOptions opt;
        opt.useCache = false;
        auto run = std::make_shared<const Run>(readRun({str(tmp.path())}, opt));
        MetadataChartView view;
        view.resize(800, 500);
        view.setRun(run);
        QStringList keys;
        for (int i = 0; i < view.keyChooser()->count(); ++i)
            keys << view.keyChooser()->itemText(i);
        QCOMPARE(keys, (QStringList{QStringLiteral("loss"), QStringLiteral("lr"),
                                    QStringLiteral("step")}));
        QCOMPARE(view.keyChooser()->currentText(), QStringLiteral("loss"));
        QVERIFY(view.note()->text().contains(QStringLiteral("optimizer")));
        auto* line = qobject_cast<QXYSeries*>(view.chart()->series().value(0));
        QVERIFY(line);
        QCOMPARE(line->points(), (QList<QPointF>{{0, 2.5}, {10, 1.75}, {30, 0.125}}));
        QVERIFY(view.hoverText(1).contains(QStringLiteral("loss = 1.75")));
        QVERIFY(view.hoverText(2).contains(QStringLiteral("not in this checkpoint")));
        for (QAbstractAxis* a : view.chart()->axes()) {
            const QString problem =
                guisupport::roundnessProblem(guisupport::ticksOf(qobject_cast<QValueAxis*>(a)));
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
        // lr: the NaN is not drawn, and said so.
        view.setKey(QStringLiteral("lr"));
        line = qobject_cast<QXYSeries*>(view.chart()->series().value(0));
        QCOMPARE(line->count(), 3);
        QVERIFY(view.note()->text().contains(QStringLiteral("NaN")));
        view.setRun(nullptr);
        QVERIFY(view.chart()->series().isEmpty());
        QCOMPARE(view.keyChooser()->count(), 0);
        QVERIFY(view.hoverText(0).isEmpty());
    }

    // A Trainer run: the line is everything trainer_state.json logged (loss
    // every 10 steps, a spike between checkpoints included), the dots the
    // checkpoints' values; a key logged between checkpoints only is listed.
    void trainerHistoryBetweenCheckpoints() {
        QTemporaryDir tmp;
        const std::vector<QPointF> logged = writeTrainerRun(tmp.path());
        RunOptions opt;
        opt.useCache = false;
        auto run = std::make_shared<const Run>(readRun({str(tmp.path())}, opt));
        QCOMPARE(run->checkpoints.size(), size_t(3));
        MetadataChartView view;
        view.resize(800, 500);
        view.setRun(run);
        QCOMPARE(view.keyChooser()->currentText(), QStringLiteral("loss"));
        QVERIFY(view.keyChooser()->findText(QStringLiteral("eval_bleu")) >= 0);
        auto* line = qobject_cast<QXYSeries*>(view.chart()->series().value(0));
        auto* dots = qobject_cast<QXYSeries*>(view.chart()->series().value(1));
        QVERIFY(line && dots);
        QCOMPARE(line->points().size(), qsizetype(logged.size()));
        for (qsizetype i = 0; i < line->points().size(); ++i) {
            QCOMPARE(line->points()[i].x(), logged[size_t(i)].x());
            QCOMPARE(line->points()[i].y(),
                     QString::number(logged[size_t(i)].y(), 'f', 6).toDouble());
        }
        QCOMPARE(dots->points().size(), qsizetype(3));
        QCOMPARE(dots->points()[1].x(), 200.0);
        QVERIFY2(view.note()->text().contains(QStringLiteral(
                     "loss as logged at 30 steps (checkpoint-300/trainer_state.json)")),
                 qPrintable(view.note()->text()));
        // The hover stops at every logged step: the spike between
        // checkpoints reads as logged, a checkpoint as its own value.
        const std::vector<double>& stops = view.hoverSteps();
        QCOMPARE(stops.size(), logged.size()); // every checkpoint step was logged too
        const auto stopAt = [&](double step) {
            return size_t(std::find(stops.begin(), stops.end(), step) - stops.begin());
        };
        QCOMPARE(view.hoverAt(stopAt(170)),
                 QStringLiteral("step 170 (no checkpoint)\nloss = 2.75 (logged)"));
        QVERIFY2(view.hoverAt(stopAt(200)).contains(QStringLiteral("loss = 2")),
                 qPrintable(view.hoverAt(stopAt(200))));
        QCOMPARE(view.hoverAt(stopAt(200)), view.hoverText(1));
        // The x axis takes in the history before the first checkpoint.
        auto* x = qobject_cast<QValueAxis*>(view.chart()->axes(Qt::Horizontal).value(0));
        QVERIFY(x && x->min() <= 10 && x->max() >= 300);
        // eval_bleu: logged at step 150 only, no checkpoint has it.
        view.setKey(QStringLiteral("eval_bleu"));
        line = qobject_cast<QXYSeries*>(view.chart()->series().value(0));
        dots = qobject_cast<QXYSeries*>(view.chart()->series().value(1));
        QCOMPARE(line->points(), (QList<QPointF>{{150, 31.5}}));
        QCOMPARE(dots->count(), 0);
        // Hovering a checkpoint names it, and no value it does not hold.
        QVERIFY2(view.hoverText(0).contains(QStringLiteral("step 100")) &&
                     !view.hoverText(0).contains(QLatin1Char('=')),
                 qPrintable(view.hoverText(0)));
        QCOMPARE(view.hoverSteps(), (std::vector<double>{100, 150, 200, 300}));
        QCOMPARE(view.hoverAt(1),
                 QStringLiteral("step 150 (no checkpoint)\neval_bleu = 31.5 (logged)"));
        QVERIFY(!view.hoverAt(0).contains(QLatin1Char('=')));
    }

    // Two checkpoints saved at one step (a final model beside the run's
    // trainer_state.json takes its global_step): the hover there names both,
    // with the Trainer's log drawn and without.
    void checkpointsAtOneStepBothHovered() {
        QTemporaryDir tmp;
        writeTrainerRun(tmp.path());
        QFile::copy(tmp.path() + QStringLiteral("/checkpoint-300/trainer_state.json"),
                    tmp.path() + QStringLiteral("/trainer_state.json"));
        Checkpoint final;
        final.setMetadata("eval_bleu", "33.25");
        final.addTensor({"w", {1}, {1.0f}});
        final.save(str(tmp.path()) + "/model.oxck");
        RunOptions opt;
        opt.useCache = false;
        auto run = std::make_shared<const Run>(readRun({str(tmp.path())}, opt));
        QCOMPARE(run->checkpoints.size(), size_t(4));
        QCOMPARE(run->checkpoints[2].step, std::optional<uint64_t>(300));
        QCOMPARE(run->checkpoints[3].step, std::optional<uint64_t>(300));
        MetadataChartView view;
        view.resize(800, 500);
        view.setRun(run);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        // The log drawn (loss): both checkpoints at 300.
        QCOMPARE(view.keyChooser()->currentText(), QStringLiteral("loss"));
        QString shown = hoverOver(view, 300, 1.5);
        QVERIFY2(shown.contains(QStringLiteral("checkpoint-300")) &&
                     shown.contains(QStringLiteral("model.oxck")),
                 qPrintable(shown));
        QCOMPARE(shown, view.hoverAt(view.hoverSteps().size() - 2) + QStringLiteral("\n\n") +
                            view.hoverAt(view.hoverSteps().size() - 1));
        // Neither has a loss of its own: the value logged at 300 said once.
        // Neither with a loss of its own (the Trainer saved none with them),
        // the value logged at 300 is said once, after both.
        Run unlogged = *run;
        for (RunCheckpoint& c : unlogged.checkpoints)
            std::erase_if(c.trainerLog, [](const auto& kv) { return kv.first == "loss"; });
        view.setRun(std::make_shared<const Run>(unlogged));
        shown = hoverOver(view, 300, 1.5);
        QVERIFY2(shown.contains(QStringLiteral("checkpoint-300")) &&
                     shown.contains(QStringLiteral("model.oxck")),
                 qPrintable(shown));
        QCOMPARE(shown.count(QStringLiteral("(logged)")), 1);
        QVERIFY2(shown.endsWith(QStringLiteral("\nloss = 1.5 (logged)")), qPrintable(shown));
        view.setRun(run);
        // A step with one checkpoint names it alone.
        shown = hoverOver(view, 200, 2.0);
        QVERIFY2(shown.contains(QStringLiteral("checkpoint-200")) &&
                     !shown.contains(QStringLiteral("model.oxck")),
                 qPrintable(shown));
        // No log of the key (eval_bleu is logged at 150 only, but the final
        // model has its own): the checkpoints' values, both at 300.
        Run bare = *run;
        bare.trainerHistory.clear();
        view.setRun(std::make_shared<const Run>(bare));
        view.setKey(QStringLiteral("eval_bleu"));
        shown = hoverOver(view, 300, 33.25);
        QVERIFY2(shown.contains(QStringLiteral("model.oxck")) &&
                     shown.contains(QStringLiteral("eval_bleu = 33.25")) &&
                     shown.contains(QStringLiteral("checkpoint-300")),
                 qPrintable(shown));
    }

    // A final model beside the checkpoint folders has no step: the log is
    // still drawn on its axis of steps, that model left out and said so;
    // with no "loss", the first key is chosen, not none.
    void historyWithAStepLessCheckpoint() {
        QTemporaryDir tmp;
        const std::vector<QPointF> logged = writeTrainerRun(tmp.path());
        Checkpoint final;
        final.setMetadata("eval_bleu", "n/a"); // text, but the key is charted from the log
        final.addTensor({"w", {1}, {1.0f}});
        final.save(str(tmp.path()) + "/final.oxck");
        RunOptions opt;
        opt.useCache = false;
        auto run = std::make_shared<const Run>(readRun({str(tmp.path())}, opt));
        QCOMPARE(run->checkpoints.size(), size_t(4));
        QVERIFY(!run->checkpoints.back().step);
        MetadataChartView view;
        view.setRun(run);
        QCOMPARE(view.keyChooser()->currentText(), QStringLiteral("loss"));
        auto* line = qobject_cast<QXYSeries*>(view.chart()->series().value(0));
        auto* dots = qobject_cast<QXYSeries*>(view.chart()->series().value(1));
        QCOMPARE(line->count(), int(logged.size()));
        QCOMPARE(dots->count(), 3);
        QVERIFY2(view.note()->text().contains(
                     QStringLiteral("Not on this axis of steps: 1 checkpoint without a step.")),
                 qPrintable(view.note()->text()));
        QVERIFY2(!view.note()->text().contains(QStringLiteral("Not charted")),
                 qPrintable(view.note()->text()));
        auto* x = qobject_cast<QValueAxis*>(view.chart()->axes(Qt::Horizontal).value(0));
        QCOMPARE(x->titleText(), QStringLiteral("step"));
        QVERIFY(x->max() >= 300 && x->max() < 400);
        QCOMPARE(view.hoverSteps().size(), logged.size());
        // Only the history has keys (no checkpoint carries a log of its own).
        Run bare = *run;
        for (RunCheckpoint& c : bare.checkpoints)
            c.trainerLog.clear();
        bare.trainerHistory.erase("loss");
        view.setRun(std::make_shared<const Run>(bare));
        QCOMPARE(view.keyChooser()->currentIndex(), 0);
        QCOMPARE(view.keyChooser()->currentText(), QStringLiteral("eval_bleu"));
    }
};

QTEST_MAIN(TestMetadataChartView)
#include "tst_metadatachartview.moc"
