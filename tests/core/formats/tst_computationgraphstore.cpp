#include "ckptscope/formats/gradient/computationgraphstore.h"
#include "ckptscope/formats/gradient/gradienterror.h"

#include "testsupport.h"

#include <QElapsedTimer>
#include <QRegularExpression>
#include <QStringList>
#include <QTest>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>

using namespace ckptscope;
using testsupport::qstr;
using testsupport::qstrList;

namespace {

QStringList idsOf(const std::vector<const ComputationNode*>& nodes) {
    QStringList out;
    for (const ComputationNode* n : nodes)
        out << qstr(n->id);
    return out;
}

QStringList edgesOf(const ComputationGraphStore& g) {
    QStringList out;
    for (const auto& [p, c] : g.edges())
        out << qstr(p + ">" + c);
    return out;
}

ComputationNode makeNode(const std::string& id, std::vector<std::string> inputs,
                         std::optional<std::string> output, const std::string& op = "op") {
    ComputationNode n(id, op, std::move(inputs));
    n.outputCid = std::move(output);
    return n;
}

// A graph of bare nodes (no CIDs) with the given edges as stored.
ComputationGraphStore graphOf(const std::vector<std::string>& ids, const std::vector<Edge>& edges) {
    ComputationGraphStore g;
    for (const std::string& id : ids)
        g.insertNode(ComputationNode(id, "op", {}));
    for (const auto& [p, c] : edges)
        g.addEdge(p, c);
    return g;
}

// The graph in ordinary maps, edges naming unknown nodes left out: the
// oracles below start from it.
struct MapGraph {
    std::map<std::string, size_t> inDegree;
    std::map<std::string, std::vector<std::string>> successors;
};

MapGraph mapGraph(const ComputationGraphStore& g) {
    MapGraph m;
    for (const auto& [id, node] : g.nodes())
        m.inDegree[id] = 0;
    for (const auto& [from, to] : g.edges()) {
        if (!g.nodes().contains(from) || !g.nodes().contains(to))
            continue;
        ++m.inDegree[to];
        m.successors[from].push_back(to);
    }
    return m;
}

// The reference topological_order, transcribed with ordinary maps and
// without edges naming unknown nodes; the oracle for random graphs.
std::vector<std::string> referenceOrder(const ComputationGraphStore& g) {
    auto [inDegree, successors] = mapGraph(g);
    std::deque<std::string> queue;
    for (const auto& [id, deg] : inDegree)
        if (deg == 0)
            queue.push_back(id); // map order = sorted
    std::vector<std::string> order;
    while (!queue.empty()) {
        const std::string id = queue.front();
        queue.pop_front();
        order.push_back(id);
        std::vector<std::string> next;
        for (const std::string& s : successors[id])
            if (--inDegree[s] == 0)
                next.push_back(s);
        std::sort(next.begin(), next.end());
        queue.insert(queue.end(), next.begin(), next.end());
    }
    return order;
}

// Up to 300 nodes, mostly forward edges (in a random ranking), a few back
// ones (cycles), repeats, and edges to nodes that do not exist.
ComputationGraphStore randomGraph(std::mt19937& rng) {
    const int n = 1 + int(rng() % 300);
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i)
        ids.push_back("n" + std::to_string(rng() % 100000));
    std::vector<Edge> edges;
    const int m = int(rng() % (3 * n));
    for (int i = 0; i < m; ++i) {
        const std::string& a = ids[rng() % ids.size()];
        const std::string& b = ids[rng() % ids.size()];
        if (rng() % 10 == 0)
            edges.emplace_back(b, a);
        else if (rng() % 25 == 0)
            edges.emplace_back(a, "ghost" + std::to_string(rng() % 3));
        else
            edges.emplace_back(std::min(a, b), std::max(a, b));
    }
    return graphOf(ids, edges);
}

// Depths as the graph diff first computed them, by maps of ids: the
// longest path from a node without a known producer, nodes on or behind a
// cycle one past the deepest of the rest.
std::map<std::string, size_t> referenceDepths(const ComputationGraphStore& g) {
    auto [inDegree, successors] = mapGraph(g);
    std::map<std::string, size_t> depth;
    std::deque<std::string> ready;
    for (const auto& [id, n] : inDegree)
        if (n == 0) {
            ready.push_back(id);
            depth[id] = 0;
        }
    size_t deepest = 0;
    while (!ready.empty()) {
        const std::string id = ready.front();
        ready.pop_front();
        const size_t d = depth[id];
        deepest = std::max(deepest, d);
        for (const std::string& s : successors[id]) {
            depth[s] = std::max(depth[s], d + 1);
            if (--inDegree[s] == 0)
                ready.push_back(s);
        }
    }
    for (const auto& [id, n] : inDegree)
        if (n > 0)
            depth[id] = deepest + 1;
    return depth;
}

} // namespace

class TestComputationGraphStore : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void nodeConstructionAndMeta() {
        const ComputationNode n("n1", "matmul", {"a", "b"});
        QCOMPARE(qstr(n.id), QStringLiteral("n1"));
        QCOMPARE(qstr(n.op), QStringLiteral("matmul"));
        QCOMPARE(qstrList(n.inputCids), (QStringList{QStringLiteral("a"), QStringLiteral("b")}));
        QVERIFY(!n.outputCid && !n.gradientCid && n.metadata.empty());

        const ComputationNode m = n.withMeta("shape", "[32,64]").withMeta("dtype", "f32");
        QVERIFY(n.metadata.empty()); // the const& overload copies
        QCOMPARE(m.metadata.size(), size_t(2));
        QCOMPARE(qstr(m.metadata.at("shape")), QStringLiteral("[32,64]"));
        const ComputationNode replaced = ComputationNode(m).withMeta("dtype", "bf16");
        QCOMPARE(qstr(replaced.metadata.at("dtype")), QStringLiteral("bf16"));
        QVERIFY(m != n);
        QVERIFY(n.withMeta("k", "v") ==
                ComputationNode("n1", "matmul", {"a", "b"}).withMeta("k", "v"));
    }

    void addNodeDerivesProducerEdges() {
        ComputationGraphStore g;
        g.addNode(makeNode("A", {}, "a"));
        g.addNode(makeNode("B", {"a"}, "b"));
        g.addNode(makeNode("C", {"a", "b", "x"}, "c"));
        QCOMPARE(edgesOf(g), (QStringList{QStringLiteral("A>B"), QStringLiteral("A>C"),
                                          QStringLiteral("B>C")}));
        QCOMPARE(g.nodeCount(), size_t(3));
        QCOMPARE(g.edgeCount(), size_t(3));
    }

    void addNodeDerivesConsumerEdges() {
        ComputationGraphStore g;
        g.addNode(makeNode("C2", {"x"}, std::nullopt));
        g.addNode(makeNode("C1", {"y", "x"}, std::nullopt));
        g.addNode(makeNode("P", {}, "x")); // consumers come first here
        QCOMPARE(edgesOf(g), (QStringList{QStringLiteral("P>C1"), QStringLiteral("P>C2")}));
        // Re-adding the producer does not repeat consumer edges…
        g.addNode(makeNode("P", {}, "x"));
        QCOMPARE(g.edgeCount(), size_t(2));
        // …but re-adding a consumer repeats its producer edge, as the reference.
        g.addNode(makeNode("C1", {"y", "x"}, std::nullopt));
        QCOMPARE(edgesOf(g), (QStringList{QStringLiteral("P>C1"), QStringLiteral("P>C2"),
                                          QStringLiteral("P>C1")}));
        QCOMPARE(g.nodeCount(), size_t(3));
    }

    void addNodeNeverLinksItself() {
        ComputationGraphStore g;
        g.addNode(makeNode("loop", {"x"}, "x"));
        g.addNode(makeNode("loop", {"x"}, "x")); // replaced, still no self edge
        QCOMPARE(g.edgeCount(), size_t(0));
        QCOMPARE(g.nodeCount(), size_t(1));
    }

    void insertNodeDerivesNothing() {
        ComputationGraphStore g;
        g.insertNode(makeNode("A", {}, "a"));
        g.insertNode(makeNode("B", {"a"}, "b"));
        QCOMPARE(g.edgeCount(), size_t(0));
        g.insertNode(makeNode("B", {}, "z"));
        QCOMPARE(qstr(*g.getNode("B")->outputCid), QStringLiteral("z"));
    }

    void recordOutputAndGradient() {
        ComputationGraphStore g;
        g.addNode(makeNode("A", {}, std::nullopt));
        g.addNode(makeNode("B", {"a"}, std::nullopt));
        g.addNode(makeNode("C", {"a"}, std::nullopt));
        QCOMPARE(g.edgeCount(), size_t(0));
        QVERIFY(!g.recordOutput("missing", "a"));
        QVERIFY(g.recordOutput("A", "a"));
        QCOMPARE(qstr(*g.getNode("A")->outputCid), QStringLiteral("a"));
        QCOMPARE(edgesOf(g), (QStringList{QStringLiteral("A>B"), QStringLiteral("A>C")}));
        QVERIFY(g.recordOutput("A", "a")); // no repeated edges
        QCOMPARE(g.edgeCount(), size_t(2));
        QVERIFY(g.recordOutput("B", "a")); // B consumes "a" but never links to itself
        QCOMPARE(edgesOf(g), (QStringList{QStringLiteral("A>B"), QStringLiteral("A>C"),
                                          QStringLiteral("B>C")}));

        QVERIFY(!g.getNode("A")->gradientCid);
        QVERIFY(g.recordGradient("A", "ga"));
        QCOMPARE(qstr(*g.getNode("A")->gradientCid), QStringLiteral("ga"));
        QVERIFY(!g.recordGradient("missing", "g"));
        QCOMPARE(g.edgeCount(), size_t(3));
    }

    void addEdgeStoresAsGiven() {
        ComputationGraphStore g = graphOf({"a"}, {{"a", "ghost"}, {"a", "ghost"}});
        QCOMPARE(g.edgeCount(), size_t(2));
        QCOMPARE(edgesOf(g), (QStringList{QStringLiteral("a>ghost"), QStringLiteral("a>ghost")}));
    }

    void getNodeAndCounts() {
        const ComputationGraphStore g = graphOf({"a", "b"}, {{"a", "b"}});
        QVERIFY(g.getNode("a") != nullptr);
        QCOMPARE(qstr(g.getNode("b")->id), QStringLiteral("b"));
        QVERIFY(g.getNode("c") == nullptr);
        QCOMPARE(g.nodeCount(), size_t(2));
        QCOMPARE(g.edgeCount(), size_t(1));
        QVERIFY(ComputationGraphStore().nodes().empty());
    }

    void topologicalOrder_data() {
        QTest::addColumn<QStringList>("ids");
        QTest::addColumn<QStringList>("edges"); // "p>c"
        QTest::addColumn<QStringList>("order");
        QTest::addColumn<QStringList>("cycle");
        const auto l = [](const char* s) {
            return QString::fromLatin1(s).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        };
        QTest::newRow("empty") << QStringList() << QStringList() << QStringList() << QStringList();
        QTest::newRow("isolated sorted")
            << l("c a b") << QStringList() << l("a b c") << QStringList();
        QTest::newRow("chain") << l("x y z") << l("z>y y>x") << l("z y x") << QStringList();
        // FIFO of sorted batches, not a global priority queue: z before c.
        QTest::newRow("fifo batches")
            << l("a b c z") << l("a>z b>c") << l("a b z c") << QStringList();
        // One batch is sorted, whatever the edge order.
        QTest::newRow("batch sorted") << l("a m z") << l("a>z a>m") << l("a m z") << QStringList();
        QTest::newRow("duplicate edges")
            << l("a b c") << l("a>c a>c b>c") << l("a b c") << QStringList();
        QTest::newRow("cycle and downstream")
            << l("a b c d") << l("a>b b>a b>c") << l("d") << l("a b c");
        QTest::newRow("self loop") << l("a b") << l("a>a a>b") << QStringList() << l("a b");
        QTest::newRow("unknown ids ignored")
            << l("a b") << l("ghost>b a>ghost b>nowhere") << l("a b") << QStringList();
        QTest::newRow("diamond") << l("s l r j") << l("s>r s>l l>j r>j") << l("s l r j")
                                 << QStringList();
    }
    void topologicalOrder() {
        QFETCH(QStringList, ids);
        QFETCH(QStringList, edges);
        QFETCH(QStringList, order);
        QFETCH(QStringList, cycle);
        std::vector<std::string> nodeIds;
        for (const QString& id : ids)
            nodeIds.push_back(id.toStdString());
        std::vector<Edge> edgeList;
        for (const QString& e : edges) {
            const QStringList pc = e.split(QLatin1Char('>'));
            edgeList.emplace_back(pc[0].toStdString(), pc[1].toStdString());
        }
        const ComputationGraphStore g = graphOf(nodeIds, edgeList);
        QCOMPARE(qstrList(g.topologicalOrder()), order);
        QCOMPARE(qstrList(g.cycleNodes()), cycle);
        QCOMPARE(qstrList(g.topologicalOrder()), qstrList(referenceOrder(g)));
    }

    // Random graphs with cycles, repeats and unknown ids against the
    // transcribed reference algorithm.
    void topologicalOrderMatchesReferenceOnRandomGraphs() {
        std::mt19937 rng(20241129);
        for (int round = 0; round < 40; ++round) {
            const ComputationGraphStore g = randomGraph(rng);
            const std::vector<std::string> order = g.topologicalOrder();
            QCOMPARE(qstrList(order), qstrList(referenceOrder(g)));
            QCOMPARE(order.size() + g.cycleNodes().size(), g.nodeCount());
        }
    }

    // depths() against the map-based reference: forward edges, back edges
    // (cycles), repeated edges and edges to unknown nodes.
    void depthsMatchTheReferenceOnRandomGraphs() {
        std::mt19937 rng(20261206);
        size_t deepSeen = 0;
        for (int round = 0; round < 60; ++round) {
            const ComputationGraphStore g = randomGraph(rng);
            const std::map<std::string, size_t> want = referenceDepths(g);
            const std::vector<size_t> got = g.depths();
            QCOMPARE(got.size(), g.nodeCount());
            size_t k = 0;
            for (const auto& [id, node] : g.nodes()) {
                QCOMPARE(got[k], want.at(id));
                deepSeen = std::max(deepSeen, got[k]);
                ++k;
            }
        }
        QVERIFY(deepSeen >= 3); // chains, not only sources
    }

    void topologicalOrderScalesTo100kNodes() {
        const int n = 100000;
        std::mt19937 rng(7);
        ComputationGraphStore g;
        std::vector<std::string> ids;
        for (int i = 0; i < n; ++i) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%08x-%06d", unsigned(rng()), i);
            ids.push_back(buf);
            g.insertNode(ComputationNode(ids.back(), "op", {}));
        }
        // Edges from a lower to a higher position: a DAG, with fan-in.
        for (int i = 1; i < n; ++i) {
            g.addEdge(ids[size_t(rng() % unsigned(i))], ids[size_t(i)]);
            g.addEdge(ids[size_t(i - 1)], ids[size_t(i)]);
        }
        QElapsedTimer timer;
        timer.start();
        const std::vector<std::string> order = g.topologicalOrder();
        const qint64 ms = timer.elapsed();
        QCOMPARE(order.size(), size_t(n));
        std::map<std::string, size_t> position;
        for (size_t i = 0; i < order.size(); ++i)
            position[order[i]] = i;
        QCOMPARE(position.size(), size_t(n));
        for (const auto& [p, c] : g.edges())
            QVERIFY(position.at(p) < position.at(c));
        QVERIFY2(ms < 10000, qPrintable(QStringLiteral("took %1 ms").arg(ms)));
        QVERIFY(g.cycleNodes().empty());
    }

    void findConsumersSortedById() {
        ComputationGraphStore g;
        g.insertNode(makeNode("z", {"a"}, std::nullopt));
        g.insertNode(makeNode("b", {"q", "a"}, std::nullopt));
        g.insertNode(makeNode("m", {"q"}, "a"));
        QCOMPARE(idsOf(g.findConsumers("a")),
                 (QStringList{QStringLiteral("b"), QStringLiteral("z")}));
        QCOMPARE(idsOf(g.findConsumers("q")),
                 (QStringList{QStringLiteral("b"), QStringLiteral("m")}));
        QVERIFY(g.findConsumers("none").empty());
    }

    void findProducerTakesSmallestId() {
        ComputationGraphStore g;
        g.insertNode(makeNode("z", {}, "x"));
        g.insertNode(makeNode("c", {}, "x"));
        g.insertNode(makeNode("a", {}, std::nullopt));
        QCOMPARE(qstr(g.findProducer("x")->id), QStringLiteral("c"));
        QVERIFY(g.findProducer("y") == nullptr);
    }

    void provenanceChain() {
        ComputationGraphStore g;
        g.addNode(makeNode("in", {"data"}, "a"));
        g.addNode(makeNode("mm", {"a", "w"}, "b"));
        g.addNode(makeNode("w", {}, "w"));
        g.addNode(makeNode("relu", {"b"}, "c"));
        g.addNode(makeNode("other", {"a"}, "d"));
        QCOMPARE(idsOf(g.provenanceChain("c")),
                 (QStringList{QStringLiteral("in"), QStringLiteral("w"), QStringLiteral("mm"),
                              QStringLiteral("relu")}));
        QCOMPARE(idsOf(g.provenanceChain("b")),
                 (QStringList{QStringLiteral("in"), QStringLiteral("w"), QStringLiteral("mm")}));
        QCOMPARE(idsOf(g.provenanceChain("a")), QStringList{QStringLiteral("in")});
        QVERIFY(g.provenanceChain("data").empty()); // nobody produced it
        QVERIFY(g.provenanceChain("nope").empty());
    }

    // R uses a (from A) and b (from B); A also uses b. B must come before A:
    // a node follows the producers of its inputs, each node once.
    void provenanceChainIsPostOrderOverSharedInputs() {
        ComputationGraphStore g;
        g.addNode(makeNode("B", {}, "b"));
        g.addNode(makeNode("A", {"b"}, "a"));
        g.addNode(makeNode("R", {"a", "b"}, "r"));
        QCOMPARE(idsOf(g.provenanceChain("r")),
                 (QStringList{QStringLiteral("B"), QStringLiteral("A"), QStringLiteral("R")}));
    }

    void provenanceChainSurvivesCycles() {
        ComputationGraphStore g;
        g.insertNode(makeNode("p", {"y"}, "x"));
        g.insertNode(makeNode("q", {"x"}, "y"));
        QCOMPARE(idsOf(g.provenanceChain("x")),
                 (QStringList{QStringLiteral("q"), QStringLiteral("p")}));
        QCOMPARE(idsOf(g.provenanceChain("y")),
                 (QStringList{QStringLiteral("p"), QStringLiteral("q")}));
    }

    void provenanceChainOfDeepChainDoesNotRecurse() {
        const int n = 100000;
        ComputationGraphStore g;
        for (int i = 0; i < n; ++i)
            g.insertNode(makeNode("n" + std::to_string(i),
                                  i == 0 ? std::vector<std::string>{}
                                         : std::vector<std::string>{"c" + std::to_string(i - 1)},
                                  "c" + std::to_string(i)));
        const auto chain = g.provenanceChain("c" + std::to_string(n - 1));
        QCOMPARE(chain.size(), size_t(n));
        QCOMPARE(qstr(chain.front()->id), QStringLiteral("n0"));
        QCOMPARE(qstr(chain.back()->id), QStringLiteral("n%1").arg(n - 1));
    }

    void validateReportsUnknownAndRepeatedEdges() {
        QVERIFY(graphOf({"a", "b"}, {{"a", "b"}}).validate().empty());
        const ComputationGraphStore g =
            graphOf({"a", "b"}, {{"a", "b"}, {"a", "ghost"}, {"a", "b"}, {"x", "y"}});
        QCOMPARE(qstrList(g.validate()),
                 (QStringList{
                     QStringLiteral("edge 1 [a → ghost]: consumer ghost is not a node"),
                     QStringLiteral("edge 2 [a → b]: repeats edge 0"),
                     QStringLiteral("edge 3 [x → y]: producer x is not a node"),
                     QStringLiteral("edge 3 [x → y]: consumer y is not a node"),
                 }));
    }

    void validateEscapesAndShortensIds() {
        const std::string longId(200, 'x');
        const ComputationGraphStore g =
            graphOf({"a"}, {{"a", "new\nline"}, {"a", longId}, {"", "a"}});
        const QStringList messages = qstrList(g.validate());
        QCOMPARE(messages.size(), 3);
        QCOMPARE(messages[0],
                 QStringLiteral("edge 0 [a → new\\nline]: consumer new\\nline is not a node"));
        QVERIFY(messages[1].contains(QStringLiteral("x…]")));
        QVERIFY(messages[1].size() < 220);
        QCOMPARE(messages[2], QStringLiteral("edge 2 [\"\" → a]: producer \"\" is not a node"));
    }

    // A node stored under a key other than its id: the key is its identity.
    void nodeKeyDifferentFromId() {
        const std::string text = R"({"nodes": {"key1": {"id": "other", "op": "relu",
            "input_cids": [], "metadata": {}}, "b": {"id": "b", "op": "x", "input_cids": []}},
            "edges": [["key1", "b"]]})";
        const ComputationGraphStore g = ComputationGraphStore::fromJson(text, "g.json");
        QVERIFY(g.getNode("key1") != nullptr);
        QCOMPARE(qstr(g.getNode("key1")->id), QStringLiteral("other"));
        QVERIFY(g.getNode("other") == nullptr);
        QCOMPARE(qstrList(g.topologicalOrder()),
                 (QStringList{QStringLiteral("key1"), QStringLiteral("b")}));
        QCOMPARE(qstrList(g.validate()),
                 QStringList{QStringLiteral(
                     "node \"key1\" has \"id\" \"other\"; the key is used as the node's id")});
        // Written back under its key, with its id unchanged.
        QVERIFY(ComputationGraphStore::fromJson(g.toJson(), "again") == g);
        QVERIFY(g.toJson().find("\"key1\": {\n      \"id\": \"other\"") != std::string::npos);
    }

    void checkpointLayout() {
        ComputationGraphStore g;
        g.addNode(makeNode("a", {}, "x").withMeta("k", "v"));
        g.addNode(makeNode("b", {"x"}, std::nullopt));
        const std::string expected = "{\n"
                                     "  \"nodes\": {\n"
                                     "    \"a\": {\n"
                                     "      \"id\": \"a\",\n"
                                     "      \"op\": \"op\",\n"
                                     "      \"input_cids\": [],\n"
                                     "      \"output_cid\": \"x\",\n"
                                     "      \"gradient_cid\": null,\n"
                                     "      \"metadata\": {\n"
                                     "        \"k\": \"v\"\n"
                                     "      }\n"
                                     "    },\n"
                                     "    \"b\": {\n"
                                     "      \"id\": \"b\",\n"
                                     "      \"op\": \"op\",\n"
                                     "      \"input_cids\": [\n"
                                     "        \"x\"\n"
                                     "      ],\n"
                                     "      \"output_cid\": null,\n"
                                     "      \"gradient_cid\": null,\n"
                                     "      \"metadata\": {}\n"
                                     "    }\n"
                                     "  },\n"
                                     "  \"edges\": [\n"
                                     "    [\n"
                                     "      \"a\",\n"
                                     "      \"b\"\n"
                                     "    ]\n"
                                     "  ]\n"
                                     "}";
        QCOMPARE(qstr(g.toJson()), qstr(expected));
        QCOMPARE(qstr(ComputationGraphStore().toJson()),
                 QStringLiteral("{\n  \"nodes\": {},\n  \"edges\": []\n}"));
    }

    void checkpointRoundTrip() {
        ComputationGraphStore g;
        g.addNode(makeNode("in", {}, "a").withMeta("shape", "[2]").withMeta("note", "\"q\"\\\n\t"));
        g.addNode(makeNode("日本", {"a", "a"}, "b"));
        g.recordGradient("in", "grad");
        g.addEdge("in", "ghost");
        g.addEdge("in", "日本");
        const ComputationGraphStore back = ComputationGraphStore::fromJson(g.toJson());
        QVERIFY(back == g);
        QCOMPARE(qstr(back.toJson()), qstr(g.toJson()));
        QVERIFY(!(back == ComputationGraphStore()));
    }

    void fromJsonErrors_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("not an object")
            << QStringLiteral("[]")
            << QStringLiteral("g.json:1:1: the graph must be an object, found an array");
        QTest::newRow("missing edges")
            << QStringLiteral("{\"nodes\": {}}")
            << QStringLiteral("g.json:1:13: missing required field \"edges\" in the graph");
        QTest::newRow("edge not a pair")
            << QStringLiteral("{\"nodes\": {},\n \"edges\": [[\"a\"]]}")
            << QStringLiteral(
                   "g.json:2:16: edge 0 must be a [producer, consumer] pair, found 1 element");
        QTest::newRow("truncated")
            << QStringLiteral("{\"nodes\": {")
            << QStringLiteral("g.json:1:12: unexpected end of file"); // + nlohmann's words
    }
    void fromJsonErrors() {
        QFETCH(QString, text);
        QFETCH(QString, message);
        try {
            ComputationGraphStore::fromJson(text.toStdString(), "g.json");
            QFAIL("accepted an invalid graph");
        } catch (const GradientError& e) {
            // A syntax error is pinned up to what was found; nlohmann words the rest.
            if (e.kind() == GradientError::Kind::Parse)
                QVERIFY2(QString::fromUtf8(e.what()).startsWith(message), e.what());
            else
                QCOMPARE(QString::fromUtf8(e.what()), message);
        }
    }

    void fromJsonIgnoresUnknownFields() {
        const ComputationGraphStore g = ComputationGraphStore::fromJson(
            R"({"extra": [1, {"a": null}], "nodes": {}, "edges": [], "more": true})");
        QVERIFY(g == ComputationGraphStore());
    }
};

QTEST_GUILESS_MAIN(TestComputationGraphStore)
#include "tst_computationgraphstore.moc"
