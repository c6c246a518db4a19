// Cycle breaking: the greedy vertex order of Eades, Lin and Smyth (1993),
// O(V + E) with degree buckets. Edges pointing backwards in the order are
// reversed. It removes sinks and sources first, so a DAG keeps every edge,
// and inside cycles it tends to reverse fewer edges than a DFS back-edge
// set. FIFO buckets filled in index order make it deterministic.
#include "layout/layoutinternal.h"

#include <algorithm>

namespace ckptscope::layout {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

class GreedyOrder {
public:
    GreedyOrder(uint32_t n, const EdgeList& edges)
        : m_outStart(n + 1, 0), m_inStart(n + 1, 0), m_outDeg(n, 0), m_inDeg(n, 0),
          m_bucketOf(n, kNone), m_prev(n, kNone), m_next(n, kNone), m_removed(n, 0) {
        for (const auto& [a, b] : edges) {
            ++m_outStart[a + 1];
            ++m_inStart[b + 1];
        }
        uint32_t maxDeg = 0;
        for (uint32_t v = 0; v < n; ++v) {
            m_outDeg[v] = m_outStart[v + 1];
            m_inDeg[v] = m_inStart[v + 1];
            maxDeg = std::max({maxDeg, m_outDeg[v], m_inDeg[v]});
            m_outStart[v + 1] += m_outStart[v];
            m_inStart[v + 1] += m_inStart[v];
        }
        m_out.resize(edges.size());
        m_in.resize(edges.size());
        std::vector<uint32_t> outFill(m_outStart.begin(), m_outStart.end() - 1);
        std::vector<uint32_t> inFill(m_inStart.begin(), m_inStart.end() - 1);
        for (const auto& [a, b] : edges) {
            m_out[outFill[a]++] = b;
            m_in[inFill[b]++] = a;
        }
        // Buckets: 0 sinks, 1 sources, then out-in degree from -maxDeg.
        m_offset = int64_t(maxDeg);
        m_head.assign(2 + 2 * size_t(maxDeg) + 1, kNone);
        m_tail.assign(m_head.size(), kNone);
        m_maxBucket = 2;
        for (uint32_t v = 0; v < n; ++v)
            place(v);
    }

    // Vertex sequence: s1 (sources, greedy picks) then s2 reversed (sinks).
    std::vector<uint32_t> run() {
        const uint32_t n = uint32_t(m_outDeg.size());
        std::vector<uint32_t> s1, s2;
        s1.reserve(n);
        for (uint32_t done = 0; done < n; ++done) {
            uint32_t v;
            if (m_head[0] != kNone) {
                v = m_head[0];
                s2.push_back(v);
            } else if (m_head[1] != kNone) {
                v = m_head[1];
                s1.push_back(v);
            } else {
                while (m_head[m_maxBucket] == kNone)
                    --m_maxBucket;
                v = m_head[m_maxBucket];
                s1.push_back(v);
            }
            remove(v);
        }
        s1.insert(s1.end(), s2.rbegin(), s2.rend());
        return s1;
    }

private:
    size_t bucketFor(uint32_t v) const {
        if (m_outDeg[v] == 0)
            return 0;
        if (m_inDeg[v] == 0)
            return 1;
        return size_t(2 + int64_t(m_outDeg[v]) - int64_t(m_inDeg[v]) + m_offset);
    }

    void place(uint32_t v) {
        const size_t b = bucketFor(v);
        m_bucketOf[v] = uint32_t(b);
        m_prev[v] = m_tail[b];
        m_next[v] = kNone;
        if (m_tail[b] != kNone)
            m_next[m_tail[b]] = v;
        else
            m_head[b] = v;
        m_tail[b] = v;
        if (b >= 2 && b > m_maxBucket)
            m_maxBucket = b;
    }

    void unlink(uint32_t v) {
        const size_t b = m_bucketOf[v];
        if (m_prev[v] != kNone)
            m_next[m_prev[v]] = m_next[v];
        else
            m_head[b] = m_next[v];
        if (m_next[v] != kNone)
            m_prev[m_next[v]] = m_prev[v];
        else
            m_tail[b] = m_prev[v];
    }

    void remove(uint32_t v) {
        unlink(v);
        m_removed[v] = 1;
        for (uint32_t i = m_outStart[v]; i < m_outStart[v + 1]; ++i) {
            const uint32_t w = m_out[i];
            if (!m_removed[w]) {
                unlink(w);
                --m_inDeg[w];
                place(w);
            }
        }
        for (uint32_t i = m_inStart[v]; i < m_inStart[v + 1]; ++i) {
            const uint32_t u = m_in[i];
            if (!m_removed[u]) {
                unlink(u);
                --m_outDeg[u];
                place(u);
            }
        }
    }

    std::vector<uint32_t> m_outStart, m_inStart, m_out, m_in;
    std::vector<uint32_t> m_outDeg, m_inDeg;
    std::vector<uint32_t> m_bucketOf, m_prev, m_next, m_head, m_tail;
    std::vector<char> m_removed;
    int64_t m_offset = 0;
    size_t m_maxBucket = 2;
};

} // namespace

std::vector<char> feedbackEdges(uint32_t nodeCount, const EdgeList& edges) {
    const std::vector<uint32_t> sequence = GreedyOrder(nodeCount, edges).run();
    std::vector<uint32_t> place(nodeCount);
    for (uint32_t i = 0; i < nodeCount; ++i)
        place[sequence[i]] = i;
    std::vector<char> reversed(edges.size(), 0);
    for (size_t i = 0; i < edges.size(); ++i)
        reversed[i] = place[edges[i].first] > place[edges[i].second];
    return reversed;
}

} // namespace ckptscope::layout
