#pragma once

// Private to the layered layout (graphlayout.cpp and the layout*.cpp
// phases): the proper layered graph the phases share, as flat arrays indexed
// by node number so 100k-node graphs stay cache-friendly.

#include "ckptscope/layout/graphlayout.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace ckptscope::layout {

using EdgeList = std::vector<std::pair<uint32_t, uint32_t>>;

// Phase 1 (layoutacyclic.cpp): which edges to reverse so the graph becomes
// acyclic (Eades–Lin–Smyth greedy order). No self loops in `edges`.
std::vector<char> feedbackEdges(uint32_t nodeCount, const EdgeList& edges);

// Phase 2 (layoutranking.cpp): ranks of an acyclic graph so every edge goes
// down at least one rank, without empty ranks. Longest path, then nodes (with
// the successors in their way) moved down while that shortens the edges.
std::vector<int> assignRanks(uint32_t nodeCount, const EdgeList& dagEdges);

// An adjacency entry: the neighbour, the segment joining them and the number
// of input edges it carries (the weight is here, not only in the segment, so
// sweeps read it without a random access).
struct Adjacent {
    uint32_t node;
    uint32_t segment;
    uint32_t weight;
};

// Every edge cut into segments between adjacent ranks by dummy nodes. Real
// nodes are 0..realCount-1 and dummies follow, each group numbered rank by
// rank, so a sweep over a rank touches compact ranges of the arrays.
struct LayeredGraph {
    uint32_t realCount = 0;
    std::vector<int> rank;
    std::vector<double> width; // 0 for dummies
    // Segments join rank r to r+1.
    std::vector<uint32_t> segUpper, segLower;
    // Compressed adjacency: up[upStart[v]..upStart[v+1]) are v's neighbours
    // in rank(v)-1, down[...] those in rank(v)+1.
    std::vector<uint32_t> upStart, downStart;
    std::vector<Adjacent> up, down;
    // Current order: order[rankStart[r]..rankStart[r+1]) is rank r from left
    // to right; pos[v] is v's index within its rank.
    std::vector<uint32_t> rankStart, order, pos;

    uint32_t nodeCount() const { return uint32_t(rank.size()); }
    uint32_t rankCount() const { return uint32_t(rankStart.size()) - 1; }
    uint32_t rankSize(uint32_t r) const { return rankStart[r + 1] - rankStart[r]; }
    bool isDummy(uint32_t v) const { return v >= realCount; }
};

// Phase 3 (layoutordering.cpp): initial order by depth-first search, then
// median sweeps with adjacent swaps; keeps the best order found and returns
// its crossing count. Reports progress in [from, to].
uint64_t reduceCrossings(LayeredGraph& g, const LayoutOptions& options, double from, double to);
// Crossings of the current order, summed over adjacent rank pairs (weighted
// by segment multiplicity), by the Barth–Jünger–Mutzel accumulator tree.
uint64_t countLayeredCrossings(const LayeredGraph& g);

// Phase 4 (layoutcoordinates.cpp): x centres by Brandes–Köpf (four
// alignments and their combinations, the straightest kept); keeps the order,
// never closer than widths plus nodeSeparation.
std::vector<double> assignCoordinates(LayeredGraph& g, const LayoutOptions& options);

// Smallest distance between the centres of neighbours a (left) and b.
inline double separation(const LayeredGraph& g, uint32_t a, uint32_t b, double nodeSeparation) {
    // At least 1 so no two nodes of a rank ever share an x (crossing counts
    // from positions rely on it).
    const double d = (g.width[a] + g.width[b]) / 2 + nodeSeparation;
    return d < 1 ? 1 : d;
}

} // namespace ckptscope::layout
