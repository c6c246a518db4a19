#include "graph/nodetablemodel.h"

#include "ckptscope/export/samplegenerator.h"

#include "ckptscope/layout/graphlayout.h"

#include <QAbstractItemModelTester>
#include <QTest>

using namespace ckptscope;

class TestNodeTableModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void topologicalOrderThenCycle() {
        auto ck = std::make_shared<GradientCheckpoint>();
        auto node = [](const char* id, const char* op, std::vector<std::string> in,
                       const char* out) {
            ComputationNode n(id, op, std::move(in));
            n.outputCid = out;
            return n;
        };
        ck->graph.addNode(node("b", "relu", {"cA"}, "cB"));
        ck->graph.addNode(node("a", "input", {}, "cA"));
        ck->graph.addNode(node("x", "loop_a", {"cY"}, "cX"));
        ck->graph.addNode(node("y", "loop_b", {"cX"}, "cY"));
        const auto input =
            layoutInputFromGraph(ck->graph, [](const ComputationNode&) { return 40.0; });
        auto index = std::make_shared<const GraphIndex>(input);
        NodeTableModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setGraph(ck, index);
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.index(0, NodeTableModel::Id).data().toString(), QStringLiteral("a"));
        QCOMPARE(model.index(1, NodeTableModel::Op).data().toString(), QStringLiteral("relu"));
        // Ids and ops elided by a narrow dock are whole in the tooltip.
        QCOMPARE(model.index(0, NodeTableModel::Id).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("a"));
        QCOMPARE(model.index(1, NodeTableModel::Op).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("relu"));
        QVERIFY(model.index(0, NodeTableModel::State).data(Qt::ToolTipRole).isNull());
        QCOMPARE(model.index(2, NodeTableModel::Position).data().toString(),
                 QStringLiteral("cycle"));
        QVERIFY(!model.index(3, NodeTableModel::Position).data(Qt::DecorationRole).isNull());
        QCOMPARE(model.index(0, NodeTableModel::State).data().toString(),
                 QStringLiteral("forward"));
        const int b = index->indexOf("b");
        QCOMPARE(model.rowOfNode(b), 1);
        QCOMPARE(model.index(1, 0).data(NodeTableModel::NodeIndexRole).toInt(), b);
        // An index made with its graph carries the order and the nodes
        // themselves: the same rows, and the longest text found per column.
        auto withGraph = std::make_shared<const GraphIndex>(input, &ck->graph);
        QCOMPARE(withGraph->node(b), ck->graph.getNode("b"));
        NodeTableModel direct;
        QAbstractItemModelTester directTester(
            &direct, QAbstractItemModelTester::FailureReportingMode::QtTest);
        direct.setGraph(ck, withGraph);
        QCOMPARE(direct.rowCount(), model.rowCount());
        for (int r = 0; r < model.rowCount(); ++r)
            for (int c = 0; c < NodeTableModel::ColumnCount; ++c)
                QCOMPARE(direct.index(r, c).data(), model.index(r, c).data());
        for (int c = 0; c < NodeTableModel::ColumnCount - 1; ++c) {
            int longest = -1;
            qsizetype chars = -1;
            for (int r = 0; r < model.rowCount(); ++r)
                if (const qsizetype n = model.index(r, c).data().toString().size(); n >= chars) {
                    chars = n;
                    longest = r;
                }
            QCOMPARE(direct.longestRow(c), longest);
        }
        model.setGraph(nullptr, nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    // The index computes the list order from its integer lists; it must be
    // the graph's own topological split, node for node, on a generated graph
    // with a self loop, repeated edges, an edge to an unknown node and a
    // cycle added.
    void indexOrderIsTheGraphsTopologicalSplit() {
        SyntheticGraphSpec spec;
        spec.nodeCount = 600;
        GradientCheckpoint ck = makeSyntheticGradient(spec);
        std::vector<std::string> ids;
        for (const auto& [id, node] : ck.graph.nodes())
            ids.push_back(id);
        ck.graph.addEdge(ids[5], ids[5]);    // self loop
        ck.graph.addEdge(ids[10], ids[300]); // an edge, then its repeat
        ck.graph.addEdge(ids[10], ids[300]);
        ck.graph.addEdge(ids[20], "no-such-node");
        ck.graph.addEdge(ids[400], ids[401]); // a cycle of two
        ck.graph.addEdge(ids[401], ids[400]);
        const auto input =
            layoutInputFromGraph(ck.graph, [](const ComputationNode&) { return 40.0; });
        const GraphIndex index(input, &ck.graph);
        size_t ordered = 0;
        const std::vector<int> expected = NodeTableModel::listOrder(ck.graph, index, &ordered);
        QVERIFY(ordered < expected.size()); // something is on a cycle
        QCOMPARE(index.orderedCount(), ordered);
        QCOMPARE(index.listOrder(), expected);
    }
};

QTEST_MAIN(TestNodeTableModel)
#include "tst_nodetablemodel.moc"
