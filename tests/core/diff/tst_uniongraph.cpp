// The union of two compared graphs: every node of B plus A's removed nodes,
// each with its status; edges of both with their copies (repeated edges,
// cycles); nodes matched by structure drawn as one node; and agreement with
// the GradientDiff it is built from.
#include "ckptscope/diff/uniongraph.h"

#include <QTest>

#include <set>
#include <stdexcept>

using namespace ckptscope;

namespace {

ComputationNode node(const std::string& id, const std::string& op, std::vector<std::string> inputs,
                     std::optional<std::string> output) {
    ComputationNode n(id, op, std::move(inputs));
    n.outputCid = std::move(output);
    return n;
}

// x -> mm -> relu -> loss, relu -> c1 <-> c2 (a cycle), every id prefixed.
GradientCheckpoint graph(const std::string& prefix) {
    GradientCheckpoint g;
    g.step = 3;
    g.lossCid = "cid-loss";
    auto id = [&](const char* s) { return prefix + s; };
    g.graph.insertNode(node(id("x"), "input", {}, "cid-x"));
    g.graph.insertNode(node(id("mm"), "matmul", {"cid-x"}, "cid-mm"));
    g.graph.insertNode(node(id("relu"), "relu", {"cid-mm"}, "cid-relu"));
    g.graph.insertNode(node(id("loss"), "mse", {"cid-relu"}, "cid-loss"));
    g.graph.insertNode(node(id("c1"), "add", {"cid-relu", "cid-c2"}, "cid-c1"));
    g.graph.insertNode(node(id("c2"), "mul", {"cid-c1"}, "cid-c2"));
    for (auto [p, c] : {std::pair{"x", "mm"},
                        {"mm", "relu"},
                        {"relu", "loss"},
                        {"relu", "c1"},
                        {"c1", "c2"},
                        {"c2", "c1"}})
        g.graph.addEdge(id(p), id(c));
    return g;
}

UnionGraph unite(const GradientCheckpoint& a, const GradientCheckpoint& b,
                 GradientDiff* out = nullptr) {
    const GradientDiff d = diffGradients(a, b, DiffOptions{});
    if (out)
        *out = d;
    return UnionGraph::build(a, b, d);
}

DiffStatus statusOf(const UnionGraph& u, const std::string& key) {
    const UnionNode* n = u.node(key);
    if (!n)
        throw std::runtime_error("no union node " + key);
    return n->status;
}

// What every union must satisfy, checked against the diff (computed apart).
void checkAgainstDiff(const GradientCheckpoint& a, const GradientCheckpoint& b) {
    GradientDiff d;
    const UnionGraph u = unite(a, b, &d);
    QCOMPARE(u.nodes().size(), b.graph.nodeCount() + d.summary.nodesRemoved);
    QCOMPARE(u.checkpoint().graph.nodeCount(), u.nodes().size());
    size_t notSame = 0;
    for (const UnionNode& n : u.nodes()) {
        notSame += n.status != DiffStatus::Same;
        QVERIFY(u.checkpoint().graph.getNode(n.key));
        QCOMPARE(bool(n.keyA), n.status != DiffStatus::Added);
        QCOMPARE(bool(n.keyB), n.status != DiffStatus::Removed);
        if (n.keyB) // B's content under B's key
            QCOMPARE(u.checkpoint().graph.getNode(n.key)->op, b.graph.getNode(*n.keyB)->op);
        else
            QCOMPARE(u.checkpoint().graph.getNode(n.key)->op, a.graph.getNode(*n.keyA)->op);
    }
    QCOMPARE(notSame, d.nodes.size());
    for (size_t i = 0; i < d.nodes.size(); ++i) {
        const UnionNode* n = u.nodeOfDiff(i);
        QVERIFY(n);
        QCOMPARE(n->status, d.nodes[i].status);
        QCOMPARE(n->diffIndex, std::optional<size_t>(i));
    }
    uint64_t added = 0, removed = 0;
    for (const UnionEdge& e : u.edges()) {
        added += e.copiesB > e.copiesA ? e.copiesB - e.copiesA : 0;
        removed += e.copiesA > e.copiesB ? e.copiesA - e.copiesB : 0;
        QCOMPARE(u.edge(e.producer, e.consumer), &e);
        const DiffStatus want = e.copiesA == 0           ? DiffStatus::Added
                                : e.copiesB == 0         ? DiffStatus::Removed
                                : e.copiesA != e.copiesB ? DiffStatus::Changed
                                                         : DiffStatus::Same;
        QCOMPARE(e.status, want);
    }
    QCOMPARE(added, uint64_t(d.edgesAdded.size()));
    QCOMPARE(removed, uint64_t(d.edgesRemoved.size()));
    // Each distinct pair drawn once.
    QCOMPARE(u.checkpoint().graph.edgeCount(), u.edges().size());
}

} // namespace

class TestUnionGraph : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void identicalGraphsAreAllSame() {
        const GradientCheckpoint a = graph("");
        const UnionGraph u = unite(a, a);
        QCOMPARE(u.nodes().size(), size_t(6));
        for (const UnionNode& n : u.nodes())
            QCOMPARE(n.status, DiffStatus::Same);
        QCOMPARE(u.edges().size(), size_t(6));
        for (const UnionEdge& e : u.edges()) {
            QCOMPARE(e.status, DiffStatus::Same);
            QCOMPARE(e.copiesA, uint64_t(1));
        }
        QCOMPARE(u.checkpoint().lossNode()->id, std::string("loss"));
        checkAgainstDiff(a, a);
    }

    void addedRemovedAndChangedNodes() {
        const GradientCheckpoint a = graph("");
        GradientCheckpoint b = a;
        b.step = 4;
        ComputationNode mm = *b.graph.getNode("mm");
        mm.metadata["shape"] = "[2,2]";
        b.graph.insertNode(mm);                                                  // changed
        b.graph.insertNode(node("extra", "dropout", {"cid-relu"}, "cid-extra")); // added
        b.graph.addEdge("relu", "extra");
        GradientCheckpoint shrunk; // "loss" removed with its edge
        shrunk.step = b.step;
        shrunk.lossCid = b.lossCid;
        for (const auto& [k, n] : b.graph.nodes())
            if (k != "loss")
                shrunk.graph.insertNode(n);
        for (const Edge& e : b.graph.edges())
            if (e.second != "loss")
                shrunk.graph.addEdge(e.first, e.second);
        const UnionGraph u = unite(a, shrunk);
        QCOMPARE(u.nodes().size(), size_t(7));
        QCOMPARE(statusOf(u, "mm"), DiffStatus::Changed);
        QCOMPARE(statusOf(u, "extra"), DiffStatus::Added);
        QCOMPARE(statusOf(u, "loss"), DiffStatus::Removed);
        QCOMPARE(statusOf(u, "x"), DiffStatus::Same);
        QCOMPARE(u.edge("relu", "extra")->status, DiffStatus::Added);
        QCOMPARE(u.edge("relu", "loss")->status, DiffStatus::Removed);
        QCOMPARE(u.edge("x", "mm")->status, DiffStatus::Same);
        // The removed node is drawn with A's content; the union is B's step.
        QCOMPARE(u.checkpoint().graph.getNode("loss")->op, std::string("mse"));
        QCOMPARE(u.checkpoint().step, uint64_t(4));
        checkAgainstDiff(a, shrunk);
    }

    void repeatedEdgesCountCopies() {
        GradientCheckpoint a = graph("");
        GradientCheckpoint b = a;
        a.graph.addEdge("mm", "relu"); // twice in A, once in B
        b.graph.addEdge("x", "mm");    // once in A, twice in B
        b.graph.addEdge("x", "mm");    // three times
        const UnionGraph u = unite(a, b);
        const UnionEdge* mr = u.edge("mm", "relu");
        QCOMPARE(mr->copiesA, uint64_t(2));
        QCOMPARE(mr->copiesB, uint64_t(1));
        QCOMPARE(mr->status, DiffStatus::Changed);
        QCOMPARE(u.edge("x", "mm")->copiesB, uint64_t(3));
        checkAgainstDiff(a, b);
    }

    void cyclesSurvive() {
        const GradientCheckpoint a = graph("");
        GradientCheckpoint b;
        b.step = a.step;
        b.lossCid = a.lossCid;
        for (const auto& [k, n] : a.graph.nodes())
            b.graph.insertNode(n);
        for (const Edge& e : a.graph.edges())
            if (e != Edge("c2", "c1")) // the cycle broken in B
                b.graph.addEdge(e.first, e.second);
        const UnionGraph u = unite(a, b);
        QCOMPARE(u.edge("c2", "c1")->status, DiffStatus::Removed);
        QCOMPARE(u.edge("c1", "c2")->status, DiffStatus::Same);
        // The union still holds the cycle (drawn, edges reversed by layout).
        const auto cycle = u.checkpoint().graph.cycleNodes();
        QCOMPARE(std::set<std::string>(cycle.begin(), cycle.end()),
                 (std::set<std::string>{"c1", "c2"}));
        checkAgainstDiff(a, b);
        checkAgainstDiff(b, a);
    }

    void structureMatchedNodesAreOneNode() {
        const GradientCheckpoint a = graph("a-");
        GradientCheckpoint b = graph("b-"); // fresh ids: matched by op and position
        ComputationNode relu = *b.graph.getNode("b-relu");
        relu.metadata["inplace"] = "true";
        b.graph.insertNode(relu);
        // A node of A's only (op "softmax") keyed as a node of B: renamed.
        GradientCheckpoint a2 = a;
        a2.graph.insertNode(node("b-x", "softmax", {"cid-loss"}, "cid-sm"));
        a2.graph.addEdge("a-loss", "b-x");
        GradientDiff d;
        const UnionGraph u = unite(a2, b, &d);
        QVERIFY(d.structureMatching);
        QCOMPARE(u.nodes().size(), size_t(7)); // 6 matched + 1 removed
        const UnionNode* mm = u.node("b-mm");
        QVERIFY(mm);
        QCOMPARE(mm->status, DiffStatus::Same);
        QCOMPARE(mm->keyA, std::optional<std::string>("a-mm"));
        QVERIFY(!u.node("a-mm")); // no second node for A's copy
        QCOMPARE(statusOf(u, "b-relu"), DiffStatus::Changed);
        QCOMPARE(u.node("b-relu")->keyA, std::optional<std::string>("a-relu"));
        const UnionNode* removed = u.node("b-x (A)");
        QVERIFY(removed);
        QCOMPARE(removed->status, DiffStatus::Removed);
        QCOMPARE(removed->keyA, std::optional<std::string>("b-x"));
        QCOMPARE(statusOf(u, "b-x"), DiffStatus::Same); // B's input node
        QCOMPARE(u.keyOfA("b-x"), std::optional<std::string>("b-x (A)"));
        QCOMPARE(u.keyOfA("a-x"), std::optional<std::string>("b-x"));
        // A's edges renamed onto B's nodes: nothing but the removed one differs.
        QCOMPARE(u.edge("b-x", "b-mm")->status, DiffStatus::Same);
        QCOMPARE(u.edge("b-loss", "b-x (A)")->status, DiffStatus::Removed);
        QCOMPARE(u.edges().size(), size_t(7));
        checkAgainstDiff(a2, b);
        checkAgainstDiff(b, a2);
    }

    void danglingEdgesAreLeftOut() {
        GradientCheckpoint a = graph("");
        a.graph.addEdge("x", "ghost");
        const UnionGraph u = unite(a, a);
        QVERIFY(!u.edge("x", "ghost"));
        QCOMPARE(u.edges().size(), size_t(6));
    }
};

QTEST_APPLESS_MAIN(TestUnionGraph)
#include "tst_uniongraph.moc"
