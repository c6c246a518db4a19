// checkLayout: only built where layoutGraph links (see CMakeLists.txt).
#include "fuzzchecks.h"

#include "ckptscope/layout/graphlayout.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

using namespace ckptscope;

namespace fuzzchecks {

namespace {

bool finite(double v) {
    return std::isfinite(v);
}

} // namespace

void checkLayout(std::string_view bytes) {
    // Byte 0: node count (≤ 200); then one byte of width per node; the rest
    // are edges, one byte pair each (endpoints modulo the node count).
    if (bytes.empty())
        return;
    const auto at = [&](size_t i) { return uint8_t(bytes[i]); };
    const size_t n = at(0) % 201;
    LayoutInput input;
    size_t pos = 1;
    for (size_t i = 0; i < n; ++i) {
        const double w = pos < bytes.size() ? 8.0 + at(pos++) : 40.0;
        input.widths.push_back(w);
        input.heights.push_back(28.0);
    }
    while (n > 0 && pos + 1 < bytes.size() && input.edges.size() < 4000) {
        input.edges.emplace_back(uint32_t(at(pos) % n), uint32_t(at(pos + 1) % n));
        pos += 2;
    }

    const GraphLayout layout = layoutGraph(input);
    require(layout.nodes.size() == n, "node count changed");
    std::vector<std::pair<uint32_t, uint32_t>> kept;
    for (const auto& e : input.edges)
        if (e.first != e.second)
            kept.push_back(e);
    require(layout.edges.size() == kept.size(), "edge count is not input minus self loops");

    constexpr double eps = 1e-6;
    require(finite(layout.width) && finite(layout.height) && layout.width >= 0 &&
                layout.height >= 0,
            "bounding box is not finite");
    std::map<int, std::vector<size_t>> byRank;
    for (size_t i = 0; i < n; ++i) {
        const LayoutNode& v = layout.nodes[i];
        require(finite(v.x) && finite(v.y), "node position is not finite");
        require(v.x - v.width / 2 >= -eps && v.x + v.width / 2 <= layout.width + eps &&
                    v.y - v.height / 2 >= -eps && v.y + v.height / 2 <= layout.height + eps,
                "node outside the bounding box");
        byRank[v.rank].push_back(i);
    }
    // Nodes of one rank share a y and do not overlap.
    for (auto& [rank, members] : byRank) {
        std::sort(members.begin(), members.end(),
                  [&](size_t a, size_t b) { return layout.nodes[a].x < layout.nodes[b].x; });
        for (size_t k = 0; k + 1 < members.size(); ++k) {
            const LayoutNode& a = layout.nodes[members[k]];
            const LayoutNode& b = layout.nodes[members[k + 1]];
            require(a.x + a.width / 2 <= b.x - b.width / 2 + eps, "nodes of one rank overlap");
        }
    }
    for (size_t k = 0; k < kept.size(); ++k) {
        const LayoutEdge& e = layout.edges[k];
        require(e.from == kept[k].first && e.to == kept[k].second, "edges out of input order");
        const LayoutNode& a = layout.nodes[e.from];
        const LayoutNode& b = layout.nodes[e.to];
        // Forward edges go down; an edge reversed to break a cycle goes up.
        if (!e.reversed)
            require(b.rank > a.rank && b.y > a.y, "a forward edge does not go down");
        else
            require(b.rank < a.rank && b.y < a.y, "a reversed edge does not go up");
        require(e.points.size() >= 2, "edge route has fewer than two points");
        for (const auto& [x, y] : e.points)
            require(finite(x) && finite(y), "edge route point is not finite");
    }
    require(layout.crossings == countCrossings(layout), "reported crossings != countCrossings");

    // Deterministic: the same input gives the same layout (small graphs
    // only: a second run halves the executions per second).
    if (n > 48)
        return;
    const GraphLayout again = layoutGraph(input);
    require(again.crossings == layout.crossings, "crossings differ between two runs");
    for (size_t i = 0; i < n; ++i)
        require(again.nodes[i].x == layout.nodes[i].x && again.nodes[i].y == layout.nodes[i].y,
                "positions differ between two runs");
}

} // namespace fuzzchecks
