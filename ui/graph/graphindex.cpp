#include "graph/graphindex.h"

#include <algorithm>

GraphIndex::Lists GraphIndex::lists(size_t nodes,
                                    const std::vector<std::pair<uint32_t, uint32_t>>& edges,
                                    bool forward) {
    Lists l;
    l.start.assign(nodes + 1, 0);
    for (const auto& [from, to] : edges)
        ++l.start[(forward ? from : to) + 1];
    for (size_t i = 0; i < nodes; ++i)
        l.start[i + 1] += l.start[i];
    l.items.resize(edges.size());
    std::vector<uint32_t> next(l.start.begin(), l.start.end() - 1);
    for (const auto& [from, to] : edges) // in edge order, as the lists were
        l.items[next[forward ? from : to]++] = int(forward ? to : from);
    return l;
}

GraphIndex::OfGraph GraphIndex::ofGraph(const ckptscope::ComputationGraphStore& graph) {
    // Ids and edges only: node widths (font metrics, 100k strings) are
    // measured when the layout runs.
    auto input = layoutInputFromGraph(graph, [](const ckptscope::ComputationNode&) { return 1.0; });
    OfGraph out;
    out.edges = input.input.edges;
    out.index = std::make_shared<const GraphIndex>(std::move(input), &graph);
    return out;
}

GraphIndex::GraphIndex(ckptscope::GraphLayoutInput input,
                       const ckptscope::ComputationGraphStore* graph)
    : m_ids(std::move(input.ids)) {
    if (graph) {
        // The input lists the graph's nodes in key order: one walk, no lookups.
        m_nodes.reserve(m_ids.size());
        auto it = graph->nodes().begin();
        for (const std::string& id : m_ids) {
            const bool same = it != graph->nodes().end() && it->first == id;
            m_nodes.push_back(same ? &it->second : graph->getNode(id));
            if (same)
                ++it;
        }
    }
    // Ids from a graph come sorted: a binary search needs no table of 100k
    // strings.
    m_sorted = std::is_sorted(m_ids.begin(), m_ids.end()) &&
               std::adjacent_find(m_ids.begin(), m_ids.end()) == m_ids.end();
    if (!m_sorted) {
        m_indexOf.reserve(qsizetype(m_ids.size()));
        for (size_t i = 0; i < m_ids.size(); ++i)
            m_indexOf.insert(QString::fromStdString(m_ids[i]), int(i));
    }
    m_succs = lists(m_ids.size(), input.input.edges, true);
    m_preds = lists(m_ids.size(), input.input.edges, false);
    m_hasGraph = graph != nullptr;
    if (graph)
        orderFrom(*graph);
}

void GraphIndex::orderFrom(const ckptscope::ComputationGraphStore& graph) {
    // ComputationGraphStore::topologicalSplit's order (Kahn's algorithm, the
    // sources and each batch of freed nodes sorted by id) from the integer
    // lists, without indexing 100k id strings again. Indices are in id
    // order; a repeated edge frees its target once, as one edge does; a self
    // loop (left out of the lists) keeps its node waiting for ever.
    if (!m_sorted) { // index order is not id order: the graph's own split
        const auto split = graph.topologicalSplit();
        for (const std::string& id : split.order)
            m_order.push_back(indexOf(id));
        m_ordered = m_order.size();
        for (const std::string& id : split.cycle)
            m_order.push_back(indexOf(id));
        return;
    }
    const size_t n = m_ids.size();
    std::vector<uint32_t> waiting(n);
    for (size_t i = 0; i < n; ++i)
        waiting[i] = uint32_t(m_preds.of(int(i)).size());
    for (const auto& [producer, consumer] : graph.edges())
        if (producer == consumer)
            if (const int i = indexOf(producer); i >= 0)
                ++waiting[size_t(i)];
    m_order.reserve(n);
    for (size_t i = 0; i < n; ++i)
        if (waiting[i] == 0)
            m_order.push_back(int(i));
    for (size_t head = 0; head < m_order.size(); ++head) {
        const size_t batch = m_order.size();
        for (const int s : m_succs.of(m_order[head]))
            if (--waiting[size_t(s)] == 0)
                m_order.push_back(s);
        std::sort(m_order.begin() + std::ptrdiff_t(batch), m_order.end());
    }
    m_ordered = m_order.size();
    for (size_t i = 0; i < n; ++i) // the rest, on or behind a cycle, by id
        if (waiting[i] != 0)
            m_order.push_back(int(i));
}

int GraphIndex::indexOf(const std::string& id) const {
    if (m_sorted) {
        const auto it = std::lower_bound(m_ids.begin(), m_ids.end(), id);
        return it != m_ids.end() && *it == id ? int(it - m_ids.begin()) : -1;
    }
    return m_indexOf.value(QString::fromStdString(id), -1);
}

std::vector<int> GraphIndex::walk(int start, const Lists& next) const {
    std::vector<char> seen(m_ids.size(), 0);
    std::vector<int> stack{start}, out;
    seen[size_t(start)] = 1;
    while (!stack.empty()) {
        const int n = stack.back();
        stack.pop_back();
        for (int m : next.of(n))
            if (!seen[size_t(m)]) {
                seen[size_t(m)] = 1;
                out.push_back(m);
                stack.push_back(m);
            }
    }
    return out;
}

std::vector<int> GraphIndex::ancestors(int i) const {
    return walk(i, m_preds);
}
std::vector<int> GraphIndex::descendants(int i) const {
    return walk(i, m_succs);
}
