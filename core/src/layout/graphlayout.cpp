// Layered (Sugiyama-style) layout: the pipeline, dummy nodes, y coordinates
// and edge routes. The phases live in layoutacyclic.cpp, layoutranking.cpp,
// layoutordering.cpp and layoutcoordinates.cpp.
//
// Why not a packaged library: Graphviz dot takes ~1.2 s for a 2 000-node
// transformer graph and did not finish a 10 000-node one in 500 s, and OGDF
// is not packaged in Debian 12. Each phase here is linear or O(E log V) per
// sweep on flat arrays indexed by node number: a 100k-node transformer graph
// lays out in a fraction of a second.
#include "ckptscope/layout/graphlayout.h"

#include "layout/layoutinternal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace ckptscope {

namespace {

using namespace layout;

// A dummy costs ~140 bytes at the peak (measured: 611 MB for 4.4M): refuse
// graphs whose long edges would need more than ~1.1 GB rather than run out
// of memory.
constexpr uint64_t kMaxDummies = 8'000'000;

// Parallel edges (also a→b with a reversed b→a) are laid out once, as one
// chain of dummies carrying their count as weight; the chain's dummies are
// bends[firstBend..], one per rank crossed.
struct MergedEdge {
    uint32_t upper, lower, weight, firstBend;
};

void validate(const LayoutInput& input) {
    const size_t n = input.widths.size();
    if (input.heights.size() != n)
        throw std::invalid_argument("graph layout: " + std::to_string(n) + " widths but " +
                                    std::to_string(input.heights.size()) + " heights");
    for (size_t v = 0; v < n; ++v)
        if (!std::isfinite(input.widths[v]) || !std::isfinite(input.heights[v]) ||
            input.widths[v] < 0 || input.heights[v] < 0)
            throw std::invalid_argument("graph layout: node " + std::to_string(v) +
                                        " has no finite, non-negative size");
    if (n >= std::numeric_limits<uint32_t>::max() / 2)
        throw std::length_error("graph layout: too many nodes");
    for (size_t i = 0; i < input.edges.size(); ++i) {
        const auto& [a, b] = input.edges[i];
        if (a >= n || b >= n)
            throw std::invalid_argument("graph layout: edge " + std::to_string(i) + " [" +
                                        std::to_string(a) + " → " + std::to_string(b) +
                                        "] names a node beyond " + std::to_string(n));
    }
}

void linkSegments(LayeredGraph& g, const std::vector<uint32_t>& segWeight);

// Real nodes renumbered rank by rank (layered[v] for input node v), dummies
// after them, also rank by rank: a sweep over a rank then reads compact
// ranges of every array instead of jumping about (2-4x faster on 100k-node
// graphs).
LayeredGraph buildLayered(const LayoutInput& input, const std::vector<int>& ranks,
                          std::vector<MergedEdge>& merged, std::vector<uint32_t>& layered,
                          std::vector<uint32_t>& bends) {
    const uint32_t n = uint32_t(input.widths.size());
    int maxRank = -1;
    for (int r : ranks)
        maxRank = std::max(maxRank, r);
    {
        std::vector<uint32_t> first(size_t(maxRank) + 2, 0);
        for (int r : ranks)
            ++first[size_t(r) + 1];
        for (size_t r = 1; r < first.size(); ++r)
            first[r] += first[r - 1];
        layered.resize(n);
        for (uint32_t v = 0; v < n; ++v)
            layered[v] = first[size_t(ranks[v])]++;
    }
    // Dummies numbered rank by rank: dummyStart[r] is the first of rank r.
    std::vector<uint64_t> dummyStart(size_t(maxRank) + 2, 0);
    uint64_t segments = 0;
    for (const MergedEdge& e : merged) {
        for (int r = ranks[e.upper] + 1; r < ranks[e.lower]; ++r)
            ++dummyStart[size_t(r) + 1];
        segments += uint64_t(ranks[e.lower] - ranks[e.upper]);
    }
    for (size_t r = 1; r < dummyStart.size(); ++r)
        dummyStart[r] += dummyStart[r - 1];
    const uint64_t dummies = dummyStart.back();
    if (dummies > kMaxDummies)
        throw std::length_error("graph layout: edges spanning many ranks would need " +
                                std::to_string(dummies) + " bend points (at most " +
                                std::to_string(kMaxDummies) + " are laid out)");
    LayeredGraph g;
    g.realCount = n;
    const uint32_t total = n + uint32_t(dummies);
    g.rank.assign(total, 0);
    g.width.assign(total, 0.0);
    for (uint32_t v = 0; v < n; ++v) {
        g.rank[layered[v]] = ranks[v];
        g.width[layered[v]] = input.widths[v];
    }
    g.segUpper.reserve(segments);
    g.segLower.reserve(segments);
    std::vector<uint32_t> segWeight;
    segWeight.reserve(segments);
    bends.reserve(dummies);
    for (MergedEdge& e : merged) {
        e.firstBend = uint32_t(bends.size());
        uint32_t prev = layered[e.upper];
        for (int r = ranks[e.upper] + 1; r <= ranks[e.lower]; ++r) {
            uint32_t v = layered[e.lower];
            if (r < ranks[e.lower]) {
                v = n + uint32_t(dummyStart[size_t(r)]++);
                bends.push_back(v);
            }
            g.rank[v] = r;
            g.segUpper.push_back(prev);
            g.segLower.push_back(v);
            segWeight.push_back(e.weight);
            prev = v;
        }
    }
    linkSegments(g, segWeight);
    g.rankStart.assign(size_t(maxRank) + 2, 0);
    for (int r : g.rank)
        ++g.rankStart[size_t(r) + 1];
    for (size_t r = 1; r < g.rankStart.size(); ++r)
        g.rankStart[r] += g.rankStart[r - 1];
    g.order.assign(total, 0); // filled by the ordering phase
    g.pos.assign(total, 0);
    return g;
}

// The up and down neighbours of every node from the segments.
void linkSegments(LayeredGraph& g, const std::vector<uint32_t>& segWeight) {
    const uint32_t total = uint32_t(g.rank.size());
    g.upStart.assign(total + 1, 0);
    g.downStart.assign(total + 1, 0);
    for (size_t s = 0; s < g.segUpper.size(); ++s) {
        ++g.downStart[g.segUpper[s] + 1];
        ++g.upStart[g.segLower[s] + 1];
    }
    for (uint32_t v = 0; v < total; ++v) {
        g.upStart[v + 1] += g.upStart[v];
        g.downStart[v + 1] += g.downStart[v];
    }
    g.up.resize(g.segUpper.size());
    g.down.resize(g.segUpper.size());
    {
        std::vector<uint32_t> upFill(g.upStart.begin(), g.upStart.end() - 1);
        std::vector<uint32_t> downFill(g.downStart.begin(), g.downStart.end() - 1);
        for (uint32_t s = 0; s < uint32_t(g.segUpper.size()); ++s) {
            g.down[downFill[g.segUpper[s]]++] = {g.segLower[s], s, segWeight[s]};
            g.up[upFill[g.segLower[s]]++] = {g.segUpper[s], s, segWeight[s]};
        }
    }
    // Neighbours by number: real nodes before dummies, so the depth-first
    // initial order puts long edges consistently to the right of the nodes
    // they skip. (Skip edges changing sides from one block to the next make
    // the coordinate phase lean.)
    auto byNode = [](const Adjacent& a, const Adjacent& b) { return a.node < b.node; };
    for (uint32_t v = 0; v < total; ++v) {
        std::sort(g.up.begin() + g.upStart[v], g.up.begin() + g.upStart[v + 1], byNode);
        std::sort(g.down.begin() + g.downStart[v], g.down.begin() + g.downStart[v + 1], byNode);
    }
}

// Orients the edges (reversed ones point down too), then merges parallel
// ones; mergedOf[i] is the merged edge of edge i.
std::vector<MergedEdge> mergeEdges(const EdgeList& edges, const std::vector<char>& reversed,
                                   std::vector<uint32_t>& mergedOf) {
    std::vector<std::pair<uint64_t, uint32_t>> keyed(edges.size());
    for (uint32_t i = 0; i < uint32_t(edges.size()); ++i) {
        const auto [a, b] = reversed[i] ? std::pair(edges[i].second, edges[i].first) : edges[i];
        keyed[i] = {uint64_t(a) << 32 | b, i};
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<MergedEdge> merged;
    mergedOf.resize(edges.size());
    for (const auto& [key, i] : keyed) {
        if (merged.empty() || (uint64_t(merged.back().upper) << 32 | merged.back().lower) != key)
            merged.push_back({uint32_t(key >> 32), uint32_t(key), 0, 0});
        ++merged.back().weight;
        mergedOf[i] = uint32_t(merged.size() - 1);
    }
    return merged;
}

} // namespace

GraphLayout layoutGraph(const LayoutInput& input, const LayoutOptions& options) {
    validate(input);
    const uint32_t n = uint32_t(input.widths.size());
    GraphLayout result;
    options.throwIfCancelled();
    options.report(0);

    // Self loops are left out of the result; keep each other edge's index.
    EdgeList edges;
    edges.reserve(input.edges.size());
    for (const auto& e : input.edges)
        if (e.first != e.second)
            edges.push_back(e);
    const std::vector<char> reversed = feedbackEdges(n, edges);
    options.throwIfCancelled();
    options.report(0.05);

    std::vector<uint32_t> mergedOf;
    std::vector<MergedEdge> merged = mergeEdges(edges, reversed, mergedOf);
    EdgeList dag(merged.size());
    for (size_t m = 0; m < merged.size(); ++m)
        dag[m] = {merged[m].upper, merged[m].lower};
    const std::vector<int> ranks = assignRanks(n, dag);
    dag = {};
    options.throwIfCancelled();
    options.report(0.1);

    std::vector<uint32_t> layered, bends;
    LayeredGraph g = buildLayered(input, ranks, merged, layered, bends);
    options.throwIfCancelled();
    options.report(0.15);
    result.crossings = g.nodeCount() ? reduceCrossings(g, options, 0.15, 0.8) : 0;
    options.throwIfCancelled();
    const std::vector<double> x = assignCoordinates(g, options);
    options.throwIfCancelled();
    options.report(0.95);

    // y from ranks: each rank as tall as its tallest node.
    std::vector<double> rankHeight(g.rankCount(), 0.0), rankY(g.rankCount(), 0.0);
    for (uint32_t v = 0; v < n; ++v)
        rankHeight[size_t(ranks[v])] = std::max(rankHeight[size_t(ranks[v])], input.heights[v]);
    for (uint32_t r = 0; r < g.rankCount(); ++r)
        rankY[r] = r == 0 ? rankHeight[0] / 2
                          : rankY[r - 1] + rankHeight[r - 1] / 2 + options.rankSeparation +
                                rankHeight[r] / 2;
    double left = std::numeric_limits<double>::infinity(), right = -left;
    for (uint32_t v = 0; v < g.nodeCount(); ++v) {
        left = std::min(left, x[v] - g.width[v] / 2);
        right = std::max(right, x[v] + g.width[v] / 2);
    }
    if (g.nodeCount() == 0)
        left = right = 0;
    result.width = right - left;
    result.height = g.rankCount() ? rankY.back() + rankHeight.back() / 2 : 0;

    result.nodes.resize(n);
    for (uint32_t v = 0; v < n; ++v) {
        LayoutNode& node = result.nodes[v];
        node.x = x[layered[v]] - left;
        node.y = rankY[size_t(ranks[v])];
        node.width = input.widths[v];
        node.height = input.heights[v];
        node.rank = ranks[v];
    }

    // Routes: bottom centre of the upper end, the dummies, top centre of the
    // lower end; a reversed edge runs the same points backwards.
    result.edges.resize(edges.size());
    for (size_t i = 0; i < edges.size(); ++i) {
        const MergedEdge& m = merged[mergedOf[i]];
        LayoutEdge& e = result.edges[i];
        e.from = edges[i].first;
        e.to = edges[i].second;
        e.reversed = reversed[i];
        const LayoutNode& upper = result.nodes[m.upper];
        const LayoutNode& lower = result.nodes[m.lower];
        const uint32_t dummies = uint32_t(lower.rank - upper.rank - 1);
        e.points.reserve(dummies + 2);
        e.points.emplace_back(upper.x, upper.y + upper.height / 2);
        for (uint32_t k = m.firstBend; k < m.firstBend + dummies; ++k)
            e.points.emplace_back(x[bends[k]] - left, rankY[size_t(g.rank[bends[k]])]);
        e.points.emplace_back(lower.x, lower.y - lower.height / 2);
        if (e.reversed)
            std::reverse(e.points.begin(), e.points.end());
    }
    options.report(1);
    return result;
}

uint64_t countCrossings(const GraphLayout& layout) {
    // Each route cut into its pieces between adjacent ranks; two pieces in the
    // same gap cross when their left-to-right order at the upper rank is the
    // opposite of the order at the lower rank (a shared end is no crossing).
    // Independent of the ordering phase: positions, a sort and a merge count.
    struct Piece {
        int gap;
        double top, bottom;
        bool operator<(const Piece& o) const {
            return gap != o.gap ? gap < o.gap : top != o.top ? top < o.top : bottom < o.bottom;
        }
    };
    std::vector<Piece> pieces;
    for (const LayoutEdge& e : layout.edges) {
        if (e.from >= layout.nodes.size() || e.to >= layout.nodes.size())
            continue;
        const int rFrom = layout.nodes[e.from].rank, rTo = layout.nodes[e.to].rank;
        const size_t span = size_t(std::abs(rTo - rFrom));
        if (span == 0 || e.points.size() != span + 1)
            continue; // not a route between ranks
        const bool down = rFrom < rTo;
        for (size_t i = 0; i < span; ++i) {
            const auto& a = e.points[down ? i : span - i];
            const auto& b = e.points[down ? i + 1 : span - i - 1];
            pieces.push_back({std::min(rFrom, rTo) + int(i), a.first, b.first});
        }
    }
    std::sort(pieces.begin(), pieces.end());

    // Pairs out of order in `bottom`, strictly, by merge sort.
    std::vector<double> bottoms, buffer;
    uint64_t crossings = 0;
    for (size_t begin = 0; begin < pieces.size();) {
        size_t end = begin;
        bottoms.clear();
        while (end < pieces.size() && pieces[end].gap == pieces[begin].gap)
            bottoms.push_back(pieces[end++].bottom);
        buffer.resize(bottoms.size());
        for (size_t width = 1; width < bottoms.size(); width *= 2) {
            for (size_t lo = 0; lo < bottoms.size(); lo += 2 * width) {
                const size_t mid = std::min(lo + width, bottoms.size());
                const size_t hi = std::min(lo + 2 * width, bottoms.size());
                size_t i = lo, j = mid, k = lo;
                while (i < mid && j < hi) {
                    if (bottoms[j] < bottoms[i]) {
                        crossings += mid - i;
                        buffer[k++] = bottoms[j++];
                    } else {
                        buffer[k++] = bottoms[i++];
                    }
                }
                while (i < mid)
                    buffer[k++] = bottoms[i++];
                while (j < hi)
                    buffer[k++] = bottoms[j++];
            }
            bottoms.swap(buffer);
        }
        begin = end;
    }
    return crossings;
}

namespace {

// Open addressing over views of the graph's keys (unique, in key order): one
// probe or two per lookup and no allocation per id, where an unordered_map
// allocated a node for each of 100k ids and cost a cache miss or two more.
class IdTable {
public:
    explicit IdTable(const std::map<std::string, ComputationNode>& nodes) {
        size_t capacity = 16;
        while (capacity < nodes.size() * 2)
            capacity <<= 1;
        m_mask = capacity - 1;
        m_slots.assign(capacity, kEmpty);
        m_keys.reserve(nodes.size());
        for (const auto& entry : nodes) {
            size_t s = slotOf(entry.first);
            while (m_slots[s] != kEmpty)
                s = (s + 1) & m_mask;
            m_slots[s] = uint32_t(m_keys.size());
            m_keys.push_back(entry.first);
        }
    }
    int64_t find(std::string_view id) const {
        for (size_t s = slotOf(id);; s = (s + 1) & m_mask) {
            const uint32_t i = m_slots[s];
            if (i == kEmpty)
                return -1;
            if (m_keys[i] == id)
                return int64_t(i);
        }
    }

private:
    static constexpr uint32_t kEmpty = UINT32_MAX;
    size_t slotOf(std::string_view id) const { return std::hash<std::string_view>{}(id)&m_mask; }

    std::vector<std::string_view> m_keys;
    std::vector<uint32_t> m_slots;
    size_t m_mask = 0;
};

// The same for edges already taken, keyed by (from << 32 | to).
class PairSet {
public:
    explicit PairSet(size_t expected) {
        size_t capacity = 16;
        while (capacity < expected * 2)
            capacity <<= 1;
        m_mask = capacity - 1;
        m_slots.assign(capacity, kEmpty);
    }
    bool insert(uint64_t key) { // false when already there
        for (size_t s = size_t((key * 0x9E3779B97F4A7C15ull) >> 20) & m_mask;;
             s = (s + 1) & m_mask) {
            if (m_slots[s] == key)
                return false;
            if (m_slots[s] == kEmpty) {
                m_slots[s] = key;
                return true;
            }
        }
    }

private:
    static constexpr uint64_t kEmpty = UINT64_MAX; // no pair of node indices
    std::vector<uint64_t> m_slots;
    size_t m_mask = 0;
};

} // namespace

GraphLayoutInput layoutInputFromGraph(const ComputationGraphStore& graph,
                                      const std::function<double(const ComputationNode&)>& widthOf,
                                      double height) {
    GraphLayoutInput out;
    const size_t n = graph.nodeCount();
    out.ids.reserve(n);
    out.input.widths.reserve(n);
    out.input.heights.assign(n, height);
    for (const auto& [id, node] : graph.nodes()) {
        out.ids.push_back(id);
        out.input.widths.push_back(widthOf(node));
    }
    // A hash of the ids (views into the graph's keys): binary searches over
    // 100k UUID strings cost a cache miss per comparison.
    const IdTable indexOf(graph.nodes());
    PairSet seen(graph.edgeCount());
    for (const auto& [producer, consumer] : graph.edges()) {
        const int64_t a = indexOf.find(producer), b = indexOf.find(consumer);
        if (a < 0 || b < 0 || a == b)
            continue;
        if (seen.insert(uint64_t(a) << 32 | uint64_t(b)))
            out.input.edges.emplace_back(uint32_t(a), uint32_t(b));
    }
    return out;
}

} // namespace ckptscope
