#include "ckptscope/diff/uniongraph.h"

#include <algorithm>
#include <tuple>

namespace ckptscope {

UnionGraph UnionGraph::build(const GradientCheckpoint& a, const GradientCheckpoint& b,
                             const GradientDiff& diff) {
    UnionGraph u;
    const auto& nodesA = a.graph.nodes();
    const auto& nodesB = b.graph.nodes();
    // The same pairing as the diff's (deterministic), so statuses agree.
    std::map<std::string, std::string> bToA;
    for (const auto& [ka, kb] : matchNodes(a.graph, b.graph).pairs) {
        bToA[kb] = ka;
        u.m_fromA[ka] = kb;
    }
    std::map<std::string, UnionNode> byKey;
    for (const auto& [kb, node] : nodesB) {
        UnionNode n;
        n.key = kb;
        n.keyB = kb;
        const auto it = bToA.find(kb);
        if (it != bToA.end())
            n.keyA = it->second;
        n.status = n.keyA ? DiffStatus::Same : DiffStatus::Added;
        byKey.emplace(kb, std::move(n));
        ComputationNode copy = node;
        copy.id = kb; // stored under its key, as the reader keys it
        u.m_checkpoint.graph.insertNode(std::move(copy));
    }
    for (const auto& [ka, node] : nodesA) {
        if (u.m_fromA.count(ka))
            continue;
        // Matched by structure, B may use this key for another node.
        std::string key = ka;
        for (int k = 1; byKey.count(key); ++k)
            key = ka + (k == 1 ? std::string(" (A)") : " (A" + std::to_string(k) + ")");
        u.m_fromA[ka] = key;
        UnionNode n;
        n.key = key;
        n.keyA = ka;
        n.status = DiffStatus::Removed;
        byKey.emplace(key, std::move(n));
        ComputationNode copy = node;
        copy.id = key;
        u.m_checkpoint.graph.insertNode(std::move(copy));
    }
    // Changed nodes (and the diff's own word on added and removed ones).
    for (size_t i = 0; i < diff.nodes.size(); ++i) {
        const NodeDiff& d = diff.nodes[i];
        // Added nodes are named by B's key (the union's), the rest by A's.
        const std::optional<std::string> key =
            d.status == DiffStatus::Added ? std::optional(d.id) : u.keyOfA(d.id);
        const auto it = key ? byKey.find(*key) : byKey.end();
        if (it == byKey.end() || (d.status == DiffStatus::Added && !it->second.keyB))
            continue;
        it->second.status = d.status;
        it->second.diffIndex = i;
    }
    for (auto& [key, n] : byKey) {
        u.m_byKey[key] = u.m_nodes.size();
        if (n.diffIndex)
            u.m_byDiff[*n.diffIndex] = u.m_nodes.size();
        u.m_nodes.push_back(std::move(n));
    }

    // Edges as multisets in union keys; ends that are no node are dropped.
    std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> copies;
    for (const Edge& e : a.graph.edges()) {
        const auto p = u.keyOfA(e.first), c = u.keyOfA(e.second);
        if (p && c && nodesA.count(e.first) && nodesA.count(e.second))
            ++copies[{*p, *c}].first;
    }
    for (const Edge& e : b.graph.edges())
        if (nodesB.count(e.first) && nodesB.count(e.second))
            ++copies[{e.first, e.second}].second;
    for (const auto& [pair, n] : copies) {
        UnionEdge e{pair.first, pair.second, n.first, n.second, DiffStatus::Same};
        e.status = n.first == 0          ? DiffStatus::Added
                   : n.second == 0       ? DiffStatus::Removed
                   : n.first != n.second ? DiffStatus::Changed
                                         : DiffStatus::Same;
        u.m_checkpoint.graph.addEdge(pair.first, pair.second);
        u.m_edges.push_back(std::move(e));
    }
    u.m_checkpoint.step = b.step;
    u.m_checkpoint.timestamp = b.timestamp;
    u.m_checkpoint.lossCid = b.lossCid;
    return u;
}

const UnionNode* UnionGraph::node(const std::string& key) const {
    const auto it = m_byKey.find(key);
    return it == m_byKey.end() ? nullptr : &m_nodes[it->second];
}

const UnionEdge* UnionGraph::edge(const std::string& producer, const std::string& consumer) const {
    const auto it =
        std::lower_bound(m_edges.begin(), m_edges.end(), std::pair(producer, consumer),
                         [](const UnionEdge& e, const auto& p) {
                             return std::tie(e.producer, e.consumer) < std::tie(p.first, p.second);
                         });
    return it != m_edges.end() && it->producer == producer && it->consumer == consumer ? &*it
                                                                                       : nullptr;
}

const UnionNode* UnionGraph::nodeOfDiff(size_t index) const {
    const auto it = m_byDiff.find(index);
    return it == m_byDiff.end() ? nullptr : &m_nodes[it->second];
}

std::optional<std::string> UnionGraph::keyOfA(const std::string& keyA) const {
    const auto it = m_fromA.find(keyA);
    return it == m_fromA.end() ? std::nullopt : std::optional(it->second);
}

std::optional<std::string> UnionGraph::keyOfB(const std::string& keyB) const {
    const UnionNode* n = node(keyB);
    return n && n->keyB ? std::optional(keyB) : std::nullopt;
}

} // namespace ckptscope
