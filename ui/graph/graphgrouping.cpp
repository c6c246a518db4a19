#include "graph/graphgrouping.h"

#include "common/plaintext.h"
#include "common/sizeformat.h"

#include <QFontMetrics>
#include <QGuiApplication>

#include <algorithm>
#include <unordered_map>

using namespace ckptscope;

GraphGrouping groupGraph(const GraphIndex& index,
                         const std::vector<std::pair<uint32_t, uint32_t>>& edges) {
    const size_t n = size_t(index.size());
    // Keys numbered as they first appear in list (topological) order, so a
    // band's boxes read in the order the ops run.
    std::unordered_map<std::string_view, OpFamily> familyOf; // a handful of distinct ops
    std::unordered_map<std::string, uint32_t> keyOf;
    std::vector<std::string> keyNames;
    std::vector<OpFamily> keyFamilies;
    std::vector<uint32_t> keys(n, UINT32_MAX);
    auto assign = [&](int i) {
        const ComputationNode* node = i >= 0 ? index.node(i) : nullptr;
        if (!node || keys[size_t(i)] != UINT32_MAX)
            return;
        const auto [it, fresh] = familyOf.try_emplace(node->op, OpFamily::Other);
        if (fresh)
            it->second = opFamily(QString::fromStdString(node->op));
        const std::string scope = structureScope(*node);
        const std::string family = opFamilyName(it->second).toStdString();
        const std::string key = scope.empty() ? family : scope + " · " + family;
        const auto [k, added] = keyOf.try_emplace(key, uint32_t(keyNames.size()));
        if (added) {
            keyNames.push_back(key);
            keyFamilies.push_back(it->second);
        }
        keys[size_t(i)] = k->second;
    };
    for (const int i : index.listOrder())
        assign(i);
    for (size_t i = 0; i < n; ++i) // nodes the list left out, if any
        if (keys[i] == UINT32_MAX)
            keys[i] = 0;
    GraphGrouping out;
    out.grouping = groupByStructure(uint32_t(n), edges, keys);
    const NodeGrouping& g = out.grouping;
    for (uint32_t grp = 0; grp < g.groupCount(); ++grp) {
        // Its ops by count, most first: a box says which ops it holds, never
        // a family name that reads like one of them ("matmul" for matmul and
        // attention).
        std::unordered_map<std::string_view, uint32_t> opCount;
        for (uint32_t i = g.memberStart[grp]; i < g.memberStart[grp + 1]; ++i)
            if (const ComputationNode* node = index.node(int(g.members[i])))
                ++opCount[node->op];
        std::vector<std::pair<std::string_view, uint32_t>> ops(opCount.begin(), opCount.end());
        std::sort(ops.begin(), ops.end(), [](const auto& x, const auto& y) {
            return x.second != y.second ? x.second > y.second : x.first < y.first;
        });
        const std::string key =
            g.groupKey[grp] < keyNames.size() ? keyNames[g.groupKey[grp]] : std::string();
        std::string label, opList;
        for (size_t k = 0; k < ops.size(); ++k) {
            if (k < 2)
                label += (k ? " + " : "") + std::string(ops[k].first);
            opList +=
                (k ? "\n" : "") + std::string(ops[k].first) + " ×" + std::to_string(ops[k].second);
        }
        if (ops.size() > 2)
            label = key + " (" + std::to_string(ops.size()) + " ops)";
        out.labels.push_back(label.empty() ? key : label);
        out.opLists.push_back(std::move(opList));
        out.families.push_back(g.groupKey[grp] < keyFamilies.size() ? keyFamilies[g.groupKey[grp]]
                                                                    : OpFamily::Other);
    }
    return out;
}

GroupedLayout groupedLayout(LayoutInput input, GraphGrouping grouping, bool leftToRight) {
    const QFontMetrics fm(QGuiApplication::font());
    const NodeGrouping& g = grouping.grouping;
    GroupedLayout out;
    std::vector<std::pair<double, double>> sizes;
    for (uint32_t grp = 0; grp < g.groupCount(); ++grp) {
        const uint32_t count = g.groupSize(grp);
        GraphScene::GroupInfo info;
        info.label = QStringLiteral("%1 ×%2").arg(QString::fromStdString(grouping.labels[grp]),
                                                  groupedNumber(count));
        const uint32_t first = g.memberStart[grp];
        info.toolTip = plainToolTip(
            QGuiApplication::translate("GraphPage", "%1\n%2 nodes, ranks %3–%4\n%5\n"
                                                    "Double-click to expand or collapse")
                .arg(QString::fromStdString(grouping.labels[grp]), groupedNumber(count))
                .arg(g.rank[g.members[first]])
                .arg(g.rank[g.members[g.memberStart[grp + 1] - 1]])
                .arg(QString::fromStdString(grouping.opLists[grp])));
        info.family = grouping.families[grp];
        const double w = double(fm.horizontalAdvance(info.label) + 24);
        const double h = double(fm.height() + 20);
        sizes.push_back(leftToRight ? std::pair(h, w) : std::pair(w, h));
        out.info.push_back(std::move(info));
    }
    out.layout = std::make_shared<CollapsedLayout>(std::move(input), std::move(grouping.grouping),
                                                   std::move(sizes));
    return out;
}
