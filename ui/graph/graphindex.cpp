#include "graph/graphindex.h"

GraphIndex::GraphIndex(const ckptscope::GraphLayoutInput& input) : m_ids(input.ids) {
    m_preds.resize(m_ids.size());
    m_succs.resize(m_ids.size());
    m_indexOf.reserve(qsizetype(m_ids.size()));
    for (size_t i = 0; i < m_ids.size(); ++i)
        m_indexOf.insert(QString::fromStdString(m_ids[i]), int(i));
    for (const auto& [from, to] : input.input.edges) {
        m_succs[from].push_back(int(to));
        m_preds[to].push_back(int(from));
    }
}

int GraphIndex::indexOf(const std::string& id) const {
    return m_indexOf.value(QString::fromStdString(id), -1);
}

std::vector<int> GraphIndex::walk(int start, const std::vector<std::vector<int>>& next) const {
    std::vector<char> seen(m_ids.size(), 0);
    std::vector<int> stack{start}, out;
    seen[size_t(start)] = 1;
    while (!stack.empty()) {
        const int n = stack.back();
        stack.pop_back();
        for (int m : next[size_t(n)])
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
