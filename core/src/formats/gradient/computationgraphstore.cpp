#include "ckptscope/formats/gradient/computationgraphstore.h"

#include "formats/gradient/gradientjsonreader.h"
#include "formats/gradient/gradientjsonwriter.h"

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

// Node keys (in key order) to their number.
std::unordered_map<std::string_view, uint32_t>
keyIndex(const std::map<std::string, ComputationNode>& nodes) {
    std::unordered_map<std::string_view, uint32_t> index;
    index.reserve(nodes.size());
    uint32_t i = 0;
    for (const auto& entry : nodes)
        index.emplace(entry.first, i++);
    return index;
}

IndexedGraph indexGraph(const std::map<std::string, ComputationNode>& nodes,
                        const std::vector<Edge>& edges) {
    IndexedGraph g;
    const size_t n = nodes.size();
    g.ids.reserve(n);
    for (const auto& entry : nodes)
        g.ids.push_back(&entry.first);
    const std::unordered_map<std::string_view, uint32_t> index = keyIndex(nodes);
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
    return topologicalSplit().order;
}

std::vector<std::string> ComputationGraphStore::cycleNodes() const {
    return topologicalSplit().cycle;
}

ComputationGraphStore::TopologicalSplit ComputationGraphStore::topologicalSplit() const {
    IndexedGraph g = indexGraph(m_nodes, m_edges);
    const std::vector<uint32_t> order = kahnOrder(g);
    TopologicalSplit split;
    split.order.reserve(order.size());
    std::vector<bool> placed(g.ids.size(), false);
    for (const uint32_t i : order) {
        split.order.push_back(*g.ids[i]);
        placed[i] = true;
    }
    for (size_t i = 0; i < g.ids.size(); ++i)
        if (!placed[i])
            split.cycle.push_back(*g.ids[i]);
    return split;
}

std::vector<size_t> ComputationGraphStore::depths() const {
    IndexedGraph g = indexGraph(m_nodes, m_edges);
    const std::vector<uint32_t> order = kahnOrder(g); // producers before consumers
    std::vector<size_t> depth(g.ids.size(), 0);
    std::vector<bool> placed(g.ids.size(), false);
    size_t deepest = 0;
    for (const uint32_t u : order) {
        placed[u] = true;
        deepest = std::max(deepest, depth[u]);
        for (uint32_t k = g.succStart[u]; k < g.succStart[u + 1]; ++k)
            depth[g.succ[k]] = std::max(depth[g.succ[k]], depth[u] + 1);
    }
    for (size_t i = 0; i < depth.size(); ++i)
        if (!placed[i])
            depth[i] = deepest + 1;
    return depth;
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
    // Every endpoint gets a number (unknown names after the nodes), so a
    // repeated edge is a repeated pair of numbers: sorted by (pair, index),
    // the first of each run is the edge the others repeat. Faster than
    // hashing string pairs, which dominated opening a 10 000-node graph.
    std::unordered_map<std::string_view, uint32_t> number = keyIndex(m_nodes);
    const auto known = uint32_t(number.size());
    auto numberOf = [&number](const std::string& id) {
        return number.try_emplace(id, uint32_t(number.size())).first->second;
    };
    std::vector<std::pair<uint64_t, uint32_t>> keyed; // (producer << 32 | consumer, edge)
    keyed.reserve(m_edges.size());
    for (size_t i = 0; i < m_edges.size(); ++i)
        keyed.emplace_back(uint64_t(numberOf(m_edges[i].first)) << 32 | numberOf(m_edges[i].second),
                           uint32_t(i));
    std::vector<uint64_t> pairOf(m_edges.size());
    for (const auto& [pair, i] : keyed)
        pairOf[i] = pair;
    std::sort(keyed.begin(), keyed.end());
    constexpr auto kFirst = uint32_t(-1);
    std::vector<uint32_t> repeats(m_edges.size(), kFirst);
    for (size_t k = 1; k < keyed.size(); ++k)
        if (keyed[k].first == keyed[k - 1].first)
            repeats[keyed[k].second] = repeats[keyed[k - 1].second] == kFirst
                                           ? keyed[k - 1].second
                                           : repeats[keyed[k - 1].second];
    for (size_t i = 0; i < m_edges.size(); ++i) {
        const Edge& e = m_edges[i];
        if ((pairOf[i] >> 32) >= known)
            messages.push_back(edgeLabel(i, e) + "producer " +
                               gradientjson::displayText(e.first, false) + " is not a node");
        if ((pairOf[i] & 0xffffffffu) >= known)
            messages.push_back(edgeLabel(i, e) + "consumer " +
                               gradientjson::displayText(e.second, false) + " is not a node");
        if (repeats[i] != kFirst)
            messages.push_back(edgeLabel(i, e) + "repeats edge " + std::to_string(repeats[i]));
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
