#pragma once

#include "ckptscope/layout/graphlayout.h"

#include <QHash>
#include <QString>

#include <memory>
#include <span>
#include <vector>

// Index-based view of a computation graph for the GUI: node i is ids[i],
// with predecessor and successor lists, so ancestors/descendants of a node in
// a 100k-node graph are a linear walk, not string lookups.
class GraphIndex {
public:
    // The index of a whole graph, and its edges as the layout's input (the
    // graph page lays out later, with node sizes measured on the GUI thread).
    // Reads only the graph: safe off the GUI thread.
    struct OfGraph {
        std::shared_ptr<const GraphIndex> index;
        std::vector<std::pair<uint32_t, uint32_t>> edges;
    };
    static OfGraph ofGraph(const ckptscope::ComputationGraphStore& graph);

    GraphIndex() = default;
    // With the graph the input was made from, node(i) points into it.
    // The ids are taken over: pass an input that is no longer needed with
    // std::move (100k strings not copied).
    explicit GraphIndex(ckptscope::GraphLayoutInput input,
                        const ckptscope::ComputationGraphStore* graph = nullptr);

    int size() const { return int(m_ids.size()); }
    const std::string& id(int i) const { return m_ids[size_t(i)]; }
    int indexOf(const std::string& id) const;
    // The node itself, without a lookup by id; nullptr when the index was
    // made without its graph.
    const ckptscope::ComputationNode* node(int i) const {
        return m_nodes.empty() ? nullptr : m_nodes[size_t(i)];
    }
    std::span<const int> predecessors(int i) const { return m_preds.of(i); }
    std::span<const int> successors(int i) const { return m_succs.of(i); }
    // With the graph: node indices in topological order, then the nodes on
    // cycles (from orderedCount() on); -1 for an id the index lacks.
    bool hasGraph() const { return m_hasGraph; }
    const std::vector<int>& listOrder() const { return m_order; }
    size_t orderedCount() const { return m_ordered; }
    // Every node upstream (provenance) / downstream (consumers) of i, i excluded.
    std::vector<int> ancestors(int i) const;
    std::vector<int> descendants(int i) const;

private:
    void orderFrom(const ckptscope::ComputationGraphStore& graph);
    // Neighbour lists in one array (compressed rows): no allocation per node.
    struct Lists {
        std::vector<uint32_t> start; // node i's list is items[start[i], start[i + 1])
        std::vector<int> items;
        std::span<const int> of(int i) const {
            return {items.data() + start[size_t(i)], items.data() + start[size_t(i) + 1]};
        }
    };
    static Lists lists(size_t nodes, const std::vector<std::pair<uint32_t, uint32_t>>& edges,
                       bool forward);
    std::vector<int> walk(int start, const Lists& next) const;

    std::vector<std::string> m_ids;
    std::vector<const ckptscope::ComputationNode*> m_nodes; // the graph's own, by index
    bool m_hasGraph = false;
    bool m_sorted = false;         // ids in order (as from a graph's map): binary search
    QHash<QString, int> m_indexOf; // otherwise
    std::vector<int> m_order;
    size_t m_ordered = 0;
    Lists m_preds, m_succs;
};
