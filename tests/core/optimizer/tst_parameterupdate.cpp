// The last update each parameter received, against Adam's formula computed
// here in double over optimizer state the tests wrote (optimizerfixture.h),
// and SGD's lr · momentum_buffer over the corpus's torch-written state.
#include "optimizerfixture.h"
#include "testsupport.h"

#include "ckptscope/formats/openerror.h"
#include "ckptscope/optimizer/parameterupdate.h"

#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cmath>

using namespace ckptscope;
using testsupport::AdamFixture;

namespace {

bool near(std::optional<double> got, double want, double rel = 1e-12) {
    return got && std::abs(*got - want) <= rel * std::abs(want);
}

std::string written(const QTemporaryDir& dir, const AdamFixture& f) {
    f.writeTo(dir.path().toStdString());
    return dir.path().toStdString();
}

} // namespace

class TestParameterUpdate : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Three parameters, one spanning several read blocks (40 000 elements):
    // every figure equals the formula.
    void adamFiguresEqualTheFormula() {
        AdamFixture f = AdamFixture::make({"a.weight", "b.weight", "c.weight"}, 1000);
        f.params[1] = AdamFixture::make({"b.weight"}, 40000, {}, 7).params[0];
        QTemporaryDir dir;
        const OptimizerCheckpoint state = openOptimizerCheckpoint(written(dir, f));
        QCOMPARE(state.parameters.size(), size_t(3));
        const std::vector<ParameterUpdate> u = computeParameterUpdates(state, {}, 2);
        QCOMPARE(u.size(), size_t(3));
        for (size_t k = 0; k < 3; ++k) {
            const AdamFixture::Expected e = f.expected(k);
            QCOMPARE(u[k].parameter, f.params[k].name);
            QCOMPARE(u[k].rule, UpdateRule::Adam);
            QCOMPARE(u[k].count, uint64_t(f.params[k].weight.size()));
            QVERIFY(near(u[k].step, 50));
            QVERIFY2(near(u[k].updateRms, e.updateRms), qPrintable(QString::number(k)));
            QVERIFY(near(u[k].updateMax, e.updateMax));
            QVERIFY(near(u[k].updateToWeight, e.updateToWeight));
            QVERIFY(near(u[k].expAvgRms, e.expAvgRms));
            QVERIFY(near(u[k].expAvgSqSqrtRms, e.sqrtVRms));
            QVERIFY(near(u[k].decayRms, e.decayRms));
            QVERIFY2(u[k].note.empty(), u[k].note.c_str());
        }
    }

    // amsgrad: max_exp_avg_sq (4 × exp_avg_sq here) takes exp_avg_sq's place.
    void amsgradUsesTheMaximum() {
        AdamFixture f = AdamFixture::make({"w"}, 512);
        f.amsgrad = true;
        QTemporaryDir dir;
        const OptimizerCheckpoint state = openOptimizerCheckpoint(written(dir, f));
        const ParameterUpdate u = computeParameterUpdates(state).at(0);
        QVERIFY(near(u.updateRms, f.expected(0).updateRms));
        f.amsgrad = false; // the plain figure differs: the test tells them apart
        QVERIFY(!near(u.updateRms, f.expected(0).updateRms, 1e-3));
    }

    // A model whose weight has another shape than the moments: the state
    // keeps its id (the reader says why), the update is still given, and
    // the figures that need the weight are absent with a note.
    void weightOfAnotherShapeIsNotPaired() {
        AdamFixture f = AdamFixture::make({"w"}, 64);
        QTemporaryDir dir;
        f.writeTo(dir.path().toStdString());
        AdamFixture g = AdamFixture::make({"w"}, 128);
        std::ofstream(dir.filePath(QStringLiteral("model.safetensors")).toStdString(),
                      std::ios::binary)
            << g.modelFile();
        const OptimizerCheckpoint state = openOptimizerCheckpoint(dir.path().toStdString());
        const ParameterUpdate u = computeParameterUpdates(state).at(0);
        QCOMPARE(u.parameter, std::string("state.0"));
        QVERIFY(!u.updateToWeight && !u.decayRms);
        QVERIFY(near(u.updateRms, f.expected(0).updateRms));
        QVERIFY2(u.note.find("no weight") != std::string::npos, u.note.c_str());
        QVERIFY(!state.optimizer->warnings().empty());
        QVERIFY2(state.optimizer->warnings()[0].message.find("could not be inferred") !=
                     std::string::npos,
                 state.optimizer->warnings()[0].message.c_str());
    }

    // SGD with momentum: lr · momentum_buffer, from state torch wrote.
    void sgdUpdateIsLrTimesMomentum() {
        REQUIRE_CONFORMANCE();
        const OptimizerCheckpoint state = openOptimizerCheckpoint(
            testsupport::corpus(QStringLiteral("pytorch/valid/sgd-momentum-optimizer.pt"))
                .toStdString());
        const std::vector<ParameterUpdate> u = computeParameterUpdates(state);
        QVERIFY(!u.empty());
        for (size_t k = 0; k < u.size(); ++k) {
            const ParameterState& p = state.parameters[k];
            QCOMPARE(u[k].rule, UpdateRule::Sgd);
            QVERIFY(p.momentumBuffer.has_value());
            const uint64_t n = state.optimizer->tensors()[*p.momentumBuffer].dataLen;
            std::vector<double> buf(n);
            state.optimizer->readValues(*p.momentumBuffer, 0, n, buf.data());
            double s2 = 0, mx = 0;
            for (double b : buf) {
                s2 += b * b;
                mx = std::max(mx, std::abs(b));
            }
            QVERIFY(near(u[k].updateRms, p.group.lr * std::sqrt(s2 / double(n))));
            QVERIFY(near(u[k].updateMax, p.group.lr * mx));
            QVERIFY(!u[k].expAvgRms);
        }
    }

    // Another optimizer's state (RAdam's groups carry betas but not
    // amsgrad): listed by key, no figure derived.
    void otherOptimizerStateIsListedWithoutFigures() {
        AdamFixture f = AdamFixture::make({"w"}, 64);
        f.adamKeys = false;
        QTemporaryDir dir;
        const ParameterUpdate u =
            computeParameterUpdates(openOptimizerCheckpoint(written(dir, f))).at(0);
        QCOMPARE(u.rule, UpdateRule::Other);
        QVERIFY(!u.updateRms && !u.updateToWeight && !u.expAvgRms);
        QVERIFY2(u.note.find("(step, exp_avg, exp_avg_sq)") != std::string::npos, u.note.c_str());
    }

    void cancelStops() {
        AdamFixture f = AdamFixture::make({"w"}, 64);
        QTemporaryDir dir;
        const OptimizerCheckpoint state = openOptimizerCheckpoint(written(dir, f));
        std::atomic<bool> cancel{true};
        QVERIFY_THROWS_EXCEPTION(Cancelled, computeParameterUpdates(state, &cancel));
    }
};

QTEST_GUILESS_MAIN(TestParameterUpdate)
#include "tst_parameterupdate.moc"
