// Ranking: longest path from the sources (O(V + E)), then one cheap pass
// that shortens edges. Network simplex (dot's ranking) gives the minimum
// total edge length but is the part of dot that does not scale; the greedy
// pass below fixes the common waste of longest path: sources (weights,
// constants) and fan-out nodes parked at the top, far above their consumers.
#include "layoutinternal.h"

#include <algorithm>
#include <climits>

namespace ckptscope::layout {

std::vector<int> assignRanks(uint32_t nodeCount, const EdgeList& dagEdges) {
    std::vector<uint32_t> outStart(nodeCount + 1, 0), inDeg(nodeCount, 0);
    for (const auto& [a, b] : dagEdges) {
        ++outStart[a + 1];
        ++inDeg[b];
    }
    for (uint32_t v = 0; v < nodeCount; ++v)
        outStart[v + 1] += outStart[v];
    std::vector<uint32_t> out(dagEdges.size());
    {
        std::vector<uint32_t> fill(outStart.begin(), outStart.end() - 1);
        for (const auto& [a, b] : dagEdges)
            out[fill[a]++] = b;
    }

    // Longest path in Kahn order; `topo` doubles as the queue.
    std::vector<int> rank(nodeCount, 0);
    std::vector<uint32_t> topo;
    topo.reserve(nodeCount);
    std::vector<uint32_t> remaining = inDeg;
    for (uint32_t v = 0; v < nodeCount; ++v)
        if (remaining[v] == 0)
            topo.push_back(v);
    for (size_t head = 0; head < topo.size(); ++head) {
        const uint32_t v = topo[head];
        for (uint32_t i = outStart[v]; i < outStart[v + 1]; ++i) {
            const uint32_t w = out[i];
            rank[w] = std::max(rank[w], rank[v] + 1);
            if (--remaining[w] == 0)
                topo.push_back(w);
        }
    }

    // Consumers first: a node with more outgoing than incoming edges gets
    // shorter edges in total when it moves down to just above its nearest
    // consumer. Moving it only makes room for its producers, handled later.
    for (size_t i = topo.size(); i-- > 0;) {
        const uint32_t v = topo[i];
        const uint32_t outDeg = outStart[v + 1] - outStart[v];
        if (outDeg <= inDeg[v])
            continue;
        int nearest = INT_MAX;
        for (uint32_t k = outStart[v]; k < outStart[v + 1]; ++k)
            nearest = std::min(nearest, rank[out[k]]);
        rank[v] = std::max(rank[v], nearest - 1);
    }

    // Renumber to close empty ranks (order preserved, so edges still go down).
    int maxRank = 0;
    for (int r : rank)
        maxRank = std::max(maxRank, r);
    std::vector<int> used(size_t(maxRank) + 1, 0);
    for (int r : rank)
        used[size_t(r)] = 1;
    int next = 0;
    for (int& u : used)
        u = u ? next++ : -1;
    for (int& r : rank)
        r = used[size_t(r)];
    return rank;
}

} // namespace ckptscope::layout
