// The comparison of two gradient checkpoints: fields, nodes matched by id
// (added, removed, each kind of change) or by structure when the ids were
// renewed, edges as multisets (repeated edges, cycles) and optimizer blobs.
#include "ckptscope/diff/gradientdiff.h"

#include <QTest>

#include <cmath>
#include <cstring>

using namespace ckptscope;

namespace {

ComputationNode node(const std::string& id, const std::string& op, std::vector<std::string> inputs,
                     std::optional<std::string> output,
                     std::optional<std::string> gradient = std::nullopt) {
    ComputationNode n(id, op, std::move(inputs));
    n.outputCid = std::move(output);
    n.gradientCid = std::move(gradient);
    return n;
}

std::vector<uint8_t> floatBytes(const std::vector<float>& v) {
    std::vector<uint8_t> out(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
    return out;
}

// x -> mm -> relu -> loss, with a cycle c1 <-> c2 hanging off relu.
GradientCheckpoint baseGraph(const std::string& prefix) {
    GradientCheckpoint g;
    g.step = 10;
    g.timestamp = 1000;
    g.lossCid = "cid-loss";
    auto id = [&](const char* s) { return prefix + s; };
    g.graph.insertNode(node(id("x"), "input", {}, "cid-x"));
    g.graph.insertNode(node(id("w"), "param", {}, "cid-w"));
    g.graph.insertNode(node(id("mm"), "matmul", {"cid-x", "cid-w"}, "cid-mm", "g-mm"));
    g.graph.insertNode(node(id("relu"), "relu", {"cid-mm"}, "cid-relu"));
    g.graph.insertNode(node(id("loss"), "mse", {"cid-relu"}, "cid-loss"));
    g.graph.insertNode(node(id("c1"), "add", {"cid-relu", "cid-c2"}, "cid-c1"));
    g.graph.insertNode(node(id("c2"), "add", {"cid-c1"}, "cid-c2"));
    for (auto [p, c] : {std::pair{"x", "mm"},
                        {"w", "mm"},
                        {"mm", "relu"},
                        {"relu", "loss"},
                        {"relu", "c1"},
                        {"c1", "c2"},
                        {"c2", "c1"}})
        g.graph.addEdge(id(p), id(c));
    g.setOptimizerState("m.same", floatBytes({1.0f, 2.0f}));
    g.setOptimizerState("m.changed", floatBytes({1.0f, 2.0f, 3.0f}));
    g.setOptimizerState("m.gone", {1, 2, 3});
    g.setOptimizerState("m.length", {1, 2, 3, 4});
    g.setOptimizerState("m.odd", {1, 2, 3});
    g.setOptimizerState("m.zero", floatBytes({0.0f}));
    return g;
}

} // namespace

class TestGradientDiff : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void identicalCheckpointsDoNotDiffer() {
        const GradientCheckpoint a = baseGraph("");
        const GradientDiff d = diffGradients(a, a, DiffOptions{});
        QVERIFY(!d.differs());
        QVERIFY(!d.structureMatching);
        QCOMPARE(d.summary.nodesSame, uint64_t(7));
        QVERIFY(d.nodes.empty() && d.edgesAdded.empty() && d.edgesRemoved.empty());
        QCOMPARE(d.fields.size(), size_t(3));
        for (const FieldDiff& f : d.fields)
            QCOMPARE(f.status, DiffStatus::Same);
        QCOMPARE(d.optimizerState.size(), size_t(6));
    }
    void fields() {
        const GradientCheckpoint a = baseGraph("");
        GradientCheckpoint b = a;
        b.step = 11;
        b.lossCid.reset();
        const GradientDiff d = diffGradients(a, b, DiffOptions{});
        QVERIFY(d.differs());
        QCOMPARE(d.fields[0].field, std::string("step"));
        QCOMPARE(d.fields[0].status, DiffStatus::Changed);
        QCOMPARE(std::get<uint64_t>(d.fields[0].b), uint64_t(11));
        QCOMPARE(d.fields[1].field, std::string("loss_cid"));
        QCOMPARE(d.fields[1].status, DiffStatus::Changed);
        QCOMPARE(std::get<std::string>(d.fields[1].a), std::string("cid-loss"));
        QVERIFY(std::holds_alternative<std::monostate>(d.fields[1].b));
        QCOMPARE(d.fields[2].field, std::string("timestamp"));
        QCOMPARE(d.fields[2].status, DiffStatus::Same);
    }
    void nodesByIdAddedRemovedChanged() {
        const GradientCheckpoint a = baseGraph("");
        GradientCheckpoint b = a;
        ComputationGraphStore g;
        for (const auto& [id, n] : a.graph.nodes()) {
            ComputationNode m = n;
            if (id == "relu")
                m.op = "gelu";
            if (id == "mm") {
                m.inputCids = {"cid-w", "cid-x"};
                m.gradientCid.reset();
                m.metadata["shape"] = "[2,2]";
            }
            if (id == "loss")
                m.outputCid = "cid-loss2";
            if (id != "w")
                g.insertNode(m);
        }
        g.insertNode(node("bias", "param", {}, "cid-b"));
        for (const Edge& e : a.graph.edges())
            g.addEdge(e.first, e.second);
        b.graph = g;
        const GradientDiff d = diffGradients(a, b, DiffOptions{});
        QVERIFY(!d.structureMatching);
        // Sorted by id; unchanged nodes only counted.
        std::vector<std::string> ids;
        for (const NodeDiff& n : d.nodes)
            ids.push_back(n.id);
        QCOMPARE(ids, (std::vector<std::string>{"bias", "loss", "mm", "relu", "w"}));
        QCOMPARE(d.nodes[0].status, DiffStatus::Added);
        QVERIFY(!d.nodes[0].opA);
        QCOMPARE(*d.nodes[0].opB, std::string("param"));
        QVERIFY(d.nodes[0].changed.empty());
        QCOMPARE(d.nodes[1].changed, std::vector<std::string>{"output_cid"});
        QCOMPARE(d.nodes[2].changed,
                 (std::vector<std::string>{"input_cids", "gradient_cid", "metadata"}));
        QCOMPARE(d.nodes[3].changed, std::vector<std::string>{"op"});
        QCOMPARE(*d.nodes[3].opA, std::string("relu"));
        QCOMPARE(*d.nodes[3].opB, std::string("gelu"));
        QCOMPARE(d.nodes[4].status, DiffStatus::Removed);
        QVERIFY(d.nodes[4].changed.empty());
        QCOMPARE(d.summary.nodesSame, uint64_t(3)); // x, c1, c2
        QCOMPARE(d.summary.nodesChanged, uint64_t(3));
        QCOMPARE(d.summary.nodesAdded, uint64_t(1));
        QCOMPARE(d.summary.nodesRemoved, uint64_t(1));
        QVERIFY(d.edgesAdded.empty() && d.edgesRemoved.empty()); // edges kept as stored
    }
    void edgesAsMultisets() {
        const GradientCheckpoint a = baseGraph("");
        GradientCheckpoint b = a;
        ComputationGraphStore g;
        for (const auto& [id, n] : a.graph.nodes())
            g.insertNode(n);
        // Copy the edges, dropping c2 -> c1, doubling x -> mm and adding loss -> x.
        for (const Edge& e : a.graph.edges()) {
            if (e == Edge("c2", "c1"))
                continue;
            g.addEdge(e.first, e.second);
            if (e == Edge("x", "mm"))
                g.addEdge(e.first, e.second);
        }
        g.addEdge("loss", "x");
        g.addEdge("loss", "x");
        b.graph = g;
        GradientDiff d = diffGradients(a, b, DiffOptions{});
        QCOMPARE(d.edgesAdded, (std::vector<Edge>{{"loss", "x"}, {"loss", "x"}, {"x", "mm"}}));
        QCOMPARE(d.edgesRemoved, (std::vector<Edge>{{"c2", "c1"}}));
        QCOMPARE(d.summary.edgesAdded, uint64_t(3));
        QCOMPARE(d.summary.edgesRemoved, uint64_t(1));
        QVERIFY(d.differs());
        // And back: the copies are removed.
        d = diffGradients(b, a, DiffOptions{});
        QCOMPARE(d.edgesRemoved, (std::vector<Edge>{{"loss", "x"}, {"loss", "x"}, {"x", "mm"}}));
        QCOMPARE(d.edgesAdded, (std::vector<Edge>{{"c2", "c1"}}));
    }
    void structureMatchingWhenIdsAreRenewed() {
        const GradientCheckpoint a = baseGraph("");
        GradientCheckpoint b = baseGraph("fresh-");
        // One real change: relu's gradient arrives; one node more.
        ComputationNode relu = *b.graph.getNode("fresh-relu");
        relu.gradientCid = "g-relu";
        b.graph.insertNode(relu);
        b.graph.insertNode(node("fresh-extra", "dropout", {"cid-relu"}, "cid-d"));
        b.graph.addEdge("fresh-relu", "fresh-extra");
        const GradientDiff d = diffGradients(a, b, DiffOptions{});
        QVERIFY(d.structureMatching);
        QCOMPARE(d.summary.nodesSame, uint64_t(6));
        QCOMPARE(d.summary.nodesChanged, uint64_t(1));
        QCOMPARE(d.summary.nodesAdded, uint64_t(1));
        QCOMPARE(d.summary.nodesRemoved, uint64_t(0));
        QCOMPARE(d.nodes.size(), size_t(2));
        QCOMPARE(d.nodes[0].id, std::string("fresh-extra"));
        QCOMPARE(d.nodes[0].status, DiffStatus::Added);
        QCOMPARE(d.nodes[1].id, std::string("relu")); // A's id
        QCOMPARE(*d.nodes[1].idB, std::string("fresh-relu"));
        QCOMPARE(d.nodes[1].changed, std::vector<std::string>{"gradient_cid"});
        // Edges compare through the matching: only the new one differs,
        // the cycle c1 <-> c2 included.
        QCOMPARE(d.edgesAdded, (std::vector<Edge>{{"relu", "fresh-extra"}}));
        QVERIFY(d.edgesRemoved.empty());
    }
    void structureMatchingPairsSameOpsByPosition() {
        // Two adds in a chain: the first with the first, whatever the ids.
        GradientCheckpoint a, b;
        a.graph.insertNode(node("z", "add", {}, "c1"));
        a.graph.insertNode(node("a", "add", {"c1"}, "c2"));
        a.graph.addEdge("z", "a");
        b.graph.insertNode(node("k1", "add", {}, "c1"));
        b.graph.insertNode(node("k0", "add", {"c1"}, "c2-changed"));
        b.graph.addEdge("k1", "k0");
        const GradientDiff d = diffGradients(a, b, DiffOptions{});
        QVERIFY(d.structureMatching);
        QCOMPARE(d.nodes.size(), size_t(1));
        QCOMPARE(d.nodes[0].id, std::string("a"));
        QCOMPARE(*d.nodes[0].idB, std::string("k0"));
        QCOMPARE(d.nodes[0].changed, std::vector<std::string>{"output_cid"});
        QVERIFY(d.edgesAdded.empty() && d.edgesRemoved.empty());
        // Exactly half the ids found is still "id".
        GradientCheckpoint c = a;
        c.graph.insertNode(node("new", "add", {}, "c9"));
        c.graph.insertNode(node("new2", "add", {}, "c8"));
        QVERIFY(!diffGradients(a, c, DiffOptions{}).structureMatching);
        c.graph.insertNode(node("new3", "add", {}, "c7"));
        QVERIFY(diffGradients(a, c, DiffOptions{}).structureMatching);
    }
    void optimizerState() {
        const GradientCheckpoint a = baseGraph("");
        GradientCheckpoint b = a;
        b.optimizerState.erase("m.gone");
        b.setOptimizerState("m.changed", floatBytes({1.0f, 2.5f, std::nanf("")}));
        b.setOptimizerState("m.length", {1, 2, 3});
        b.setOptimizerState("m.odd", {1, 9, 3});
        b.setOptimizerState("m.zero", floatBytes({-0.0f}));
        b.setOptimizerState("m.new", {7});
        DiffOptions o;
        o.bins = 4;
        GradientDiff d = diffGradients(a, b, o);
        std::vector<std::pair<std::string, DiffStatus>> want = {
            {"m.changed", DiffStatus::Changed}, {"m.gone", DiffStatus::Removed},
            {"m.length", DiffStatus::Changed},  {"m.new", DiffStatus::Added},
            {"m.odd", DiffStatus::Changed},     {"m.same", DiffStatus::Same},
            {"m.zero", DiffStatus::Same}};
        QCOMPARE(d.optimizerState.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) {
            QCOMPARE(d.optimizerState[i].name, want[i].first);
            QCOMPARE(diffStatusName(d.optimizerState[i].status), diffStatusName(want[i].second));
        }
        const BlobDiff& changed = d.optimizerState[0];
        QCOMPARE(*changed.bytesA, uint64_t(12));
        const auto ba = a.optimizerState.at("m.changed"), bb = b.optimizerState.at("m.changed");
        uint64_t differingBytes = 0;
        for (size_t i = 0; i < ba.size(); ++i)
            differingBytes += ba[i] != bb[i];
        QCOMPARE(*changed.differingBytes, differingBytes);
        QCOMPARE(changed.f32->differing, uint64_t(2));
        QCOMPARE(changed.f32->nanMismatch, uint64_t(1));
        QCOMPARE(*changed.f32->maxAbsDiff, 0.5);
        QCOMPARE(*changed.f32->meanAbsDiff, 0.25);
        QCOMPARE(*changed.f32->relL2, 0.5 / std::sqrt(5.0));
        QCOMPARE(changed.f32->histogram.counts, (std::vector<uint64_t>{1, 0, 0, 1}));
        QVERIFY(!d.optimizerState[1].bytesB && !d.optimizerState[1].differingBytes &&
                !d.optimizerState[1].f32);
        QVERIFY(!d.optimizerState[2].differingBytes && !d.optimizerState[2].f32); // lengths differ
        QCOMPARE(*d.optimizerState[4].differingBytes, uint64_t(1)); // odd length: bytes only
        QVERIFY(!d.optimizerState[4].f32);
        QCOMPARE(*d.optimizerState[6].differingBytes, uint64_t(1)); // -0 vs +0: one byte,
        QCOMPARE(d.optimizerState[6].f32->differing, uint64_t(0));  // equal as f32
        QCOMPARE(d.summary.optimizerChanged, uint64_t(5));
        // Tolerances apply to the f32 comparison.
        o.atol = 0.5;
        QCOMPARE(diffGradients(a, b, o).optimizerState[0].f32->differing, uint64_t(1));
        // Limited to named blobs; a name in neither is refused.
        d = diffGradients(a, b, o, {"m.same"});
        QCOMPARE(d.optimizerState.size(), size_t(1));
        QVERIFY_THROWS_EXCEPTION(UnknownTensorError, diffGradients(a, b, o, {"nope"}));
    }
};

QTEST_GUILESS_MAIN(TestGradientDiff)
#include "tst_gradientdiff.moc"
