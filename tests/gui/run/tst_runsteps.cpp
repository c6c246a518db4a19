// RunSteps: the run's checkpoints on an axis of steps when each has a step
// (two may share one: a final model saved at the last checkpoint's step),
// else by their positions in step order.
#include "run/runsteps.h"

#include <QTest>

using namespace ckptscope;

namespace {

Run runOf(const std::vector<std::optional<uint64_t>>& steps) {
    Run run;
    for (size_t c = 0; c < steps.size(); ++c) {
        RunCheckpoint cp;
        cp.name = "c" + std::to_string(c);
        cp.step = steps[c];
        run.checkpoints.push_back(cp);
    }
    return run;
}

} // namespace

class TestRunSteps : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void stepsWhenEveryCheckpointHasOne() {
        const RunSteps s = RunSteps::of(runOf({100, 200, 450}));
        QVERIFY(s.bySteps);
        QCOMPARE(s.x, (std::vector<double>{100, 200, 450}));
        QCOMPARE(s.title, QStringLiteral("step"));
    }

    void twoCheckpointsMayShareAStep() {
        const Run run = runOf({100, 200, 200});
        const RunSteps s = RunSteps::of(run);
        QVERIFY(s.bySteps);
        QCOMPARE(s.x, (std::vector<double>{100, 200, 200}));
        QCOMPARE(s.describe(run, 2), QStringLiteral("step 200 (c2)"));
    }

    void positionsOtherwise() {
        const Run run = runOf({100, std::nullopt});
        RunSteps s = RunSteps::of(run);
        QVERIFY(!s.bySteps);
        QCOMPARE(s.x, (std::vector<double>{0, 1}));
        QCOMPARE(s.title, QStringLiteral("checkpoint (in step order)"));
        QCOMPARE(s.describe(run, 1), QStringLiteral("checkpoint 1, no step (c1)"));
        s = RunSteps::of(runOf({300, 200})); // out of order: not a step axis
        QVERIFY(!s.bySteps);
    }
};

QTEST_APPLESS_MAIN(TestRunSteps)
#include "tst_runsteps.moc"
