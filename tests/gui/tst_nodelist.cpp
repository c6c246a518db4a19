#include "graph/graphindex.h"
#include "graph/graphscene.h"
#include "graph/nodelist.h"
#include "graph/nodetablemodel.h"

#include "ckptscope/document/document.h"
#include "ckptscope/io/bytesource.h"

#include <QAbstractItemModelTester>
#include <QHeaderView>
#include <QSignalSpy>
#include <QTest>

#include <string>

using namespace ckptscope;

namespace {

// A chain of n nodes (n0 -> n1 -> ...): list positions run 1..n.
std::shared_ptr<const Document> chain(int n) {
    std::string json = R"({"graph":{"nodes":{)";
    for (int i = 0; i < n; ++i) {
        const std::string id = "n" + std::to_string(i);
        json += (i ? "," : "") + std::string("\"") + id + R"(":{"id":")" + id +
                R"(","op":"add","input_cids":[],"metadata":{}})";
    }
    json += R"(},"edges":[)";
    for (int i = 1; i < n; ++i)
        json += (i > 1 ? "," : "") + std::string("[\"n") + std::to_string(i - 1) + "\",\"n" +
                std::to_string(i) + "\"]";
    json += R"(]},"step":1,"loss_cid":null,"optimizer_state":{},"timestamp":0})";
    return Document::open(std::make_shared<MemorySource>(
        std::vector<uint8_t>(json.begin(), json.end()), "memory:chain.json"));
}

struct Graph {
    std::shared_ptr<const GradientCheckpoint> checkpoint;
    std::shared_ptr<const GraphIndex> index;
};

Graph indexed(const std::shared_ptr<const Document>& doc) {
    auto checkpoint = std::shared_ptr<const GradientCheckpoint>(doc, doc->gradient());
    return {checkpoint, std::make_shared<const GraphIndex>(
                            GraphScene::layoutInput(checkpoint->graph), &checkpoint->graph)};
}

} // namespace

class TestNodeList : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void positionColumnShowsTheLargestNumberWhole() {
        const auto doc = chain(12345);
        const Graph g = indexed(doc);
        NodeList list;
        QAbstractItemModelTester tester(list.model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        list.resize(500, 400);
        list.show();
        list.setGraph(g.checkpoint, g.index);
        QCOMPARE(list.model()->rowCount(), 12345);
        const QModelIndex last = list.model()->index(12344, NodeTableModel::Position);
        QCOMPARE(last.data().toString(), QStringLiteral("12345"));
        // The column is as wide as that cell needs: "12345", not "12...".
        QVERIFY2(list.columnWidth(NodeTableModel::Position) >= list.sizeHintForIndex(last).width(),
                 qPrintable(QStringLiteral("%1 < %2")
                                .arg(list.columnWidth(NodeTableModel::Position))
                                .arg(list.sizeHintForIndex(last).width())));
        // And every other column fits its widest text among the rows measured.
        for (int c = NodeTableModel::Op; c < NodeTableModel::ColumnCount - 1; ++c)
            QVERIFY(list.columnWidth(c) >= list.sizeHintForIndex(last.siblingAtColumn(c)).width());
    }

    void choosingARowReportsItsNodeButShowingOneDoesNot() {
        const auto doc = chain(20);
        const Graph g = indexed(doc);
        NodeList list;
        list.setGraph(g.checkpoint, g.index);
        QSignalSpy chosen(&list, &NodeList::nodeChosen);
        const int node7 = g.index->indexOf("n7");
        list.showNode(node7); // the graph selected it: no echo back
        QCOMPARE(list.currentIndex().data(NodeTableModel::NodeIndexRole).toInt(), node7);
        QCOMPARE(list.currentIndex().row(), 7); // chain order
        QCOMPARE(chosen.count(), 0);
        list.setCurrentIndex(list.model()->index(3, 0)); // the user's choice
        QCOMPARE(chosen.count(), 1);
        QCOMPARE(chosen.first().first().toInt(), g.index->indexOf("n3"));
        list.setGraph(nullptr, nullptr);
        QCOMPARE(list.model()->rowCount(), 0);
    }
};

QTEST_MAIN(TestNodeList)
#include "tst_nodelist.moc"
