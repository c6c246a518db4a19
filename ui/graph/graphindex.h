#pragma once

#include "ckptscope/layout/graphlayout.h"

#include <QHash>
#include <QString>

#include <vector>

// Index-based view of a computation graph for the GUI: node i is ids[i],
// with predecessor and successor lists, so ancestors/descendants of a node in
// a 100k-node graph are a linear walk, not string lookups.
class GraphIndex {
public:
    GraphIndex() = default;
    explicit GraphIndex(const ckptscope::GraphLayoutInput& input);

    int size() const { return int(m_ids.size()); }
    const std::string& id(int i) const { return m_ids[size_t(i)]; }
    int indexOf(const std::string& id) const;
    const std::vector<int>& predecessors(int i) const { return m_preds[size_t(i)]; }
    const std::vector<int>& successors(int i) const { return m_succs[size_t(i)]; }
    // Every node upstream (provenance) / downstream (consumers) of i, i excluded.
    std::vector<int> ancestors(int i) const;
    std::vector<int> descendants(int i) const;

private:
    std::vector<int> walk(int start, const std::vector<std::vector<int>>& next) const;

    std::vector<std::string> m_ids;
    QHash<QString, int> m_indexOf;
    std::vector<std::vector<int>> m_preds, m_succs;
};
