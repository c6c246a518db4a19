#include "common/documentsummary.h"

#include "ckptscope/document/document.h"
#include "ckptscope/export/samplegenerator.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <QTemporaryDir>
#include <QTest>

using namespace ckptscope;

// The status-bar line: counts grouped as on the Overview, nouns that agree,
// no "(s)" left from an untranslated tr("%n …").
class TestDocumentSummary : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void countsAreGroupedAndNounsAgree() {
        QCOMPARE(countNoun(0, QStringLiteral("node"), QStringLiteral("nodes")),
                 QStringLiteral("0 nodes"));
        QCOMPARE(countNoun(1, QStringLiteral("node"), QStringLiteral("nodes")),
                 QStringLiteral("1 node"));
        QCOMPARE(countNoun(10000, QStringLiteral("node"), QStringLiteral("nodes")),
                 QStringLiteral("10,000 nodes"));
    }

    void gradientLineGroupsStepAndNodes() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("g.json")).toStdString();
        SyntheticGraphSpec spec;
        spec.nodeCount = 10000;
        spec.step = 1200;
        makeSyntheticGradient(spec).save(path);
        const auto doc = Document::open(path);
        QCOMPARE(documentSummary(*doc, QStringLiteral("g.json")),
                 QStringLiteral("g.json: gradient checkpoint, step 1,200, 10,000 nodes"));
    }

    void oxckLineSaysTensorOrTensors() {
        QTemporaryDir dir;
        const std::string one = dir.filePath(QStringLiteral("one.oxck")).toStdString();
        Checkpoint c;
        c.addTensor({"a", {2}, {1, 2}});
        c.save(one);
        QCOMPARE(documentSummary(*Document::open(one), QStringLiteral("one.oxck")),
                 QStringLiteral("one.oxck: OXCK checkpoint, 1 tensor"));
        const std::string many = dir.filePath(QStringLiteral("many.oxck")).toStdString();
        SyntheticModelSpec spec;
        spec.tensorCount = 1500;
        spec.totalBytes = 1 << 16;
        writeSyntheticModel(many, spec);
        QCOMPARE(documentSummary(*Document::open(many), QStringLiteral("many.oxck")),
                 QStringLiteral("many.oxck: OXCK checkpoint, 1,500 tensors"));
    }
};

QTEST_MAIN(TestDocumentSummary)
#include "tst_documentsummary.moc"
