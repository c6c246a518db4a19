#include "graphindex.h"
#include "graphnodeitem.h"
#include "graphpage.h"
#include "graphscene.h"
#include "graphview.h"
#include "nodeinspector.h"

#include "ckptscope/document.h"

#include <QFile>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <set>

using namespace ckptscope;

namespace {

std::shared_ptr<const Document> sample() {
    return Document::open(std::string(CKPTSCOPE_SOURCE_DIR) +
                          "/resources/samples/gradient_sample.json");
}

// Ancestors straight from the stored edges, independent of the GUI's index.
std::set<std::string> ancestorsOf(const ComputationGraphStore& g, const std::string& id) {
    std::set<std::string> seen;
    std::vector<std::string> stack{id};
    while (!stack.empty()) {
        const std::string n = stack.back();
        stack.pop_back();
        for (const auto& [from, to] : g.edges())
            if (to == n && g.getNode(from) && seen.insert(from).second)
                stack.push_back(from);
    }
    return seen;
}

bool waitLayout(GraphPage& page) {
    QSignalSpy done(&page, &GraphPage::layoutFinished);
    return page.layout() || QTest::qWaitFor([&] { return !done.isEmpty(); }, 20000);
}

} // namespace

class TestGraphPage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void layoutAppearsAndInspectorShowsTheNode() {
        GraphPage page;
        page.resize(1200, 800);
        page.show();
        auto doc = sample();
        page.setDocument(doc);
        QVERIFY(waitLayout(page));
        const auto& graph = doc->gradient()->graph;
        QCOMPARE(size_t(page.scene()->nodeCount()), graph.nodeCount());
        const ComputationNode* loss = doc->gradient()->lossNode();
        QVERIFY(loss);
        const ComputationNode* producer = graph.findProducer(loss->inputCids.at(0));
        QVERIFY(producer);
        page.selectNode(page.index()->indexOf(loss->id));
        const QString text = page.inspector()->text();
        QVERIFY(text.contains(QString::fromStdString(loss->id)));
        QVERIFY(text.contains(QString::fromStdString(loss->op)));
        QVERIFY(text.contains(QString::fromStdString(*loss->outputCid)));
        QVERIFY(
            text.contains(QString::fromStdString(producer->id))); // input linked to its producer
        QVERIFY(text.contains(QStringLiteral("this node computes the loss")));
        QCOMPARE(page.selectedNode(), page.index()->indexOf(loss->id));
    }

    void highlightingBeforeTheDrawingExistsIsHarmless() {
        GraphPage page;
        page.setDocument(sample()); // the node list is there, the layout is not yet
        page.highlightProvenance(page.index()->size() - 1);
        page.highlightConsumers(0);
        QVERIFY(waitLayout(page));
        QCOMPARE(page.scene()->nodeCount(), page.index()->size());
    }

    void provenanceMarksExactlyTheAncestors() {
        GraphPage page;
        auto doc = sample();
        page.setDocument(doc);
        QVERIFY(waitLayout(page));
        const auto& graph = doc->gradient()->graph;
        const ComputationNode* loss = doc->gradient()->lossNode();
        const int focus = page.index()->indexOf(loss->id);
        page.highlightProvenance(focus);
        const std::set<std::string> expected = ancestorsOf(graph, loss->id);
        QVERIFY(expected.size() > 10);
        std::set<std::string> marked;
        for (int i = 0; i < page.scene()->nodeCount(); ++i) {
            const auto mark = page.scene()->nodeItem(i)->mark();
            if (mark == GraphNodeItem::Mark::Highlighted)
                marked.insert(page.index()->id(i));
            else if (i != focus)
                QCOMPARE(int(mark), int(GraphNodeItem::Mark::Dimmed));
        }
        QCOMPARE(marked, expected);
        page.highlightConsumers(focus); // the loss consumes nothing further
        QVERIFY(page.scene()->highlighted().empty());
    }

    void searchFindsAndCentres() {
        GraphPage page;
        page.resize(1200, 800);
        page.show();
        auto doc = sample();
        page.setDocument(doc);
        QVERIFY(waitLayout(page));
        size_t gelus = 0;
        for (const auto& [id, n] : doc->gradient()->graph.nodes())
            gelus += n.op == "gelu";
        QCOMPARE(size_t(page.search(QStringLiteral("GELU"))), gelus);
        const int first = page.selectedNode();
        QCOMPARE(
            QString::fromStdString(doc->gradient()->graph.getNode(page.index()->id(first))->op),
            QStringLiteral("gelu"));
        // Centred as far as the scene's edges allow: in view, near the middle.
        const QRectF visible =
            page.view()->mapToScene(page.view()->viewport()->rect()).boundingRect();
        const QRectF item = page.scene()->nodeItem(first)->sceneBoundingRect();
        QVERIFY2(visible.contains(item), "the match is in view");
        QVERIFY2(std::abs(item.center().y() - visible.center().y()) < visible.height() / 4,
                 "the match is near the middle");
        page.findNext(1);
        QVERIFY(page.selectedNode() != first);
        // An id prefix finds exactly that node.
        const std::string id = page.index()->id(3);
        QCOMPARE(page.search(QString::fromStdString(id.substr(0, 13))), 1);
        QCOMPARE(page.selectedNode(), 3);
    }

    void goToLossSelectsTheLossNode() {
        GraphPage page;
        auto doc = sample();
        page.setDocument(doc);
        QVERIFY(waitLayout(page));
        page.goToLoss();
        QCOMPARE(page.index()->id(page.selectedNode()), doc->gradient()->lossNode()->id);
    }

    void exportsSvgAndPng() {
        GraphPage page;
        page.setDocument(sample());
        QVERIFY(waitLayout(page));
        QTemporaryDir dir;
        const QString svg = dir.filePath(QStringLiteral("g.svg"));
        QCOMPARE(page.exportTo(svg), QString());
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY(text.startsWith("<?xml"));
        QVERIFY(text.contains("<svg"));
        QVERIFY(text.contains("</svg>"));
        QVERIFY(text.contains("cross_entropy")); // labels are in the drawing
        const QString png = dir.filePath(QStringLiteral("g.png"));
        QCOMPARE(page.exportTo(png), QString());
        const QImage image(png);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() > 100 && image.height() > 100);
        QVERIFY(!page.exportTo(dir.filePath(QStringLiteral("g.bmpx"))).isEmpty());
    }
};

QTEST_MAIN(TestGraphPage)
#include "tst_graphpage.moc"
