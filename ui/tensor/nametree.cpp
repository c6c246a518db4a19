#include "tensor/nametree.h"

#include "common/naturalorder.h"

#include <QRegularExpression>
#include <QStringList>

#include <algorithm>
#include <unordered_map>

NameTree NameTree::build(const std::vector<QString>& names, const QString& emptyLabel) {
    NameTree t;
    t.nodeOfItem.assign(names.size(), -1);
    // Group lookup by (parent, label) keeps building linear in the name count.
    std::unordered_map<QString, int> groupOf;
    static const QRegularExpression separators(QStringLiteral("[./]"));
    for (size_t i = 0; i < names.size(); ++i) {
        const QString& name = names[i];
        QStringList parts = name.split(separators);
        if (name.isEmpty())
            parts = {emptyLabel};
        int parent = 0;
        qsizetype length = 0; // of the name up to this part
        for (qsizetype p = 0; p + 1 < parts.size(); ++p) {
            length += (p ? 1 : 0) + parts[p].size();
            const QString key = QString::number(parent) + QLatin1Char('\x1f') + parts[p];
            auto it = groupOf.find(key);
            if (it == groupOf.end()) {
                Node n;
                n.label = parts[p];
                n.path = name.left(length);
                n.parent = parent;
                t.nodes.push_back(n);
                it = groupOf.emplace(key, int(t.nodes.size() - 1)).first;
                t.nodes[size_t(parent)].children.push_back(it->second);
            }
            parent = it->second;
        }
        Node leaf;
        leaf.label = parts.last();
        leaf.path = name;
        leaf.parent = parent;
        leaf.item = int(i);
        t.nodes.push_back(leaf);
        t.nodeOfItem[i] = int(t.nodes.size() - 1);
        t.nodes[size_t(parent)].children.push_back(int(t.nodes.size() - 1));
    }
    for (Node& n : t.nodes) {
        std::stable_sort(n.children.begin(), n.children.end(), [&t](int a, int b) {
            return naturalLess(t.nodes[size_t(a)].label, t.nodes[size_t(b)].label);
        });
        for (size_t r = 0; r < n.children.size(); ++r)
            t.nodes[size_t(n.children[r])].row = int(r);
    }
    return t;
}
