#pragma once

#include <QString>

#include <vector>

// Names split on '.' and '/' into a tree of groups, children in natural
// order ("layers.2" before "layers.10"): the shape of the tensor trees of
// the main window and of the compare window. Node 0 is the invisible root;
// a child's id is larger than its parent's, so a walk from the last id down
// visits children before their parents (sums bottom-up).
struct NameTree {
    struct Node {
        QString label; // this part of the name
        QString path;  // the full name (a group: the name up to this part)
        int parent = -1;
        int row = 0;   // among its parent's children
        int item = -1; // index into the names given; -1 for a group
        std::vector<int> children;
    };
    std::vector<Node> nodes{Node{}};
    std::vector<int> nodeOfItem; // per name given

    // emptyLabel names the leaf of an empty name.
    static NameTree build(const std::vector<QString>& names, const QString& emptyLabel);
};
