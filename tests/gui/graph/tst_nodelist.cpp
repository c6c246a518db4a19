#include "graph/graphindex.h"
#include "graph/graphpage.h"
#include "graph/graphscene.h"
#include "graph/nodelist.h"
#include "graph/nodetablemodel.h"

#include "ckptscope/document/document.h"
#include "ckptscope/io/bytesource.h"

#include <QAbstractItemModelTester>
#include <QHeaderView>
#include <QSignalSpy>
#include <QTest>
#include <QThreadPool>

#include <string>

using namespace ckptscope;

namespace {

// A chain of n nodes (n0 -> n1 -> ...): list positions run 1..n. With a
// loop, the last node also feeds the third from last: the last three are on
// a cycle.
std::shared_ptr<const Document> chain(int n, bool loop = false) {
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
    if (loop)
        json += ",[\"n" + std::to_string(n - 1) + "\",\"n" + std::to_string(n - 3) + "\"]";
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

// The ids the list shows, row by row.
std::vector<std::string> shownIds(const NodeList& list) {
    std::vector<std::string> ids;
    for (int r = 0; r < list.model()->rowCount(); ++r)
        ids.push_back(list.model()->index(r, NodeTableModel::Id).data().toString().toStdString());
    return ids;
}

// A node list fed by a graph page, as the main window does.
struct PageAndList {
    GraphPage page;
    NodeList list;
    PageAndList() { QObject::connect(&page, &GraphPage::graphChanged, &list, &NodeList::setGraph); }
};

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

    // The index is made off the GUI thread: until it arrives the list is
    // empty and says so; then it lists the core's topological order, the
    // nodes on the cycle last.
    void indexArrivesFromTheBackgroundInTheCoresOrder() {
        const auto doc = chain(3000, true);
        PageAndList w;
        QAbstractItemModelTester tester(w.list.model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy indexed(&w.page, &GraphPage::indexed);
        w.page.setDocument(doc);
        QVERIFY(w.page.isIndexing());
        QVERIFY(!w.page.index());
        QCOMPARE(w.list.model()->rowCount(), 0);
        QVERIFY2(w.list.placeholderText().startsWith(QStringLiteral("Indexing")),
                 qPrintable(w.list.placeholderText()));
        QVERIFY(indexed.wait(20000));
        QVERIFY(!w.page.isIndexing());
        QVERIFY(w.list.placeholderText().isEmpty());
        const auto& graph = doc->gradient()->graph;
        QCOMPARE(size_t(w.page.index()->size()), graph.nodeCount());
        const auto split = graph.topologicalSplit();
        QCOMPARE(split.cycle.size(), size_t(3));
        std::vector<std::string> expected = split.order;
        expected.insert(expected.end(), split.cycle.begin(), split.cycle.end());
        QCOMPARE(shownIds(w.list), expected);
        QCOMPARE(w.list.model()->index(2999, NodeTableModel::Position).data().toString(),
                 QStringLiteral("cycle"));
        // Ready: a selection made now is followed at once.
        bool ran = false;
        w.page.whenIndexed(&w.list, [&] { ran = true; });
        QVERIFY(ran);
    }

    // A graph set while the one before is still being indexed: the old
    // index, when its worker ends, is dropped; the list only ever shows
    // nothing or the new graph's nodes.
    void anotherGraphWhileIndexingNeverShowsTheOldNodes() {
        const auto old = chain(20000);
        const auto now = chain(50, true);
        PageAndList w;
        std::vector<int> rowsShown;
        QObject::connect(w.list.model(), &QAbstractItemModel::modelReset, &w.list,
                         [&] { rowsShown.push_back(w.list.model()->rowCount()); });
        bool ranForNow = false;
        w.page.setDocument(old);
        QVERIFY(w.page.isIndexing());
        // Waiting for the old index runs for the graph that replaces it.
        w.page.whenIndexed(&w.list, [&] { ranForNow = w.page.index()->size() == 50; });
        w.page.setDocument(now);
        QVERIFY(w.page.isIndexing());
        QVERIFY(QTest::qWaitFor([&] { return !w.page.isIndexing(); }, 20000));
        // Every worker done, and whatever they posted delivered.
        QThreadPool::globalInstance()->waitForDone();
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
        QVERIFY(ranForNow);
        QCOMPARE(w.page.index()->size(), 50);
        for (int rows : rowsShown)
            QVERIFY2(rows == 0 || rows == 50, qPrintable(QString::number(rows)));
        const auto split = now->gradient()->graph.topologicalSplit();
        std::vector<std::string> expected = split.order;
        expected.insert(expected.end(), split.cycle.begin(), split.cycle.end());
        QCOMPARE(shownIds(w.list), expected);
        // No graph: nothing to wait for, nothing listed.
        w.page.setDocument(nullptr);
        QVERIFY(!w.page.isIndexing());
        QCOMPARE(w.list.model()->rowCount(), 0);
        QVERIFY(w.list.placeholderText().isEmpty());
    }
};

QTEST_MAIN(TestNodeList)
#include "tst_nodelist.moc"
