// Crossing reduction: a depth-first initial order, then alternating down and
// up sweeps that sort each rank by the weighted median of its neighbours in
// the rank just fixed (Gansner et al. 1993, as dot does), each followed by
// adjacent swaps that strictly reduce crossings ("transpose"). The number of
// sweeps is bounded (and cut short when they stop paying off) and the best
// order seen is kept. Crossings are counted with the accumulator tree of
// Barth, Jünger and Mutzel (2004): O(E log V) per sweep, where the textbook
// pairwise count is quadratic per rank pair.
#include "layout/layoutinternal.h"

#include <algorithm>

namespace ckptscope::layout {

namespace {

struct PosWeight {
    uint32_t pos;
    uint32_t weight;
    bool operator<(const PosWeight& o) const { return pos < o.pos; }
};

constexpr int kTransposePasses = 4;

class Orderer {
public:
    explicit Orderer(LayeredGraph& g) : m_g(g), m_key(g.nodeCount()), m_local(g.nodeCount()) {}

    // Depth-first from every node without upper neighbours, in index order:
    // a node joins its rank when first reached, so chains and subtrees start
    // out side by side instead of scattered.
    void initialOrder() {
        const uint32_t n = m_g.nodeCount();
        std::vector<uint32_t> fill(m_g.rankStart.begin(), m_g.rankStart.end() - 1);
        std::vector<char> seen(n, 0);
        std::vector<uint32_t> stack;
        for (uint32_t s = 0; s < n; ++s) {
            if (seen[s] || m_g.upStart[s] != m_g.upStart[s + 1])
                continue;
            stack.push_back(s);
            while (!stack.empty()) {
                const uint32_t v = stack.back();
                stack.pop_back();
                if (seen[v])
                    continue;
                seen[v] = 1;
                m_g.order[fill[uint32_t(m_g.rank[v])]++] = v;
                for (uint32_t k = m_g.downStart[v + 1]; k-- > m_g.downStart[v];)
                    if (!seen[m_g.down[k].node])
                        stack.push_back(m_g.down[k].node);
            }
        }
        for (uint32_t r = 0; r < m_g.rankCount(); ++r)
            updatePositions(r);
    }

    // Sorts rank r by the weighted median of its neighbours above (useUpper)
    // or below; nodes without such neighbours keep their places.
    void sortRank(uint32_t r, bool useUpper) {
        m_movable.clear();
        m_slots.clear();
        const uint32_t begin = m_g.rankStart[r], end = m_g.rankStart[r + 1];
        for (uint32_t i = begin; i < end; ++i) {
            const uint32_t v = m_g.order[i];
            gather(v, useUpper, m_nbrs);
            if (m_nbrs.empty())
                continue;
            m_key[v] = weightedMedian(m_nbrs);
            m_movable.push_back(v);
            m_slots.push_back(i);
        }
        // Stable: ties keep their current order, which earlier sweeps chose.
        std::stable_sort(m_movable.begin(), m_movable.end(),
                         [this](uint32_t a, uint32_t b) { return m_key[a] < m_key[b]; });
        for (size_t j = 0; j < m_movable.size(); ++j)
            m_g.order[m_slots[j]] = m_movable[j];
        updatePositions(r);
    }

    // Swaps neighbours of rank r while that strictly lowers the crossings
    // with both adjacent ranks; bounded passes. Returns whether it changed.
    bool transposeRank(uint32_t r) {
        const uint32_t begin = m_g.rankStart[r], end = m_g.rankStart[r + 1];
        if (end - begin < 2)
            return false;
        // Neighbour positions of each node, sorted; they stay valid while
        // only rank r moves.
        m_listStart.assign(size_t(end - begin) * 2 + 1, 0);
        m_lists.clear();
        for (uint32_t i = begin; i < end; ++i) {
            const uint32_t v = m_g.order[i];
            m_local[v] = i - begin;
            for (const bool upper : {true, false}) {
                gather(v, upper, m_nbrs);
                std::sort(m_nbrs.begin(), m_nbrs.end());
                m_lists.insert(m_lists.end(), m_nbrs.begin(), m_nbrs.end());
                m_listStart[size_t(i - begin) * 2 + (upper ? 1 : 2)] = uint32_t(m_lists.size());
            }
        }
        bool changed = false;
        for (int pass = 0; pass < kTransposePasses; ++pass) {
            bool improved = false;
            for (uint32_t i = begin; i + 1 < end; ++i) {
                const uint32_t u = m_g.order[i], v = m_g.order[i + 1];
                uint64_t uv = 0, vu = 0;
                for (const int side : {0, 1})
                    pairCrossings(list(u, side), list(v, side), uv, vu);
                if (vu < uv) {
                    std::swap(m_g.order[i], m_g.order[i + 1]);
                    improved = true;
                }
            }
            if (!improved)
                break;
            changed = true;
        }
        if (changed)
            updatePositions(r);
        return changed;
    }

private:
    struct Span {
        const PosWeight* begin;
        const PosWeight* end;
    };

    Span list(uint32_t v, int side) const {
        const size_t k = size_t(m_local[v]) * 2 + size_t(side);
        return {m_lists.data() + m_listStart[k], m_lists.data() + m_listStart[k + 1]};
    }

    // With u left of v: uv = weighted pairs (a of u, b of v) with a > b
    // (they cross), vu = pairs with a < b (they would cross after a swap).
    static void pairCrossings(Span a, Span b, uint64_t& uv, uint64_t& vu) {
        uint64_t totalB = 0;
        for (const PosWeight* p = b.begin; p != b.end; ++p)
            totalB += p->weight;
        uint64_t less = 0, lessEq = 0;
        const PosWeight *lo = b.begin, *le = b.begin;
        for (const PosWeight* p = a.begin; p != a.end; ++p) {
            while (lo != b.end && lo->pos < p->pos)
                less += (lo++)->weight;
            while (le != b.end && le->pos <= p->pos)
                lessEq += (le++)->weight;
            uv += uint64_t(p->weight) * less;
            vu += uint64_t(p->weight) * (totalB - lessEq);
        }
    }

    void gather(uint32_t v, bool upper, std::vector<PosWeight>& out) const {
        out.clear();
        const auto& start = upper ? m_g.upStart : m_g.downStart;
        const auto& adj = upper ? m_g.up : m_g.down;
        for (uint32_t k = start[v]; k < start[v + 1]; ++k)
            out.push_back({m_g.pos[adj[k].node], adj[k].weight});
    }

    // Gansner et al.: the median, pulled towards the side where neighbours
    // are packed closer when the count is even.
    static double weightedMedian(std::vector<PosWeight>& p) {
        std::sort(p.begin(), p.end());
        const size_t n = p.size(), m = n / 2;
        if (n % 2 == 1)
            return p[m].pos;
        if (n == 2)
            return (double(p[0].pos) + p[1].pos) / 2;
        const double left = double(p[m - 1].pos) - p[0].pos;
        const double right = double(p[n - 1].pos) - p[m].pos;
        if (left + right == 0)
            return (double(p[m - 1].pos) + p[m].pos) / 2;
        return (p[m - 1].pos * right + p[m].pos * left) / (left + right);
    }

    void updatePositions(uint32_t r) {
        for (uint32_t i = m_g.rankStart[r]; i < m_g.rankStart[r + 1]; ++i)
            m_g.pos[m_g.order[i]] = i - m_g.rankStart[r];
    }

    LayeredGraph& m_g;
    std::vector<double> m_key;
    std::vector<uint32_t> m_local;
    std::vector<uint32_t> m_movable, m_slots, m_listStart;
    std::vector<PosWeight> m_nbrs, m_lists;
};

uint64_t countGap(const LayeredGraph& g, uint32_t r, std::vector<uint64_t>& tree,
                  std::vector<PosWeight>& lower) {
    const uint32_t q = g.rankSize(r + 1);
    if (q < 2 || g.rankSize(r) < 2)
        return 0;
    uint32_t first = 1;
    while (first < q)
        first <<= 1;
    tree.assign(size_t(first) * 2 - 1, 0);
    --first;
    uint64_t crossings = 0;
    // Segments in lexicographic order (upper position, lower position); each
    // crosses the earlier ones that reach further right below.
    for (uint32_t i = g.rankStart[r]; i < g.rankStart[r + 1]; ++i) {
        const uint32_t v = g.order[i];
        lower.clear();
        for (uint32_t k = g.downStart[v]; k < g.downStart[v + 1]; ++k)
            lower.push_back({g.pos[g.down[k].node], g.down[k].weight});
        std::sort(lower.begin(), lower.end());
        for (const PosWeight& s : lower) {
            size_t index = s.pos + size_t(first);
            tree[index] += s.weight;
            while (index > 0) {
                if (index % 2 == 1)
                    crossings += tree[index + 1] * s.weight;
                index = (index - 1) / 2;
                tree[index] += s.weight;
            }
        }
    }
    return crossings;
}

} // namespace

uint64_t countLayeredCrossings(const LayeredGraph& g) {
    std::vector<uint64_t> tree;
    std::vector<PosWeight> lower;
    uint64_t total = 0;
    for (uint32_t r = 0; r + 1 < g.rankCount(); ++r)
        total += countGap(g, r, tree, lower);
    return total;
}

uint64_t reduceCrossings(LayeredGraph& g, const LayoutOptions& options, double from, double to) {
    Orderer orderer(g);
    orderer.initialOrder();
    uint64_t best = countLayeredCrossings(g);
    std::vector<uint32_t> bestOrder = g.order;
    const uint32_t ranks = g.rankCount();
    const int sweeps = std::max(0, options.crossingSweeps);
    auto keepIfBetter = [&] {
        const uint64_t c = countLayeredCrossings(g);
        if (c < best) {
            best = c;
            bestOrder = g.order;
        }
    };
    // As dot: stop early once sweeps stop paying (three rounds in a row
    // without removing 0.5% of the crossings; sooner stops too early, as
    // the best order often improves again after a worse round).
    int idle = 0;
    for (int sweep = 0; sweep < sweeps && best > 0 && idle < 3; ++sweep) {
        const uint64_t before = best;
        options.throwIfCancelled();
        for (uint32_t r = 1; r < ranks; ++r) {
            if (r % 64 == 0)
                options.throwIfCancelled();
            orderer.sortRank(r, true);
            orderer.transposeRank(r);
        }
        keepIfBetter();
        options.throwIfCancelled();
        for (uint32_t r = ranks - 1; r-- > 0;) {
            if (r % 64 == 0)
                options.throwIfCancelled();
            orderer.sortRank(r, false);
            orderer.transposeRank(r);
        }
        keepIfBetter();
        idle = best < before - before / 200 ? 0 : idle + 1;
        options.report(from + (to - from) * (sweep + 1) / sweeps);
    }
    g.order = std::move(bestOrder);
    for (uint32_t r = 0; r < ranks; ++r)
        for (uint32_t i = g.rankStart[r]; i < g.rankStart[r + 1]; ++i)
            g.pos[g.order[i]] = i - g.rankStart[r];
    return best;
}

} // namespace ckptscope::layout
