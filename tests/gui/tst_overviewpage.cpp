#include "browser/overviewpage.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <QTemporaryDir>
#include <QTest>

using namespace ckptscope;

namespace {

std::shared_ptr<const Document> fromJson(const std::string& json) {
    return Document::open(std::make_shared<MemorySource>(
        std::vector<uint8_t>(json.begin(), json.end()), "odd<&>.json"));
}

} // namespace

class TestOverviewPage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Op names, ids, CIDs and metadata read exactly as in the file: escaped
    // once, and never taken for a placeholder ("%2") of the page's text.
    void fileTextShownExactly() {
        const std::string op = "<b>mat%2mul</b>&amp;", cid = "cid<1>&\"";
        ComputationGraphStore g;
        ComputationNode n("id<&>", op, {});
        n.outputCid = cid;
        g.insertNode(std::move(n));
        GradientCheckpoint ck(std::move(g), 7);
        ck = std::move(ck).withLossCid(cid);
        OverviewPage page;
        page.setDocument(fromJson(ck.toJson()));
        const QString text = page.toPlainText();
        QVERIFY2(text.contains(QString::fromStdString(op) + QStringLiteral(" × 1")),
                 qPrintable(text));
        QVERIFY(text.contains(QString::fromStdString(cid)));
        QVERIFY(text.contains(QStringLiteral("id<&> (") + QString::fromStdString(op) +
                              QLatin1Char(')')));
        QVERIFY(text.contains(QStringLiteral("odd<&>.json")));
    }

    void metadataShownExactly() {
        QTemporaryDir dir;
        Checkpoint c;
        c.setMetadata("step", "<i>12</i> &lt; %1");
        c.addTensor({"t", {1}, {1}});
        const QString path = dir.filePath(QStringLiteral("m.oxck"));
        c.save(path.toStdString());
        OverviewPage page;
        page.setDocument(Document::open(path.toStdString()));
        QVERIFY2(page.toPlainText().contains(QStringLiteral("<i>12</i> &lt; %1")),
                 qPrintable(page.toPlainText()));
    }
};

QTEST_MAIN(TestOverviewPage)
#include "tst_overviewpage.moc"
