#pragma once

#include "tensor/nametree.h"

#include <QAbstractItemModel>

#include <vector>

// The item-model side of a NameTree, shared by the tensor trees of the main
// and compare windows: indexes carry the node id, groups sit in column 0.
// A subclass sets the tree (inside a model reset) and answers data() from
// node(index) and its own per-node figures.
class NameTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;

protected:
    using QAbstractItemModel::QAbstractItemModel;
    // The tree of these names; call between beginResetModel() and
    // endResetModel().
    void setNames(const std::vector<QString>& names);
    const NameTree& tree() const { return m_tree; }
    // The node of an index (the root for an invalid one) and its id.
    static int nodeId(const QModelIndex& index) {
        return index.isValid() ? int(index.internalId()) : 0;
    }
    const NameTree::Node& node(const QModelIndex& index) const {
        return m_tree.nodes[size_t(nodeId(index))];
    }
    QModelIndex indexOfNode(int node, int column) const;
    // The leaf of the item-th name given, or invalid.
    QModelIndex indexOfItem(int item, int column) const;
    // Marks (marked[node], one per tree node) the item-th leaf and every
    // group above it, stopping at a node already marked: a warning rolled up
    // onto the groups. Returns the nodes newly marked.
    std::vector<int> markUpward(std::vector<bool>& marked, int item) const;

private:
    NameTree m_tree;
};
