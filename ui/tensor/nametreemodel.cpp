#include "tensor/nametreemodel.h"

void NameTreeModel::setNames(const std::vector<QString>& names) {
    m_tree = NameTree::build(names, tr("(empty name)"));
}

QModelIndex NameTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (column < 0 || column >= columnCount(parent) || row < 0)
        return {};
    const auto& children = node(parent).children;
    if (size_t(row) >= children.size())
        return {};
    return createIndex(row, column, quintptr(children[size_t(row)]));
}

QModelIndex NameTreeModel::parent(const QModelIndex& child) const {
    if (!child.isValid())
        return {};
    return indexOfNode(node(child).parent, 0);
}

int NameTreeModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() && parent.column() != 0)
        return 0;
    return int(node(parent).children.size());
}

std::vector<int> NameTreeModel::markUpward(std::vector<bool>& marked, int item) const {
    std::vector<int> newly;
    if (item < 0 || size_t(item) >= m_tree.nodeOfItem.size() ||
        marked.size() != m_tree.nodes.size())
        return newly;
    for (int n = m_tree.nodeOfItem[size_t(item)]; n > 0 && !marked[size_t(n)];
         n = m_tree.nodes[size_t(n)].parent) {
        marked[size_t(n)] = true;
        newly.push_back(n);
    }
    return newly;
}

QModelIndex NameTreeModel::indexOfNode(int node, int column) const {
    if (node <= 0 || size_t(node) >= m_tree.nodes.size())
        return {};
    return createIndex(m_tree.nodes[size_t(node)].row, column, quintptr(node));
}

QModelIndex NameTreeModel::indexOfItem(int item, int column) const {
    if (item < 0 || size_t(item) >= m_tree.nodeOfItem.size())
        return {};
    return indexOfNode(m_tree.nodeOfItem[size_t(item)], column);
}
