#pragma once

#include "ckptscope/diff/gradientdiff.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// One node of the union of two computation graphs.
struct UnionNode {
    std::string key;                      // its key in UnionGraph::checkpoint()
    std::optional<std::string> keyA;      // the node's key in A (absent: added)
    std::optional<std::string> keyB;      // the node's key in B (absent: removed)
    DiffStatus status = DiffStatus::Same; // same, changed, added or removed
    std::optional<size_t> diffIndex;      // its entry in GradientDiff::nodes
};

// One distinct (producer, consumer) pair of the union, in union keys.
struct UnionEdge {
    std::string producer, consumer;
    uint64_t copiesA = 0, copiesB = 0;
    // Added: only in B; removed: only in A; changed: in both, with a
    // different number of copies; same otherwise.
    DiffStatus status = DiffStatus::Same;
};

// The union of two gradient checkpoints' graphs, for drawing one graph with
// what changed marked: every node of B under its key, plus A's removed
// nodes; a node matched by structure (under another id) is one node, under
// B's key. Each node keeps B's content (A's for a removed node), its id set
// to its union key. A removed node whose key B also uses is renamed
// "KEY (A)" (only possible when matched by structure). Edges of both, each
// distinct pair once with its copies in A and B; edges naming a node of
// neither graph are left out.
class UnionGraph {
public:
    static UnionGraph build(const GradientCheckpoint& a, const GradientCheckpoint& b,
                            const GradientDiff& diff);

    // The union as a checkpoint (B's step, loss and timestamp) to draw.
    const GradientCheckpoint& checkpoint() const { return m_checkpoint; }
    const std::vector<UnionNode>& nodes() const { return m_nodes; } // sorted by key
    const std::vector<UnionEdge>& edges() const { return m_edges; } // by (producer, consumer)
    const UnionNode* node(const std::string& key) const;
    const UnionEdge* edge(const std::string& producer, const std::string& consumer) const;
    // The union node of diff.nodes[index], or nullptr.
    const UnionNode* nodeOfDiff(size_t index) const;
    // The union key of an A node (matched, or removed) / of a B node.
    std::optional<std::string> keyOfA(const std::string& keyA) const;
    std::optional<std::string> keyOfB(const std::string& keyB) const;

private:
    GradientCheckpoint m_checkpoint;
    std::vector<UnionNode> m_nodes;
    std::vector<UnionEdge> m_edges;
    std::map<std::string, size_t> m_byKey;
    std::map<size_t, size_t> m_byDiff;
    std::map<std::string, std::string> m_fromA;
};

} // namespace ckptscope
