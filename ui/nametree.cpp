#include "nametree.h"

#include "naturalorder.h"

#include <QCoreApplication>
#include <QRegularExpression>

#include <algorithm>
#include <unordered_map>

NameTree::NameTree() : m_nodes(1) {}

NameTree::NameTree(const std::vector<QString>& names) : m_nodes(1) {
    m_nodeOfItem.resize(names.size(), -1);
    // Group lookup by (parent, label) keeps building linear in the name count.
    std::unordered_map<QString, int> groupOf;
    static const QRegularExpression separators(QStringLiteral("[./]"));
    for (size_t i = 0; i < names.size(); ++i) {
        const QString& name = names[i];
        QStringList parts = name.split(separators);
        if (name.isEmpty())
            parts = {QCoreApplication::translate("NameTree", "(empty name)")};
        int parent = 0;
        qsizetype prefix = 0;
        for (qsizetype p = 0; p + 1 < parts.size(); ++p) {
            prefix += (p ? 1 : 0) + parts[p].size(); // separators are one character
            const QString key = QString::number(parent) + QLatin1Char('\x1f') + parts[p];
            auto it = groupOf.find(key);
            if (it == groupOf.end()) {
                Node n;
                n.label = parts[p];
                n.path = name.left(prefix);
                n.parent = parent;
                m_nodes.push_back(n);
                it = groupOf.emplace(key, int(m_nodes.size() - 1)).first;
                m_nodes[size_t(parent)].children.push_back(it->second);
            }
            parent = it->second;
        }
        Node leaf;
        leaf.label = parts.last();
        leaf.path = name;
        leaf.parent = parent;
        leaf.item = int(i);
        m_nodes.push_back(leaf);
        m_nodeOfItem[i] = int(m_nodes.size() - 1);
        m_nodes[size_t(parent)].children.push_back(int(m_nodes.size() - 1));
    }
    for (Node& n : m_nodes) {
        std::stable_sort(n.children.begin(), n.children.end(), [this](int a, int b) {
            return naturalLess(m_nodes[size_t(a)].label, m_nodes[size_t(b)].label);
        });
        for (size_t r = 0; r < n.children.size(); ++r)
            m_nodes[size_t(n.children[r])].row = int(r);
    }
}

int NameTree::child(int parent, int row) const {
    const auto& children = m_nodes[size_t(parent)].children;
    return row >= 0 && size_t(row) < children.size() ? children[size_t(row)] : -1;
}
