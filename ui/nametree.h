#pragma once

#include <QString>

#include <vector>

// Names split on '.' and '/' into groups, children in natural order
// ("layers.2" before "layers.10"): the shape of every tensor tree (a file's
// tensor dock, a run's union of tensors). Node 0 is the invisible root; a
// node's parent always has a smaller id, so sums can run bottom-up.
class NameTree {
public:
    struct Node {
        QString label; // the last part of the name
        QString path;  // the full name of a leaf, the name prefix of a group
        int parent = -1;
        int row = 0;   // among its parent's children
        int item = -1; // the index of the name given, -1 for a group
        std::vector<int> children;
    };

    NameTree();
    // One leaf per name (an empty name gets a placeholder label).
    explicit NameTree(const std::vector<QString>& names);

    const std::vector<Node>& nodes() const { return m_nodes; }
    const Node& node(int id) const { return m_nodes[size_t(id)]; }
    int nodeOfItem(int item) const { return m_nodeOfItem[size_t(item)]; }
    int itemCount() const { return int(m_nodeOfItem.size()); }
    // The node of a child row, or -1.
    int child(int parent, int row) const;

private:
    std::vector<Node> m_nodes;
    std::vector<int> m_nodeOfItem;
};
