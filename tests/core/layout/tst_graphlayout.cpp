// The layered layout: invariants every drawing must keep (checked on
// fixtures, seeded random DAGs and graphs with cycles, the conformance
// transformer and a synthetic 10k-node graph), exact results on small graphs,
// determinism and cancellation. No timing here: speed is for benchmarks.
#include "testsupport.h"

#include "ckptscope/export/samplegenerator.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/layout/graphlayout.h"
#include "ckptscope/stats/tensorstats.h"

#include <QTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

using namespace ckptscope;

namespace {

constexpr double kEps = 1e-6;

QString num(double v) {
    return QString::number(v, 'g', 10);
}

LayoutInput uniformInput(uint32_t n, std::vector<std::pair<uint32_t, uint32_t>> edges,
                         double width = 40, double height = 28) {
    LayoutInput in;
    in.widths.assign(n, width);
    in.heights.assign(n, height);
    in.edges = std::move(edges);
    return in;
}

// n nodes, m random edges. Acyclic: edges go forward in a shuffled order, so
// node numbers say nothing about ranks. Cyclic: any direction.
LayoutInput randomGraph(uint32_t n, uint32_t m, uint32_t seed, bool cyclic) {
    std::mt19937 rng(seed);
    std::vector<uint32_t> perm(n);
    for (uint32_t i = 0; i < n; ++i)
        perm[i] = i;
    for (uint32_t i = n; i > 1; --i)
        std::swap(perm[i - 1], perm[rng() % i]);
    LayoutInput in;
    for (uint32_t i = 0; i < n; ++i) {
        in.widths.push_back(20 + double(rng() % 100));
        in.heights.push_back(16 + double(rng() % 30));
    }
    for (uint32_t k = 0; k < m && n > 1; ++k) {
        uint32_t a = rng() % n, b = rng() % n;
        if (!cyclic) {
            if (a == b)
                continue;
            if (a > b)
                std::swap(a, b);
            a = perm[a];
            b = perm[b];
        }
        in.edges.emplace_back(a, b);
    }
    return in;
}

// levels × perLevel nodes, edges only between consecutive levels, every
// node linked to both neighbouring levels: ranks are the levels, no bends.
LayoutInput properlyLayered(uint32_t levels, uint32_t perLevel, uint32_t seed) {
    std::mt19937 rng(seed);
    const uint32_t n = levels * perLevel;
    LayoutInput in = uniformInput(n, {}, 30);
    for (uint32_t i = 0; i < n; ++i)
        in.widths[i] = 20 + double(rng() % 60);
    std::vector<char> hasOut(n, 0);
    for (uint32_t l = 1; l < levels; ++l)
        for (uint32_t k = 0; k < perLevel; ++k) {
            const uint32_t v = l * perLevel + k;
            const uint32_t count = 1 + rng() % 3;
            for (uint32_t c = 0; c < count; ++c) {
                const uint32_t u = (l - 1) * perLevel + rng() % perLevel;
                in.edges.emplace_back(u, v);
                hasOut[u] = 1;
            }
        }
    for (uint32_t u = 0; u + perLevel < n; ++u)
        if (!hasOut[u])
            in.edges.emplace_back(u, (u / perLevel + 1) * perLevel + rng() % perLevel);
    return in;
}

// Kahn's algorithm over the edges as drawn (reversed ones flipped).
bool acyclicAsDrawn(const GraphLayout& l) {
    const size_t n = l.nodes.size();
    std::vector<std::vector<uint32_t>> out(n);
    std::vector<size_t> in(n, 0);
    for (const LayoutEdge& e : l.edges) {
        const uint32_t a = e.reversed ? e.to : e.from, b = e.reversed ? e.from : e.to;
        out[a].push_back(b);
        ++in[b];
    }
    std::vector<uint32_t> queue;
    for (uint32_t v = 0; v < n; ++v)
        if (in[v] == 0)
            queue.push_back(v);
    for (size_t h = 0; h < queue.size(); ++h)
        for (uint32_t w : out[queue[h]])
            if (--in[w] == 0)
                queue.push_back(w);
    return queue.size() == n;
}

// Every invariant of a finished layout; empty when all hold, else what broke.
QString checkInvariants(const LayoutInput& in, const GraphLayout& l,
                        const LayoutOptions& o = LayoutOptions()) {
    const size_t n = in.widths.size();
    if (l.nodes.size() != n)
        return QStringLiteral("%1 nodes laid out, %2 given").arg(l.nodes.size()).arg(n);
    // Edges: the input's minus self loops, in order.
    std::vector<std::pair<uint32_t, uint32_t>> expected;
    for (const auto& e : in.edges)
        if (e.first != e.second)
            expected.push_back(e);
    if (l.edges.size() != expected.size())
        return QStringLiteral("%1 edges laid out, %2 expected")
            .arg(l.edges.size())
            .arg(expected.size());

    // y of each rank from the rank heights (dummy-only ranks are 0 tall).
    int maxRank = -1;
    for (size_t v = 0; v < n; ++v) {
        const LayoutNode& node = l.nodes[v];
        if (node.width != in.widths[v] || node.height != in.heights[v])
            return QStringLiteral("node %1 has the wrong size").arg(v);
        if (node.rank < 0)
            return QStringLiteral("node %1 has rank %2").arg(v).arg(node.rank);
        maxRank = std::max(maxRank, node.rank);
    }
    for (const LayoutEdge& e : l.edges)
        maxRank = std::max({maxRank, l.nodes[e.from].rank, l.nodes[e.to].rank});
    std::vector<double> rankHeight(size_t(maxRank + 1), 0.0), rankY(size_t(maxRank + 1), 0.0);
    for (size_t v = 0; v < n; ++v)
        rankHeight[size_t(l.nodes[v].rank)] =
            std::max(rankHeight[size_t(l.nodes[v].rank)], in.heights[v]);
    for (size_t r = 0; r < rankY.size(); ++r)
        rankY[r] =
            r == 0 ? rankHeight[0] / 2
                   : rankY[r - 1] + rankHeight[r - 1] / 2 + o.rankSeparation + rankHeight[r] / 2;
    for (size_t v = 0; v < n; ++v)
        if (std::abs(l.nodes[v].y - rankY[size_t(l.nodes[v].rank)]) > kEps)
            return QStringLiteral("node %1 at y %2, rank %3 is at %4")
                .arg(v)
                .arg(num(l.nodes[v].y))
                .arg(l.nodes[v].rank)
                .arg(num(rankY[size_t(l.nodes[v].rank)]));

    // Everything each rank holds: nodes (with widths) and bend points.
    struct Item {
        double x, width;
        QString what;
    };
    std::vector<std::vector<Item>> items(rankY.size());
    for (size_t v = 0; v < n; ++v)
        items[size_t(l.nodes[v].rank)].push_back(
            {l.nodes[v].x, in.widths[v], QStringLiteral("node %1").arg(v)});

    for (size_t i = 0; i < l.edges.size(); ++i) {
        const LayoutEdge& e = l.edges[i];
        const QString name = QStringLiteral("edge %1 [%2 → %3]").arg(i).arg(e.from).arg(e.to);
        if (e.from != expected[i].first || e.to != expected[i].second)
            return name + QStringLiteral(" out of order");
        const LayoutNode &a = l.nodes[e.from], &b = l.nodes[e.to];
        const int down = e.reversed ? a.rank - b.rank : b.rank - a.rank;
        if (down < 1)
            return name +
                   QStringLiteral(" goes %1 ranks down (reversed: %2)").arg(down).arg(e.reversed);
        if (e.points.size() != size_t(down) + 1)
            return name +
                   QStringLiteral(" has %1 points for %2 ranks").arg(e.points.size()).arg(down);
        // From the border of `from` (bottom centre, or top for a reversed
        // edge) to the border of `to`.
        const double sign = e.reversed ? -1 : 1;
        const auto first = e.points.front(), last = e.points.back();
        if (std::abs(first.first - a.x) > kEps ||
            std::abs(first.second - (a.y + sign * a.height / 2)) > kEps)
            return name + QStringLiteral(" starts at (%1, %2), not on its source's border")
                              .arg(num(first.first), num(first.second));
        if (std::abs(last.first - b.x) > kEps ||
            std::abs(last.second - (b.y - sign * b.height / 2)) > kEps)
            return name + QStringLiteral(" ends at (%1, %2), not on its target's border")
                              .arg(num(last.first), num(last.second));
        for (size_t k = 1; k + 1 < e.points.size(); ++k) {
            const int r = a.rank + int(sign) * int(k);
            if (std::abs(e.points[k].second - rankY[size_t(r)]) > kEps)
                return name + QStringLiteral(" bends at y %1 off rank %2")
                                  .arg(num(e.points[k].second))
                                  .arg(r);
            items[size_t(r)].push_back({e.points[k].first, 0, name});
        }
    }
    // Repeated edges share their bends; keep one.
    for (auto& rank : items) {
        std::sort(rank.begin(), rank.end(), [](const Item& p, const Item& q) { return p.x < q.x; });
        for (size_t i = 1; i < rank.size(); ++i) {
            const Item &p = rank[i - 1], &q = rank[i];
            if (p.width == 0 && q.width == 0 && p.x == q.x)
                continue;
            if (q.x - q.width / 2 < p.x + p.width / 2 + o.nodeSeparation - kEps)
                return QStringLiteral("%1 at x %2 overlaps %3 at x %4")
                    .arg(p.what, num(p.x), q.what, num(q.x));
        }
    }
    // Bounding box from the origin.
    double left = 1e300, right = -1e300, bottom = 0;
    for (size_t v = 0; v < n; ++v) {
        left = std::min(left, l.nodes[v].x - in.widths[v] / 2);
        right = std::max(right, l.nodes[v].x + in.widths[v] / 2);
        bottom = std::max(bottom, l.nodes[v].y + in.heights[v] / 2);
    }
    for (const LayoutEdge& e : l.edges)
        for (const auto& p : e.points) {
            left = std::min(left, p.first);
            right = std::max(right, p.first);
        }
    if (n > 0 && (std::abs(left) > kEps || std::abs(right - l.width) > kEps ||
                  std::abs(bottom - l.height) > kEps))
        return QStringLiteral("bounding box %1..%2 x %3, reported %4 x %5")
            .arg(num(left), num(right), num(bottom), num(l.width), num(l.height));

    if (!acyclicAsDrawn(l))
        return QStringLiteral("reversing the reversed edges leaves a cycle");
    const uint64_t recount = countCrossings(l);
    if (recount != l.crossings)
        return QStringLiteral("%1 crossings reported, %2 counted from the drawing")
            .arg(l.crossings)
            .arg(recount);
    return {};
}

bool sameLayout(const GraphLayout& a, const GraphLayout& b) {
    if (a.crossings != b.crossings || a.width != b.width || a.height != b.height ||
        a.nodes.size() != b.nodes.size() || a.edges.size() != b.edges.size())
        return false;
    for (size_t i = 0; i < a.nodes.size(); ++i)
        if (a.nodes[i].x != b.nodes[i].x || a.nodes[i].y != b.nodes[i].y ||
            a.nodes[i].rank != b.nodes[i].rank)
            return false;
    for (size_t i = 0; i < a.edges.size(); ++i)
        if (a.edges[i].points != b.edges[i].points || a.edges[i].reversed != b.edges[i].reversed)
            return false;
    return true;
}

// Proper crossings of the drawn segments, pair by pair (small graphs).
uint64_t bruteForceCrossings(const GraphLayout& l) {
    struct Seg {
        double x1, y1, x2, y2;
    };
    std::vector<Seg> segs;
    for (const LayoutEdge& e : l.edges)
        for (size_t k = 0; k + 1 < e.points.size(); ++k)
            segs.push_back({e.points[k].first, e.points[k].second, e.points[k + 1].first,
                            e.points[k + 1].second});
    auto orient = [](double ax, double ay, double bx, double by, double cx, double cy) {
        const double d = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
        return d > 1e-9 ? 1 : d < -1e-9 ? -1 : 0;
    };
    uint64_t crossings = 0;
    for (size_t i = 0; i < segs.size(); ++i)
        for (size_t j = i + 1; j < segs.size(); ++j) {
            const Seg &p = segs[i], &q = segs[j];
            const int o1 = orient(p.x1, p.y1, p.x2, p.y2, q.x1, q.y1);
            const int o2 = orient(p.x1, p.y1, p.x2, p.y2, q.x2, q.y2);
            const int o3 = orient(q.x1, q.y1, q.x2, q.y2, p.x1, p.y1);
            const int o4 = orient(q.x1, q.y1, q.x2, q.y2, p.x2, p.y2);
            // Interiors cross: each segment strictly separates the other's ends.
            crossings += o1 * o2 < 0 && o3 * o4 < 0;
        }
    return crossings;
}

GraphLayoutInput graphInput(const ComputationGraphStore& g) {
    return layoutInputFromGraph(
        g, [](const ComputationNode& n) { return 7.0 * double(n.op.size()) + 24; }, 28);
}

} // namespace

class TestGraphLayout : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void emptyAndSingle() {
        const GraphLayout empty = layoutGraph(LayoutInput());
        QVERIFY(empty.nodes.empty() && empty.edges.empty());
        QCOMPARE(empty.crossings, uint64_t(0));
        QCOMPARE(empty.width, 0.0);
        QCOMPARE(empty.height, 0.0);

        const LayoutInput one = uniformInput(1, {{0, 0}}, 50, 30);
        const GraphLayout l = layoutGraph(one);
        QCOMPARE(l.nodes.size(), size_t(1));
        QVERIFY(l.edges.empty()); // the self loop is left out
        QCOMPARE(l.nodes[0].x, 25.0);
        QCOMPARE(l.nodes[0].y, 15.0);
        QCOMPARE(l.width, 50.0);
        QCOMPARE(l.height, 30.0);
        const QString err = checkInvariants(one, l);
        QVERIFY2(err.isEmpty(), qPrintable(err));
    }

    void invalidInput() {
        LayoutInput sizes = uniformInput(3, {});
        sizes.heights.pop_back();
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, layoutGraph(sizes));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, layoutGraph(uniformInput(3, {{0, 3}})));
        LayoutInput nan = uniformInput(2, {{0, 1}});
        nan.widths[1] = std::nan("");
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, layoutGraph(nan));
        LayoutInput negative = uniformInput(2, {{0, 1}});
        negative.heights[0] = -1;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, layoutGraph(negative));
    }

    void tooManyBendsIsRefused() {
        // A 5 000-node chain with its head linked to every node: 12.5 million
        // bends, refused up front instead of exhausting memory.
        std::vector<std::pair<uint32_t, uint32_t>> edges;
        for (uint32_t i = 1; i < 5000; ++i) {
            edges.emplace_back(i - 1, i);
            edges.emplace_back(0, i);
        }
        QVERIFY_THROWS_EXCEPTION(std::length_error, layoutGraph(uniformInput(5000, edges)));
    }

    void chainIsStraight() {
        const LayoutInput chain = uniformInput(4, {{0, 1}, {1, 2}, {2, 3}});
        const GraphLayout l = layoutGraph(chain);
        QVERIFY2(checkInvariants(chain, l).isEmpty(), qPrintable(checkInvariants(chain, l)));
        for (int v = 0; v < 4; ++v) {
            QCOMPARE(l.nodes[size_t(v)].rank, v);
            QCOMPARE(l.nodes[size_t(v)].x, l.nodes[0].x);
        }
        QCOMPARE(l.crossings, uint64_t(0));

        // Inside a larger graph: s fans out to the chain a→b→c→d and to e,
        // f joins d and e; the chain's own nodes still share one x.
        // 0 s, 1 a, 2 b, 3 c, 4 d, 5 e, 6 f, 7 g (a second branch of s).
        const LayoutInput g = uniformInput(
            8, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 5}, {5, 6}, {4, 6}, {0, 7}, {7, 6}}, 60);
        const GraphLayout lg = layoutGraph(g);
        QVERIFY2(checkInvariants(g, lg).isEmpty(), qPrintable(checkInvariants(g, lg)));
        for (size_t v : {2, 3, 4})
            QVERIFY2(std::abs(lg.nodes[v].x - lg.nodes[1].x) < kEps,
                     qPrintable(QStringLiteral("node %1 at %2, a at %3")
                                    .arg(v)
                                    .arg(lg.nodes[v].x)
                                    .arg(lg.nodes[1].x)));
        // The long edges e→f and g→f run straight down through their bends.
        QCOMPARE(lg.crossings, uint64_t(0));
    }

    void longEdgesGetBends() {
        // 0→1→2→3 and the skip edge 0→3 across two ranks.
        const LayoutInput in = uniformInput(4, {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
        const GraphLayout l = layoutGraph(in);
        QVERIFY2(checkInvariants(in, l).isEmpty(), qPrintable(checkInvariants(in, l)));
        const LayoutEdge& skip = l.edges[3];
        QCOMPARE(skip.points.size(), size_t(4));
        // Its bends form a vertical line beside the chain.
        QCOMPARE(skip.points[1].first, skip.points[2].first);
        QVERIFY(std::abs(skip.points[1].first - l.nodes[1].x) >= 20 + 20 - kEps);
    }

    void ranksKeepEdgesShort() {
        // A chain 0→…→5; a source 6 feeding 4 sits just above it, not at the
        // top; the pair 7→8, both feeding 5, moves down as one.
        const LayoutInput in = uniformInput(
            9, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {6, 4}, {7, 8}, {7, 5}, {8, 5}});
        const GraphLayout l = layoutGraph(in);
        QVERIFY2(checkInvariants(in, l).isEmpty(), qPrintable(checkInvariants(in, l)));
        for (int v = 0; v < 6; ++v)
            QCOMPARE(l.nodes[size_t(v)].rank, v);
        QCOMPARE(l.nodes[6].rank, 3);
        QCOMPARE(l.nodes[7].rank, 3);
        QCOMPARE(l.nodes[8].rank, 4);
    }

    void knownCrossingFreeGraphs() {
        // A binary tree numbered in a scrambled order: always drawable
        // without crossings.
        std::vector<std::pair<uint32_t, uint32_t>> tree;
        std::vector<uint32_t> label(127);
        for (uint32_t i = 0; i < 127; ++i)
            label[i] = (i * 37 + 11) % 127;
        for (uint32_t i = 1; i < 127; ++i)
            tree.emplace_back(label[(i - 1) / 2], label[i]);
        const LayoutInput t = uniformInput(127, tree);
        const GraphLayout lt = layoutGraph(t);
        QVERIFY2(checkInvariants(t, lt).isEmpty(), qPrintable(checkInvariants(t, lt)));
        QCOMPARE(lt.crossings, uint64_t(0));

        // A ladder with rungs both ways, listed so the initial order crosses:
        // a_i → a_i+1, b_i → b_i+1, a_i → b_i+1, b_i → a_i+1 (level planar).
        std::vector<std::pair<uint32_t, uint32_t>> ladder;
        for (uint32_t i = 0; i + 1 < 20; ++i) {
            const uint32_t a = 2 * i, b = 2 * i + 1;
            ladder.emplace_back(a, b + 2);
            ladder.emplace_back(b, b + 2);
            ladder.emplace_back(a, a + 2);
            if (i % 3 == 0)
                ladder.emplace_back(b, a + 2);
        }
        const LayoutInput ld = uniformInput(40, ladder);
        const GraphLayout ll = layoutGraph(ld);
        QVERIFY2(checkInvariants(ld, ll).isEmpty(), qPrintable(checkInvariants(ld, ll)));
        // Each rung pair a_i→b_i+1, b_i→a_i+1 crosses once whatever the order
        // (K2,2); other edges need not cross.
        QCOMPARE(ll.crossings, uint64_t(7));

        // The diamond of the conformance corpus, inline: 0→1, 0→2, 1→3, 2→3,
        // 3→4, 3→5.
        const LayoutInput d = uniformInput(6, {{0, 2}, {0, 1}, {2, 3}, {1, 3}, {3, 5}, {3, 4}});
        const GraphLayout dl = layoutGraph(d);
        QVERIFY2(checkInvariants(d, dl).isEmpty(), qPrintable(checkInvariants(d, dl)));
        QCOMPARE(dl.crossings, uint64_t(0));
    }

    void completeBipartiteCrossings() {
        // K3,3 between two ranks: any order gives C(3,2)² = 9 crossings.
        std::vector<std::pair<uint32_t, uint32_t>> edges;
        for (uint32_t a = 0; a < 3; ++a)
            for (uint32_t b = 3; b < 6; ++b)
                edges.emplace_back(a, b);
        const LayoutInput in = uniformInput(6, edges);
        const GraphLayout l = layoutGraph(in);
        QVERIFY2(checkInvariants(in, l).isEmpty(), qPrintable(checkInvariants(in, l)));
        QCOMPARE(l.crossings, uint64_t(9));
        QCOMPARE(bruteForceCrossings(l), uint64_t(9));
    }

    void cycles() {
        // A 3-cycle: one edge reversed, drawn against the ranks.
        const LayoutInput tri = uniformInput(3, {{0, 1}, {1, 2}, {2, 0}});
        const GraphLayout lt = layoutGraph(tri);
        QVERIFY2(checkInvariants(tri, lt).isEmpty(), qPrintable(checkInvariants(tri, lt)));
        QCOMPARE(std::count_if(lt.edges.begin(), lt.edges.end(),
                               [](const LayoutEdge& e) { return e.reversed; }),
                 1L);
        // A 2-cycle and a self loop: one reversed, the loop left out; the two
        // edges share one route, run in opposite directions.
        const LayoutInput two = uniformInput(2, {{0, 1}, {1, 1}, {1, 0}});
        const GraphLayout l2 = layoutGraph(two);
        QVERIFY2(checkInvariants(two, l2).isEmpty(), qPrintable(checkInvariants(two, l2)));
        QCOMPARE(l2.edges.size(), size_t(2));
        QVERIFY(l2.edges[0].reversed != l2.edges[1].reversed);
        auto back = l2.edges[1].points;
        std::reverse(back.begin(), back.end());
        QCOMPARE(l2.edges[0].points, back);
        // A DAG keeps every edge forward.
        const LayoutInput dag = randomGraph(300, 600, 7, false);
        const GraphLayout ld = layoutGraph(dag);
        QVERIFY(std::none_of(ld.edges.begin(), ld.edges.end(),
                             [](const LayoutEdge& e) { return e.reversed; }));
    }

    void repeatedEdges() {
        // 0→2 twice, 1→2, 0→3 three times: each input edge gets its own
        // (identical) route, and crossings count every copy.
        const LayoutInput in = uniformInput(
            5, {{0, 2}, {1, 3}, {0, 2}, {1, 2}, {0, 3}, {0, 3}, {0, 3}, {4, 4}, {2, 4}});
        const GraphLayout l = layoutGraph(in);
        QVERIFY2(checkInvariants(in, l).isEmpty(), qPrintable(checkInvariants(in, l)));
        QCOMPARE(l.edges.size(), size_t(8));
        QCOMPARE(l.edges[0].points, l.edges[2].points);
        QCOMPARE(l.edges[4].points, l.edges[6].points);
    }

    void randomGraphs_data() {
        QTest::addColumn<uint32_t>("nodes");
        QTest::addColumn<uint32_t>("edges");
        QTest::addColumn<uint32_t>("seed");
        QTest::addColumn<bool>("cyclic");
        for (uint32_t seed = 1; seed <= 6; ++seed) {
            QTest::addRow("sparse dag %u", seed) << 200u << 260u << seed << false;
            QTest::addRow("dense dag %u", seed) << 120u << 600u << seed << false;
            QTest::addRow("cyclic %u", seed) << 150u << 300u << seed << true;
        }
        QTest::addRow("large dag") << 3000u << 4500u << 99u << false;
        QTest::addRow("large cyclic") << 2000u << 3000u << 98u << true;
        QTest::addRow("no edges") << 50u << 0u << 1u << false;
    }

    void randomGraphs() {
        QFETCH(uint32_t, nodes);
        QFETCH(uint32_t, edges);
        QFETCH(uint32_t, seed);
        QFETCH(bool, cyclic);
        const LayoutInput in = randomGraph(nodes, edges, seed, cyclic);
        const GraphLayout l = layoutGraph(in);
        const QString err = checkInvariants(in, l);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        // Deterministic: a second run gives the very same drawing.
        QVERIFY(sameLayout(l, layoutGraph(in)));
        if (cyclic)
            QVERIFY(std::any_of(l.edges.begin(), l.edges.end(),
                                [](const LayoutEdge& e) { return e.reversed; }));
    }

    void otherOptions() {
        LayoutOptions o;
        o.nodeSeparation = 5;
        o.rankSeparation = 120;
        o.crossingSweeps = 0; // initial order only
        const LayoutInput in = randomGraph(200, 400, 3, true);
        const GraphLayout l = layoutGraph(in, o);
        QVERIFY2(checkInvariants(in, l, o).isEmpty(), qPrintable(checkInvariants(in, l, o)));
        // Sweeps never end worse than the order they start from.
        QVERIFY(layoutGraph(in).crossings <= l.crossings);
    }

    void crossingsAreGeometric() {
        // Where every segment of a gap runs from one height to one other
        // (equal node heights, no bends), a reported crossing is a proper
        // intersection of two drawn segments, and nothing else is. (Bends sit
        // at a rank's centre line, nodes end at their borders: there the count
        // is of order swaps between ranks, as dot's.)
        for (uint32_t seed = 1; seed <= 5; ++seed) {
            const LayoutInput in = properlyLayered(6, 9, seed);
            const GraphLayout l = layoutGraph(in);
            QVERIFY2(checkInvariants(in, l).isEmpty(), qPrintable(checkInvariants(in, l)));
            for (const LayoutEdge& e : l.edges)
                QCOMPARE(e.points.size(), size_t(2));
            QVERIFY(l.crossings > 0);
            QCOMPARE(bruteForceCrossings(l), l.crossings);
        }
    }

    void countCrossingsOnAHandMadeLayout() {
        // Two edges swapping sides between ranks 0 and 1, and one sharing an
        // end with each: one crossing.
        GraphLayout l;
        l.nodes = {
            {0, 0, 10, 10, 0}, {100, 0, 10, 10, 0}, {0, 100, 10, 10, 1}, {100, 100, 10, 10, 1}};
        l.edges = {{0, 3, {{0, 5}, {100, 95}}, false},
                   {1, 2, {{100, 5}, {0, 95}}, false},
                   {0, 2, {{0, 5}, {0, 95}}, false}};
        QCOMPARE(countCrossings(l), uint64_t(1));
        // Reversed (drawn upwards) it is the same picture.
        l.edges[1] = {2, 1, {{0, 95}, {100, 5}}, true};
        QCOMPARE(countCrossings(l), uint64_t(1));
    }

    void inputFromGraph() {
        ComputationGraphStore g;
        for (const char* id : {"c", "a", "b", "d"})
            g.insertNode(ComputationNode(id, std::string(id) == "a" ? "matmul" : "add", {}));
        g.addEdge("a", "b");
        g.addEdge("a", "b");     // repeat
        g.addEdge("b", "b");     // self loop
        g.addEdge("b", "ghost"); // unknown consumer
        g.addEdge("c", "a");
        g.addEdge("d", "c");
        const GraphLayoutInput in = graphInput(g);
        QCOMPARE(in.ids, (std::vector<std::string>{"a", "b", "c", "d"}));
        QCOMPARE(in.input.widths, (std::vector<double>{7 * 6 + 24, 7 * 3 + 24, 45, 45}));
        QCOMPARE(in.input.heights, (std::vector<double>(4, 28)));
        QCOMPARE(in.input.edges,
                 (std::vector<std::pair<uint32_t, uint32_t>>{{0, 1}, {2, 0}, {3, 2}}));
    }

    void conformanceGraphs() {
        REQUIRE_CONFORMANCE();
        const QString dir = testsupport::conformanceDir() + QStringLiteral("/valid/");
        {
            const GradientCheckpoint ck = GradientCheckpoint::load(
                (dir + QStringLiteral("transformer_24l.json")).toStdString());
            const GraphLayoutInput in = graphInput(ck.graph);
            QCOMPARE(in.ids.size(), size_t(484));
            QVERIFY(std::is_sorted(in.ids.begin(), in.ids.end()));
            const GraphLayout l = layoutGraph(in.input);
            QVERIFY2(checkInvariants(in.input, l).isEmpty(),
                     qPrintable(checkInvariants(in.input, l)));
            QVERIFY(sameLayout(l, layoutGraph(in.input)));
            QVERIFY(std::none_of(l.edges.begin(), l.edges.end(),
                                 [](const LayoutEdge& e) { return e.reversed; }));
            QCOMPARE(l.crossings, uint64_t(0)); // transformer blocks are planar
        }
        {
            const GradientCheckpoint ck = GradientCheckpoint::load(
                (dir + QStringLiteral("diamond_and_cycle.json")).toStdString());
            const GraphLayoutInput in = graphInput(ck.graph);
            const GraphLayout l = layoutGraph(in.input);
            QVERIFY2(checkInvariants(in.input, l).isEmpty(),
                     qPrintable(checkInvariants(in.input, l)));
            QCOMPARE(std::count_if(l.edges.begin(), l.edges.end(),
                                   [](const LayoutEdge& e) { return e.reversed; }),
                     1L); // the two-node cycle
        }
    }

    void synthetic10k() {
        SyntheticGraphSpec spec;
        spec.nodeCount = 10000;
        spec.completeBackward = false;
        const GradientCheckpoint ck = makeSyntheticGradient(spec);
        const GraphLayoutInput in = graphInput(ck.graph);
        QVERIFY(in.ids.size() >= 10000);
        const GraphLayout l = layoutGraph(in.input);
        QVERIFY2(checkInvariants(in.input, l).isEmpty(), qPrintable(checkInvariants(in.input, l)));
        QCOMPARE(l.crossings, uint64_t(0));
        // Blocks of one shape repeated: the drawing must not lean sideways
        // (it did, by thousands of pixels, with Brandes–Köpf's balancing
        // alone): a few nodes wide at most.
        QVERIFY2(l.width < 1000, qPrintable(QStringLiteral("width %1").arg(l.width)));
    }

    void cancellation() {
        const LayoutInput in = randomGraph(2000, 4000, 5, true);
        std::atomic<bool> cancel{true};
        LayoutOptions o;
        o.cancel = &cancel;
        QVERIFY_THROWS_EXCEPTION(Cancelled, layoutGraph(in, o));

        // Cancelled midway, from the progress callback.
        cancel = false;
        std::vector<double> seen;
        o.progress = [&](double p) {
            seen.push_back(p);
            if (p >= 0.5)
                cancel = true;
        };
        QVERIFY_THROWS_EXCEPTION(Cancelled, layoutGraph(in, o));
        QVERIFY(!seen.empty() && seen.back() >= 0.5 && seen.back() < 1);

        // Not cancelled: progress rises from 0 to 1.
        cancel = false;
        seen.clear();
        o.progress = [&](double p) { seen.push_back(p); };
        layoutGraph(in, o);
        QVERIFY(seen.size() > 3);
        QCOMPARE(seen.front(), 0.0);
        QCOMPARE(seen.back(), 1.0);
        QVERIFY(std::is_sorted(seen.begin(), seen.end()));
    }
};

QTEST_GUILESS_MAIN(TestGraphLayout)
#include "tst_graphlayout.moc"
