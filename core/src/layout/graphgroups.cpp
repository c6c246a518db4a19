// Collapse by structure: bands of ranks, keys within a band.
#include "ckptscope/layout/graphgroups.h"

#include "layout/layoutinternal.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace ckptscope {

namespace {

// Groups with bands of h ranks, counted from the distinct (key, rank) pairs
// sorted by key then rank: one pass, no hashing, so trying a dozen band
// heights costs less than the ranking.
uint64_t groupsWith(const std::vector<std::pair<uint32_t, int>>& keyRanks, int h) {
    uint64_t groups = 0;
    for (size_t i = 0; i < keyRanks.size(); ++i)
        if (i == 0 || keyRanks[i].first != keyRanks[i - 1].first ||
            keyRanks[i].second / h != keyRanks[i - 1].second / h)
            ++groups;
    return groups;
}

int bandHeight(const std::vector<int>& rank, const std::vector<uint32_t>& keys,
               uint32_t maxGroups) {
    std::vector<std::pair<uint32_t, int>> keyRanks(rank.size());
    for (size_t v = 0; v < rank.size(); ++v)
        keyRanks[v] = {keys[v], rank[v]};
    std::sort(keyRanks.begin(), keyRanks.end());
    keyRanks.erase(std::unique(keyRanks.begin(), keyRanks.end()), keyRanks.end());
    const uint64_t limit = std::max<uint32_t>(maxGroups, 1);
    int h = 1;
    const int maxRank = rank.empty() ? 0 : *std::max_element(rank.begin(), rank.end());
    while (h <= maxRank && groupsWith(keyRanks, h) > limit)
        h *= 2;
    // The narrowest bands in (h/2, h] that still fit: more, smaller groups.
    int lo = h / 2 + 1, hi = h;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (groupsWith(keyRanks, mid) <= limit)
            hi = mid;
        else
            lo = mid + 1;
    }
    return groupsWith(keyRanks, hi) <= limit ? hi : h;
}

} // namespace

uint32_t NodeGrouping::bandCount() const {
    return groupBand.empty() ? 0 : groupBand.back() + 1;
}

NodeGrouping groupByStructure(uint32_t nodeCount,
                              const std::vector<std::pair<uint32_t, uint32_t>>& edges,
                              const std::vector<uint32_t>& keys, const GroupingOptions& options) {
    if (keys.size() != nodeCount)
        throw std::invalid_argument("graph grouping: " + std::to_string(nodeCount) + " nodes but " +
                                    std::to_string(keys.size()) + " keys");
    for (const auto& [a, b] : edges)
        if (a >= nodeCount || b >= nodeCount || a == b)
            throw std::invalid_argument("graph grouping: edge [" + std::to_string(a) + " → " +
                                        std::to_string(b) +
                                        "] is a self loop or names a node "
                                        "beyond " +
                                        std::to_string(nodeCount));
    NodeGrouping g;
    // The ranks the layered drawing would give: cycles broken the same way.
    g.reversed = layout::feedbackEdges(nodeCount, edges);
    layout::EdgeList dag(edges);
    for (size_t e = 0; e < dag.size(); ++e)
        if (g.reversed[e])
            std::swap(dag[e].first, dag[e].second);
    g.rank = layout::assignRanks(nodeCount, dag);
    const int h = bandHeight(g.rank, keys, options.maxGroups);
    g.bandRanks = uint32_t(h);

    std::vector<uint32_t> order(nodeCount);
    std::iota(order.begin(), order.end(), 0u);
    auto groupKey = [&](uint32_t v) { return std::pair(g.rank[v] / h, keys[v]); };
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        const auto ka = groupKey(a), kb = groupKey(b);
        if (ka != kb)
            return ka < kb;
        return g.rank[a] != g.rank[b] ? g.rank[a] < g.rank[b] : a < b;
    });
    g.groupOf.assign(nodeCount, 0);
    g.members = order;
    for (uint32_t i = 0; i < nodeCount; ++i) {
        const uint32_t v = order[i];
        if (i == 0 || groupKey(v) != groupKey(order[i - 1])) {
            g.memberStart.push_back(i);
            g.groupBand.push_back(uint32_t(g.rank[v] / h));
            g.groupKey.push_back(keys[v]);
        }
        g.groupOf[v] = uint32_t(g.groupBand.size() - 1);
    }
    g.memberStart.push_back(nodeCount);

    std::vector<uint64_t> pairs;
    pairs.reserve(edges.size());
    for (const auto& [a, b] : edges)
        if (g.groupOf[a] != g.groupOf[b])
            pairs.push_back(uint64_t(g.groupOf[a]) << 32 | g.groupOf[b]);
    std::sort(pairs.begin(), pairs.end());
    for (size_t i = 0; i < pairs.size(); ++i) {
        if (i == 0 || pairs[i] != pairs[i - 1])
            g.bundles.push_back({uint32_t(pairs[i] >> 32), uint32_t(pairs[i]), 0});
        ++g.bundles.back().count;
    }
    return g;
}

std::string structureScope(const ComputationNode& node) {
    for (const char* key : {"scope", "layer"})
        if (const auto it = node.metadata.find(key); it != node.metadata.end())
            return it->second;
    const auto it = node.metadata.find("name");
    if (it == node.metadata.end())
        return {};
    const size_t cut = it->second.find_last_of("./");
    return cut == std::string::npos ? it->second : it->second.substr(0, cut);
}

} // namespace ckptscope
