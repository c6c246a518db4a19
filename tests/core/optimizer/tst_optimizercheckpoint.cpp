// A model paired with its optimizer state: a Trainer folder, an
// optimizer.pt with its model beside it, a Lightning checkpoint holding both,
// and the refusals of files and folders without optimizer state.
#include "optimizerfixture.h"
#include "testsupport.h"

#include "ckptscope/formats/openerror.h"
#include "ckptscope/optimizer/optimizercheckpoint.h"

#include <QTemporaryDir>
#include <QTest>

using namespace ckptscope;

namespace {

std::string pt(const char* relative) {
    return testsupport::corpus(QStringLiteral("pytorch/") + QString::fromUtf8(relative))
        .toStdString();
}

} // namespace

class TestOptimizerCheckpoint : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // torch's Trainer folder: the folder and its optimizer.pt pair the same
    // parameters with pytorch_model.bin's tensors, with the group's lr.
    void trainerFolderPairsByName() {
        REQUIRE_CONFORMANCE();
        for (const std::string& path :
             {pt("valid/checkpoint-50"), pt("valid/checkpoint-50/optimizer.pt")}) {
            const OptimizerCheckpoint s = openOptimizerCheckpoint(path);
            QVERIFY(s.model && s.model != s.optimizer);
            QVERIFY(s.model->path().ends_with("pytorch_model.bin"));
            QCOMPARE(s.parameters.size(), size_t(21));
            QVERIFY2(s.warnings.empty(), s.warnings.empty() ? "" : s.warnings[0].c_str());
            for (const ParameterState& p : s.parameters) {
                QCOMPARE(p.rule, UpdateRule::Adam);
                QVERIFY(p.weight.has_value());
                QCOMPARE(s.model->tensors()[*p.weight].name, p.parameter);
                QCOMPARE(p.step.value_or(0), 50.0);
                QVERIFY(p.group.lr > 0);
            }
            QCOMPARE(s.parameters[0].parameter, std::string("model.embed_tokens.weight"));
        }
    }

    // Lightning: the weights under state_dict. in the same file.
    void lightningPairsWithinTheFile() {
        REQUIRE_CONFORMANCE();
        const OptimizerCheckpoint s =
            openOptimizerCheckpoint(pt("valid/lightning/epoch=2-step=150.ckpt"));
        QVERIFY(s.model == s.optimizer);
        QCOMPARE(s.parameters.size(), size_t(6));
        QCOMPARE(s.model->tensors()[s.parameters[0].weight.value()].name,
                 std::string("state_dict.encoder.weight"));
    }

    // An optimizer.pt alone: its state by id, no weights, a warning.
    void optimizerWithoutItsModel() {
        REQUIRE_CONFORMANCE();
        const OptimizerCheckpoint s = openOptimizerCheckpoint(pt("valid/adamw-optimizer.pt"));
        QVERIFY(!s.model);
        QVERIFY(!s.parameters.empty() && !s.parameters[0].weight);
        QCOMPARE(s.parameters[0].parameter, std::string("state.0"));
        QVERIFY(!s.warnings.empty() && s.warnings[0].find("no model") != std::string::npos);
    }

    // The tests' own folder: the group's hyperparameters as written.
    void groupHyperparametersAreRead() {
        testsupport::AdamFixture f = testsupport::AdamFixture::make({"x.weight", "y.bias"}, 16);
        f.lr = 1.25e-3;
        f.beta1 = 0.8;
        f.beta2 = 0.95;
        f.eps = 1e-6;
        f.weightDecay = 0.1;
        f.step = 7;
        QTemporaryDir dir;
        f.writeTo(dir.path().toStdString());
        const OptimizerCheckpoint s = openOptimizerCheckpoint(dir.path().toStdString());
        QCOMPARE(s.parameters.size(), size_t(2));
        const OptimizerGroup& g = s.parameters[1].group;
        QCOMPARE(g.lr, 1.25e-3);
        QCOMPARE(g.beta1, 0.8);
        QCOMPARE(g.beta2, 0.95);
        QCOMPARE(g.eps, 1e-6);
        QCOMPARE(g.weightDecay, 0.1);
        QVERIFY(!g.amsgrad && !g.decoupledDecay);
        QCOMPARE(s.parameters[1].step.value_or(0), 7.0);
        QCOMPARE(s.parameters[1].parameter, std::string("y.bias"));
    }

    // No optimizer state: an error naming the file or folder.
    void refusals() {
        REQUIRE_CONFORMANCE();
        try {
            openOptimizerCheckpoint(pt("valid/bare-tensor.pt"));
            QFAIL("a file without optimizer state was accepted");
        } catch (const OpenError& e) {
            QVERIFY2(std::string(e.what()).find("bare-tensor.pt: holds no optimizer state") !=
                         std::string::npos,
                     e.what());
        }
        QTemporaryDir dir;
        try {
            openOptimizerCheckpoint(dir.path().toStdString());
            QFAIL("a folder without optimizer.pt was accepted");
        } catch (const OpenError& e) {
            QCOMPARE(e.file(), dir.path().toStdString());
            QVERIFY2(std::string(e.what()).find("without optimizer.pt") != std::string::npos,
                     e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestOptimizerCheckpoint)
#include "tst_optimizercheckpoint.moc"
