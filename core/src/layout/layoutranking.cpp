// Ranking: longest path from the sources (O(V + E)), then cheap moves that
// shorten edges, since every rank an edge skips costs a dummy node (more
// crossings, more work later). Network simplex (dot's ranking) finds the
// minimum total edge length, but its pivot count is unbounded on big graphs.
// Instead, as in "promotion" layering (Nikolov and Tarassov 2006), a node
// moves one rank down together with the successors it would collide with,
// whenever that shortens the edges in total; groups are capped so a pass
// stays linear.
#include "layout/layoutinternal.h"

#include <algorithm>
#include <climits>

namespace ckptscope::layout {

namespace {

constexpr size_t kMaxGroup = 64; // nodes moved together, at most
constexpr int kMaxPasses = 8;

class Ranking {
public:
    Ranking(uint32_t n, const EdgeList& edges)
        : m_outStart(n + 1, 0), m_inStart(n + 1, 0), m_rank(n, 0), m_inGroup(n, 0) {
        for (const auto& [a, b] : edges) {
            ++m_outStart[a + 1];
            ++m_inStart[b + 1];
        }
        for (uint32_t v = 0; v < n; ++v) {
            m_outStart[v + 1] += m_outStart[v];
            m_inStart[v + 1] += m_inStart[v];
        }
        m_out.resize(edges.size());
        std::vector<uint32_t> fill(m_outStart.begin(), m_outStart.end() - 1);
        for (const auto& [a, b] : edges)
            m_out[fill[a]++] = b;
    }

    std::vector<int> run() {
        longestPath();
        // Consumers first: moving a node down only makes room for its
        // producers, handled later in the pass.
        for (int pass = 0; pass < kMaxPasses; ++pass) {
            bool moved = false;
            for (size_t i = m_topo.size(); i-- > 0;) {
                const uint32_t v = m_topo[i];
                moved |= sinkAlone(v);
                while (demote(v))
                    moved = true;
            }
            if (!moved)
                break;
        }
        closeGaps();
        return std::move(m_rank);
    }

private:
    uint32_t outDeg(uint32_t v) const { return m_outStart[v + 1] - m_outStart[v]; }
    uint32_t inDeg(uint32_t v) const { return m_inStart[v + 1] - m_inStart[v]; }

    // Kahn order; each node one rank below its lowest producer.
    void longestPath() {
        const uint32_t n = uint32_t(m_rank.size());
        std::vector<uint32_t> remaining(n);
        for (uint32_t v = 0; v < n; ++v) {
            remaining[v] = inDeg(v);
            if (remaining[v] == 0)
                m_topo.push_back(v);
        }
        for (size_t head = 0; head < m_topo.size(); ++head) {
            const uint32_t v = m_topo[head];
            for (uint32_t k = m_outStart[v]; k < m_outStart[v + 1]; ++k) {
                const uint32_t w = m_out[k];
                m_rank[w] = std::max(m_rank[w], m_rank[v] + 1);
                if (--remaining[w] == 0)
                    m_topo.push_back(w);
            }
        }
    }

    // A node with more outgoing than incoming edges (sources: weights,
    // constants) goes straight down to just above its nearest consumer,
    // however far: longest path parks them all at the top.
    bool sinkAlone(uint32_t v) {
        if (outDeg(v) <= inDeg(v))
            return false;
        int nearest = INT_MAX;
        for (uint32_t k = m_outStart[v]; k < m_outStart[v + 1]; ++k)
            nearest = std::min(nearest, m_rank[m_out[k]]);
        if (nearest - 1 <= m_rank[v])
            return false;
        m_rank[v] = nearest - 1;
        return true;
    }

    // Moves v one rank down with every successor that would then share a
    // rank with its producer (transitively). Kept when the edges get shorter
    // in total (each moved node lengthens its incoming edges by one and
    // shortens its outgoing ones; edges inside the group keep their length),
    // undone otherwise or when the group outgrows kMaxGroup.
    bool demote(uint32_t v) {
        if (outDeg(v) == 0)
            return false;
        m_group.clear();
        m_group.push_back(v);
        m_inGroup[v] = 1;
        int64_t change = 0;
        bool tooBig = false;
        for (size_t i = 0; i < m_group.size() && !tooBig; ++i) {
            const uint32_t x = m_group[i];
            change += int64_t(inDeg(x)) - int64_t(outDeg(x));
            for (uint32_t k = m_outStart[x]; k < m_outStart[x + 1]; ++k) {
                const uint32_t w = m_out[k];
                if (!m_inGroup[w] && m_rank[w] == m_rank[x] + 1) {
                    if (m_group.size() == kMaxGroup) {
                        tooBig = true;
                        break;
                    }
                    m_inGroup[w] = 1;
                    m_group.push_back(w);
                }
            }
        }
        // Edges between group members were counted once in and once out.
        const bool keep = !tooBig && change < 0;
        for (const uint32_t x : m_group) {
            m_inGroup[x] = 0;
            if (keep)
                ++m_rank[x];
        }
        return keep;
    }

    // Renumbers to close empty ranks (order kept, so edges still go down).
    void closeGaps() {
        int maxRank = 0;
        for (int r : m_rank)
            maxRank = std::max(maxRank, r);
        std::vector<int> used(size_t(maxRank) + 1, 0);
        for (int r : m_rank)
            used[size_t(r)] = 1;
        int next = 0;
        for (int& u : used)
            u = u ? next++ : -1;
        for (int& r : m_rank)
            r = used[size_t(r)];
    }

    std::vector<uint32_t> m_outStart, m_inStart, m_out, m_topo, m_group;
    std::vector<int> m_rank;
    std::vector<char> m_inGroup;
};

} // namespace

std::vector<int> assignRanks(uint32_t nodeCount, const EdgeList& dagEdges) {
    return Ranking(nodeCount, dagEdges).run();
}

} // namespace ckptscope::layout
