#pragma once

#include "ckptscope/formats/gradient/computationnode.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ckptscope {

using Edge = std::pair<std::string, std::string>; // [producer id, consumer id]

namespace detail {
struct GraphAccess; // lets the JSON reader store nodes under their file key
}

// The computation graph of a gradient checkpoint: nodes by id and the edges
// as stored (duplicates and unknown ids allowed — they are reported, not
// fatal).
class ComputationGraphStore {
public:
    // Inserts (or replaces) a node and derives edges from CIDs: an existing
    // node whose outputCid is one of the new node's inputs becomes its
    // producer, and existing nodes consuming the new node's outputCid become
    // its consumers.
    // Producer edges are added as the reference does (repeats included);
    // consumer edges only when not already there. The node never links to
    // itself. Cost: one pass over all nodes per call.
    void addNode(ComputationNode node);
    // Inserts (or replaces) a node as is and derives no edges: for readers
    // and generators building large graphs with addEdge().
    void insertNode(ComputationNode node);
    // Sets outputCid / gradientCid; false when the id is unknown.
    // recordOutput also adds an edge to every other node consuming cid that
    // is not linked to this one yet, as the reference record_output does.
    bool recordOutput(const std::string& nodeId, std::string cid);
    bool recordGradient(const std::string& nodeId, std::string cid);
    void addEdge(std::string producer, std::string consumer); // as stored

    // Kahn's algorithm exactly as the reference: sources sorted by id, each
    // batch of newly freed successors sorted before it is appended. Nodes on
    // a cycle (or downstream of one) are left out. A repeated edge counts once
    // per copy. Unlike the reference, edges naming an unknown node are
    // ignored, so unknown ids never appear in the order. Ids are node keys.
    std::vector<std::string> topologicalOrder() const;
    // Nodes left out of topologicalOrder(), sorted by id.
    std::vector<std::string> cycleNodes() const;
    // Both of the above from one pass over the graph.
    struct TopologicalSplit {
        std::vector<std::string> order;
        std::vector<std::string> cycle;
    };
    TopologicalSplit topologicalSplit() const;
    // Every node's depth, in key order (nodes()): 0 for a node without a
    // known producer, else one more than its deepest producer; nodes on or
    // behind a cycle one more than the deepest of the others. (The graph
    // diff orders nodes by it when their ids differ.)
    std::vector<size_t> depths() const;
    // Nodes listing cid among their inputs, sorted by id.
    std::vector<const ComputationNode*> findConsumers(const std::string& cid) const;
    // Depth-first walk back from the producer of outputCid through the
    // producers of its inputs (in input order), each node once, post-order:
    // every node comes after the producers of its inputs (cycles aside), the
    // producer of outputCid last. Empty when nothing produces outputCid.
    std::vector<const ComputationNode*> provenanceChain(const std::string& outputCid) const;
    // The node whose outputCid equals cid (the smallest id if several), or
    // nullptr.
    const ComputationNode* findProducer(const std::string& cid) const;

    const ComputationNode* getNode(const std::string& id) const;
    size_t nodeCount() const { return m_nodes.size(); }
    size_t edgeCount() const { return m_edges.size(); }
    const std::map<std::string, ComputationNode>& nodes() const { return m_nodes; }
    const std::vector<Edge>& edges() const { return m_edges; }

    // Anomalies as messages, empty when there are none: edges naming an
    // unknown node ("edge 12 [a → b]: consumer b is not a node"; 0-based
    // edge index), repeated edges, and nodes stored under a key that differs
    // from their "id" (the key is used as the node's identity, as the
    // reference does).
    std::vector<std::string> validate() const;

    // The graph alone as pretty JSON ({"nodes":{…},"edges":[…]}) and back.
    // fromJson throws GradientError like GradientCheckpoint::fromJson.
    std::string toJson() const;
    static ComputationGraphStore fromJson(const std::string& json,
                                          const std::string& name = "<graph>");

    bool operator==(const ComputationGraphStore&) const = default;

private:
    friend struct detail::GraphAccess;

    // Keyed by node id (by the file's key when read from JSON).
    std::map<std::string, ComputationNode> m_nodes;
    std::vector<Edge> m_edges;
};

} // namespace ckptscope
