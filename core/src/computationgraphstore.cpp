#include "ckptscope/computationgraphstore.h"

#include "gradientjsonreader.h"
#include "gradientjsonwriter.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace ckptscope {

namespace {

bool contains(const std::vector<std::string>& cids, const std::string& cid) {
    return std::find(cids.begin(), cids.end(), cid) != cids.end();
}

// The graph with nodes numbered in key order (so sorting indexes sorts ids)
// and successors in CSR form; edges naming an unknown node are dropped.
struct IndexedGraph {
    std::vector<const std::string*> ids;
    std::vector<uint32_t> succStart; // successors of i: succ[succStart[i] .. succStart[i+1])
    std::vector<uint32_t> succ;
    std::vector<uint32_t> inDegree;
};

IndexedGraph indexGraph(const std::map<std::string, ComputationNode>& nodes,
                        const std::vector<Edge>& edges) {
    IndexedGraph g;
    const size_t n = nodes.size();
    g.ids.reserve(n);
    std::unordered_map<std::string_view, uint32_t> index;
    index.reserve(n);
    for (const auto& [key, node] : nodes) {
        index.emplace(key, uint32_t(g.ids.size()));
        g.ids.push_back(&key);
    }
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    pairs.reserve(edges.size());
    for (const auto& [producer, consumer] : edges) {
        const auto p = index.find(producer);
        const auto c = index.find(consumer);
        if (p != index.end() && c != index.end())
            pairs.emplace_back(p->second, c->second);
    }
    g.succStart.assign(n + 1, 0);
    g.inDegree.assign(n, 0);
    for (const auto& [u, v] : pairs) {
        ++g.succStart[u + 1];
        ++g.inDegree[v];
    }
    for (size_t i = 0; i < n; ++i)
        g.succStart[i + 1] += g.succStart[i];
    g.succ.resize(pairs.size());
    std::vector<uint32_t> next(g.succStart.begin(), g.succStart.end() - 1);
    for (const auto& [u, v] : pairs)
        g.succ[next[u]++] = v; // keeps edge order, as the reference's lists
    return g;
}

// Kahn's algorithm as the reference runs it. The result doubles as the FIFO
// queue: everything from `head` on is still waiting.
std::vector<uint32_t> kahnOrder(IndexedGraph& g) {
    const size_t n = g.ids.size();
    std::vector<uint32_t> order;
    order.reserve(n);
    for (uint32_t i = 0; i < n; ++i)
        if (g.inDegree[i] == 0)
            order.push_back(i);
    for (size_t head = 0; head < order.size(); ++head) {
        const uint32_t u = order[head];
        const size_t batch = order.size();
        for (uint32_t k = g.succStart[u]; k < g.succStart[u + 1]; ++k)
            if (--g.inDegree[g.succ[k]] == 0) // a repeated edge frees its target once
                order.push_back(g.succ[k]);
        std::sort(order.begin() + std::ptrdiff_t(batch), order.end());
    }
    return order;
}

struct EdgeViewHash {
    size_t operator()(const std::pair<std::string_view, std::string_view>& e) const {
        const size_t h = std::hash<std::string_view>{}(e.first);
        return h ^ (std::hash<std::string_view>{}(e.second) + 0x9e3779b97f4a7c15ULL + (h << 6) +
                    (h >> 2));
    }
};

std::string edgeLabel(size_t index, const Edge& e) {
    return "edge " + std::to_string(index) + " [" + gradientjson::displayText(e.first, false) +
           " → " + gradientjson::displayText(e.second, false) + "]: ";
}

} // namespace

void ComputationGraphStore::addNode(ComputationNode node) {
    const std::string& id = node.id;
    for (const auto& [key, existing] : m_nodes)
        if (key != id && existing.outputCid && contains(node.inputCids, *existing.outputCid))
            m_edges.emplace_back(key, id);
    if (node.outputCid) {
        std::unordered_set<std::string_view> linked;
        for (const auto& [producer, consumer] : m_edges)
            if (producer == id)
                linked.insert(consumer);
        for (const auto& [key, existing] : m_nodes)
            if (key != id && contains(existing.inputCids, *node.outputCid) &&
                linked.insert(key).second)
                m_edges.emplace_back(id, key);
    }
    std::string key = id;
    m_nodes.insert_or_assign(std::move(key), std::move(node));
}

void ComputationGraphStore::insertNode(ComputationNode node) {
    std::string key = node.id;
    m_nodes.insert_or_assign(std::move(key), std::move(node));
}

bool ComputationGraphStore::recordOutput(const std::string& nodeId, std::string cid) {
    const auto it = m_nodes.find(nodeId);
    if (it == m_nodes.end())
        return false;
    std::unordered_set<std::string_view> linked;
    for (const auto& [producer, consumer] : m_edges)
        if (producer == nodeId)
            linked.insert(consumer);
    std::vector<std::string> consumers;
    for (const auto& [key, node] : m_nodes)
        if (key != nodeId && contains(node.inputCids, cid) && !linked.contains(key))
            consumers.push_back(key);
    for (std::string& consumer : consumers)
        m_edges.emplace_back(nodeId, std::move(consumer));
    it->second.outputCid = std::move(cid);
    return true;
}

bool ComputationGraphStore::recordGradient(const std::string& nodeId, std::string cid) {
    const auto it = m_nodes.find(nodeId);
    if (it == m_nodes.end())
        return false;
    it->second.gradientCid = std::move(cid);
    return true;
}

void ComputationGraphStore::addEdge(std::string producer, std::string consumer) {
    m_edges.emplace_back(std::move(producer), std::move(consumer));
}

std::vector<std::string> ComputationGraphStore::topologicalOrder() const {
    IndexedGraph g = indexGraph(m_nodes, m_edges);
    const std::vector<uint32_t> order = kahnOrder(g);
    std::vector<std::string> ids;
    ids.reserve(order.size());
    for (const uint32_t i : order)
        ids.push_back(*g.ids[i]);
    return ids;
}

std::vector<std::string> ComputationGraphStore::cycleNodes() const {
    IndexedGraph g = indexGraph(m_nodes, m_edges);
    std::vector<bool> placed(g.ids.size(), false);
    for (const uint32_t i : kahnOrder(g))
        placed[i] = true;
    std::vector<std::string> left;
    for (size_t i = 0; i < g.ids.size(); ++i)
        if (!placed[i])
            left.push_back(*g.ids[i]);
    return left;
}

std::vector<const ComputationNode*>
ComputationGraphStore::findConsumers(const std::string& cid) const {
    std::vector<const ComputationNode*> out;
    for (const auto& [key, node] : m_nodes)
        if (contains(node.inputCids, cid))
            out.push_back(&node);
    return out;
}

std::vector<const ComputationNode*>
ComputationGraphStore::provenanceChain(const std::string& outputCid) const {
    // One pass to map CIDs to producers; the first in key order wins, as in
    // findProducer.
    std::unordered_map<std::string_view, const ComputationNode*> producerOf;
    producerOf.reserve(m_nodes.size());
    for (const auto& [key, node] : m_nodes)
        if (node.outputCid)
            producerOf.emplace(*node.outputCid, &node);
    const auto root = producerOf.find(outputCid);
    if (root == producerOf.end())
        return {};

    // Iterative post-order DFS: a 100k-long chain must not exhaust the stack.
    struct Frame {
        const ComputationNode* node;
        size_t nextInput;
    };
    std::vector<const ComputationNode*> chain;
    std::unordered_set<const ComputationNode*> seen{root->second};
    std::vector<Frame> stack{{root->second, 0}};
    while (!stack.empty()) {
        Frame& top = stack.back();
        if (top.nextInput < top.node->inputCids.size()) {
            const auto p = producerOf.find(top.node->inputCids[top.nextInput++]);
            if (p != producerOf.end() && seen.insert(p->second).second)
                stack.push_back({p->second, 0});
        } else {
            chain.push_back(top.node);
            stack.pop_back();
        }
    }
    return chain;
}

const ComputationNode* ComputationGraphStore::findProducer(const std::string& cid) const {
    for (const auto& [key, node] : m_nodes)
        if (node.outputCid == cid)
            return &node;
    return nullptr;
}

const ComputationNode* ComputationGraphStore::getNode(const std::string& id) const {
    const auto it = m_nodes.find(id);
    return it == m_nodes.end() ? nullptr : &it->second;
}

std::vector<std::string> ComputationGraphStore::validate() const {
    std::vector<std::string> messages;
    for (const auto& [key, node] : m_nodes)
        if (key != node.id)
            messages.push_back("node " + gradientjson::displayText(key, true) + " has \"id\" " +
                               gradientjson::displayText(node.id, true) +
                               "; the key is used as the node's id");
    std::unordered_map<std::pair<std::string_view, std::string_view>, size_t, EdgeViewHash> first;
    first.reserve(m_edges.size());
    for (size_t i = 0; i < m_edges.size(); ++i) {
        const Edge& e = m_edges[i];
        if (!m_nodes.contains(e.first))
            messages.push_back(edgeLabel(i, e) + "producer " +
                               gradientjson::displayText(e.first, false) + " is not a node");
        if (!m_nodes.contains(e.second))
            messages.push_back(edgeLabel(i, e) + "consumer " +
                               gradientjson::displayText(e.second, false) + " is not a node");
        const auto [it, inserted] = first.try_emplace({e.first, e.second}, i);
        if (!inserted)
            messages.push_back(edgeLabel(i, e) + "repeats edge " + std::to_string(it->second));
    }
    return messages;
}

std::string ComputationGraphStore::toJson() const {
    std::string out;
    gradientjson::writeGraph(out, *this);
    return out;
}

ComputationGraphStore ComputationGraphStore::fromJson(const std::string& text,
                                                      const std::string& name) {
    return gradientjson::readGraph(text, name);
}

} // namespace ckptscope
