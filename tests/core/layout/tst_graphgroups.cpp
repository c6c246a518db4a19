// Collapse by structure: the grouping partitions the nodes into bands of
// ranks and keys, its bundles count the edges between groups (counted again
// here), and the collapsed drawing shows each node and edge exactly once
// however the groups are expanded.
#include "testsupport.h"

#include "ckptscope/export/samplegenerator.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/layout/collapsedlayout.h"
#include "ckptscope/layout/graphgroups.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <tuple>

using namespace ckptscope;

namespace {

struct Keyed {
    GraphLayoutInput graph;
    std::vector<uint32_t> keys; // by op, numbered in order of appearance
};

Keyed synthetic(uint64_t nodes) {
    SyntheticGraphSpec spec;
    spec.nodeCount = nodes;
    const GradientCheckpoint ck = makeSyntheticGradient(spec);
    Keyed k;
    k.graph = layoutInputFromGraph(
        ck.graph, [](const ComputationNode& n) { return 20.0 + double(n.op.size()) * 7; });
    std::map<std::string, uint32_t> ids;
    for (const std::string& id : k.graph.ids) {
        const std::string& op = ck.graph.getNode(id)->op;
        k.keys.push_back(ids.try_emplace(op, uint32_t(ids.size())).first->second);
    }
    return k;
}

std::vector<std::pair<double, double>> boxSizes(const NodeGrouping& g) {
    return std::vector<std::pair<double, double>>(g.groupCount(), {120.0, 30.0});
}

bool overlap(const LayoutNode& a, const LayoutNode& b) {
    return std::abs(a.x - b.x) < (a.width + b.width) / 2 - 1e-6 &&
           std::abs(a.y - b.y) < (a.height + b.height) / 2 - 1e-6;
}

// Each input edge is drawn once: alone (both groups expanded), in exactly
// one bundle, or hidden inside a collapsed group.
void checkEdgesAccounted(const CollapsedLayout& cl, const CollapsedLayout::Drawing& d,
                         const LayoutInput& in) {
    const NodeGrouping& g = cl.grouping();
    std::map<std::tuple<int, int, uint32_t, uint32_t>, uint32_t> expected;
    for (size_t e = 0; e < in.edges.size(); ++e) {
        const auto [a, b] = in.edges[e];
        const uint32_t ga = g.groupOf[a], gb = g.groupOf[b];
        const bool ea = cl.isExpanded(ga), eb = cl.isExpanded(gb);
        QCOMPARE(d.layout.edges[e].from, a);
        QCOMPARE(d.layout.edges[e].to, b);
        QCOMPARE(d.layout.edges[e].points.size(), size_t(ea && eb ? 2 : 0));
        if ((ea && eb) || (!ea && !eb && ga == gb))
            continue;
        ++expected[{ea ? int(a) : -1, eb ? int(b) : -1, ga, gb}];
    }
    std::map<std::tuple<int, int, uint32_t, uint32_t>, uint32_t> got;
    for (const auto& b : d.bundles) {
        QCOMPARE(b.points.size(), size_t(2));
        QVERIFY(
            got.emplace(std::tuple(b.fromNode, b.toNode, b.fromGroup, b.toGroup), b.count).second);
    }
    QVERIFY(got == expected);
}

} // namespace

class TestGraphGroups : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void partitionsIntoBandsAndKeys() {
        const Keyed k = synthetic(6000);
        const auto& in = k.graph.input;
        const uint32_t n = uint32_t(in.widths.size());
        GroupingOptions options;
        options.maxGroups = 120;
        const NodeGrouping g = groupByStructure(n, in.edges, k.keys, options);
        QVERIFY(g.groupCount() > 0);
        QVERIFY(g.groupCount() <= options.maxGroups);
        QVERIFY(g.bandCount() > 1); // a deep graph: more than one band
        std::vector<int> seen(n, 0);
        std::set<std::pair<uint32_t, uint32_t>> bandKeys;
        for (uint32_t grp = 0; grp < g.groupCount(); ++grp) {
            QVERIFY(g.groupSize(grp) > 0);
            QVERIFY(bandKeys.insert({g.groupBand[grp], g.groupKey[grp]}).second);
            for (uint32_t i = g.memberStart[grp]; i < g.memberStart[grp + 1]; ++i) {
                const uint32_t v = g.members[i];
                ++seen[v];
                QCOMPARE(g.groupOf[v], grp);
                QCOMPARE(k.keys[v], g.groupKey[grp]);
                QCOMPARE(uint32_t(g.rank[v]) / g.bandRanks, g.groupBand[grp]);
                if (i > g.memberStart[grp])
                    QVERIFY(g.rank[g.members[i - 1]] <= g.rank[v]);
            }
        }
        for (uint32_t v = 0; v < n; ++v)
            QCOMPARE(seen[v], 1);
        // Ranks as a layered drawing gives them: every edge goes down.
        for (size_t e = 0; e < in.edges.size(); ++e) {
            const auto [a, b] = in.edges[e];
            QVERIFY(!g.reversed[e]); // the synthetic graph is acyclic
            QVERIFY(g.rank[a] < g.rank[b]);
        }
        // Narrower bands would not fit: the grouping is as fine as allowed.
        if (g.bandRanks > 1) {
            std::set<std::pair<int, uint32_t>> finer;
            for (uint32_t v = 0; v < n; ++v)
                finer.insert({g.rank[v] / int(g.bandRanks - 1), k.keys[v]});
            QVERIFY(finer.size() > options.maxGroups);
        }
    }

    void bundlesCountEdgesBetweenGroups() {
        const Keyed k = synthetic(3000);
        const auto& in = k.graph.input;
        const NodeGrouping g = groupByStructure(uint32_t(in.widths.size()), in.edges, k.keys, {60});
        std::map<std::pair<uint32_t, uint32_t>, uint32_t> expected;
        for (const auto& [a, b] : in.edges)
            if (g.groupOf[a] != g.groupOf[b])
                ++expected[{g.groupOf[a], g.groupOf[b]}];
        std::map<std::pair<uint32_t, uint32_t>, uint32_t> got;
        for (const GroupBundle& b : g.bundles)
            QVERIFY(got.emplace(std::pair(b.from, b.to), b.count).second);
        QVERIFY(!expected.empty());
        QVERIFY(got == expected);
    }

    void cyclesAndSmallGraphs() {
        // 0 → 1 → 2 → 0 and 2 → 3; keys alternate. One group per rank and key
        // when everything fits.
        const std::vector<std::pair<uint32_t, uint32_t>> edges{{0, 1}, {1, 2}, {2, 0}, {2, 3}};
        const NodeGrouping g = groupByStructure(4, edges, {0, 1, 0, 1}, {100});
        QCOMPARE(g.bandRanks, 1u);
        QCOMPARE(g.groupCount(), 4u); // four ranks, one node each
        int reversed = 0;
        for (size_t e = 0; e < edges.size(); ++e) {
            reversed += g.reversed[e];
            auto [a, b] = edges[e];
            if (g.reversed[e])
                std::swap(a, b);
            QVERIFY(g.rank[a] < g.rank[b]);
        }
        QCOMPARE(reversed, 1);
        // One group allowed: a single band, one group per key.
        const NodeGrouping one = groupByStructure(4, edges, {0, 0, 0, 0}, {1});
        QCOMPARE(one.groupCount(), 1u);
        QCOMPARE(one.groupSize(0), 4u);
        QVERIFY(one.bundles.empty());
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, groupByStructure(2, {{0, 2}}, {0, 0}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, groupByStructure(2, {{1, 1}}, {0, 0}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, groupByStructure(2, {}, {0}));
        const NodeGrouping none = groupByStructure(0, {}, {});
        QCOMPARE(none.groupCount(), 0u);
    }

    void collapsedDrawingShowsEachNodeAndEdgeOnce() {
        const Keyed k = synthetic(2000);
        const LayoutInput& in = k.graph.input;
        const size_t n = in.widths.size();
        NodeGrouping grouping = groupByStructure(uint32_t(n), in.edges, k.keys, {40});
        const auto sizes = boxSizes(grouping);
        CollapsedLayout cl(in, std::move(grouping), sizes);
        const NodeGrouping& g = cl.grouping();
        // Collapsed: no node drawn, one box per group, none overlapping.
        CollapsedLayout::Drawing d = cl.compose();
        QCOMPARE(d.layout.nodes.size(), n);
        QCOMPARE(d.groups.size(), size_t(g.groupCount()));
        for (const LayoutNode& node : d.layout.nodes)
            QCOMPARE(node.width * node.height, 0.0);
        for (size_t a = 0; a < d.groups.size(); ++a)
            for (size_t b = a + 1; b < d.groups.size(); ++b) {
                const auto &ga = d.groups[a], &gb = d.groups[b];
                QVERIFY(std::abs(ga.x - gb.x) >= (ga.width + gb.width) / 2 ||
                        std::abs(ga.y - gb.y) >= (ga.height + gb.height) / 2);
            }
        checkEdgesAccounted(cl, d, in);

        // One group expanded: its nodes drawn inside its frame, apart.
        uint32_t big = 0;
        for (uint32_t grp = 0; grp < g.groupCount(); ++grp)
            if (g.groupSize(grp) > g.groupSize(big))
                big = grp;
        cl.setExpanded(big, true);
        QCOMPARE(cl.expandedCount(), 1u);
        d = cl.compose();
        const auto& frame = d.groups[big];
        QVERIFY(frame.expanded);
        std::vector<uint32_t> inside;
        for (uint32_t v = 0; v < n; ++v) {
            const LayoutNode& node = d.layout.nodes[v];
            if (g.groupOf[v] != big) {
                QCOMPARE(node.width, 0.0);
                continue;
            }
            inside.push_back(v);
            QCOMPARE(node.width, in.widths[v]);
            QCOMPARE(node.height, in.heights[v]);
            QVERIFY(node.x - node.width / 2 >= frame.x - frame.width / 2 - 1e-6);
            QVERIFY(node.x + node.width / 2 <= frame.x + frame.width / 2 + 1e-6);
            QVERIFY(node.y - node.height / 2 >= frame.y - frame.height / 2 - 1e-6);
            QVERIFY(node.y + node.height / 2 <= frame.y + frame.height / 2 + 1e-6);
        }
        QCOMPARE(inside.size(), size_t(g.groupSize(big)));
        for (size_t a = 0; a < inside.size(); ++a)
            for (size_t b = a + 1; b < inside.size(); ++b)
                QVERIFY(!overlap(d.layout.nodes[inside[a]], d.layout.nodes[inside[b]]));
        checkEdgesAccounted(cl, d, in);

        // Everything expanded: every node drawn, none overlapping, every edge
        // drawn alone, no bundles; collapsing again gives the first drawing.
        cl.setAllExpanded(true);
        d = cl.compose();
        QVERIFY(d.bundles.empty());
        for (uint32_t v = 0; v < n; ++v)
            QVERIFY(d.layout.nodes[v].width > 0);
        std::vector<uint32_t> byY(n);
        std::iota(byY.begin(), byY.end(), 0u);
        std::sort(byY.begin(), byY.end(), [&](uint32_t a, uint32_t b) {
            return d.layout.nodes[a].y < d.layout.nodes[b].y;
        });
        for (size_t a = 0; a < n; ++a) // nodes of a row share their y
            for (size_t b = a + 1; b < n && d.layout.nodes[byY[b]].y - d.layout.nodes[byY[a]].y <
                                                d.layout.nodes[byY[a]].height;
                 ++b)
                QVERIFY(!overlap(d.layout.nodes[byY[a]], d.layout.nodes[byY[b]]));
        checkEdgesAccounted(cl, d, in);
        cl.setAllExpanded(false);
        QCOMPARE(cl.expandedCount(), 0u);
        const CollapsedLayout::Drawing again = cl.compose();
        QCOMPARE(again.bundles.size(), cl.compose().bundles.size());
        for (size_t grp = 0; grp < again.groups.size(); ++grp)
            QCOMPARE(again.groups[grp].width, sizes[grp].first);
    }

    void structureScopeFromMetadata() {
        ComputationNode node("n", "matmul", {});
        QCOMPARE(structureScope(node), std::string());
        node = std::move(node).withMeta("name", "layers.3.attn.q");
        QCOMPARE(structureScope(node), std::string("layers.3.attn"));
        node = std::move(node).withMeta("layer", "7");
        QCOMPARE(structureScope(node), std::string("7"));
        node = std::move(node).withMeta("scope", "blocks/2/mlp");
        QCOMPARE(structureScope(node), std::string("blocks/2/mlp"));
    }
};

QTEST_GUILESS_MAIN(TestGraphGroups)
#include "tst_graphgroups.moc"
