#include "graph/nodetablemodel.h"

#include "common/plaintext.h"

#include <QApplication>
#include <QStyle>

NodeTableModel::NodeTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void NodeTableModel::setGraph(std::shared_ptr<const ckptscope::GradientCheckpoint> checkpoint,
                              std::shared_ptr<const GraphIndex> index) {
    beginResetModel();
    m_checkpoint = std::move(checkpoint);
    m_index = std::move(index);
    m_rows.clear();
    m_rowOf.clear();
    m_ordered = 0;
    if (m_checkpoint && m_index) {
        if (m_index->hasGraph()) { // made with its graph: it has the order
            m_rows = m_index->listOrder();
            m_ordered = m_index->orderedCount();
        } else {
            m_rows = listOrder(m_checkpoint->graph, *m_index, &m_ordered);
        }
        m_rowOf.assign(size_t(m_index->size()), -1);
        for (size_t r = 0; r < m_rows.size(); ++r)
            if (m_rows[r] >= 0)
                m_rowOf[size_t(m_rows[r])] = int(r);
    }
    endResetModel();
}

std::vector<int> NodeTableModel::listOrder(const ckptscope::ComputationGraphStore& graph,
                                           const GraphIndex& index, size_t* ordered) {
    std::vector<int> rows;
    const auto split = graph.topologicalSplit(); // one pass for both parts
    for (const std::string& id : split.order)
        rows.push_back(index.indexOf(id));
    if (ordered)
        *ordered = rows.size();
    for (const std::string& id : split.cycle)
        rows.push_back(index.indexOf(id));
    return rows;
}

const ckptscope::ComputationNode* NodeTableModel::nodeAt(int node) const {
    if (node < 0 || !m_index)
        return nullptr;
    const ckptscope::ComputationNode* n = m_index->node(node);
    return n ? n : m_checkpoint->graph.getNode(m_index->id(node));
}

int NodeTableModel::longestRow(int column) const {
    // From the node strings themselves: asking data() for 100k rows would
    // build 100k QStrings per column.
    int longest = -1;
    size_t chars = 0;
    for (size_t r = 0; r < m_rows.size(); ++r) {
        const ckptscope::ComputationNode* n = nodeAt(m_rows[r]);
        size_t len = 0;
        if (column == Position)
            len = r >= m_ordered ? 5 : std::to_string(r + 1).size(); // "cycle"
        else if (n)
            len = column == Op ? n->op.size() : column == Id ? n->id.size() : 8;
        if (longest < 0 || len >= chars) { // ties: the later row
            chars = len;
            longest = int(r);
        }
    }
    return longest;
}

int NodeTableModel::rowOfNode(int node) const {
    return node >= 0 && size_t(node) < m_rowOf.size() ? m_rowOf[size_t(node)] : -1;
}

int NodeTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int NodeTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant NodeTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= m_rows.size())
        return {};
    const int node = m_rows[size_t(index.row())];
    if (role == NodeIndexRole)
        return node;
    const bool onCycle = size_t(index.row()) >= m_ordered;
    const ckptscope::ComputationNode* n = nodeAt(node);
    if (!n)
        return {};
    if (role == Qt::DecorationRole && index.column() == Position && onCycle)
        return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
    if (role == Qt::ToolTipRole) {
        // A narrow dock elides long ids and op names: the tooltip has them whole.
        if (index.column() == Id)
            return plainToolTip(QString::fromStdString(n->id));
        if (index.column() == Op)
            return plainToolTip(QString::fromStdString(n->op));
        if (onCycle)
            return tr("On or behind a cycle: not in the topological order");
        return {};
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (Column(index.column())) {
    case Position:
        return onCycle ? tr("cycle") : QString::number(index.row() + 1);
    case Op:
        return QString::fromStdString(n->op);
    case Id:
        return QString::fromStdString(n->id);
    case State:
        return n->gradientCid ? tr("backward") : n->outputCid ? tr("forward") : tr("pending");
    case ColumnCount:
        break;
    }
    return {};
}

QVariant NodeTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (Column(section)) {
    case Position:
        return tr("#");
    case Op:
        return tr("Op");
    case Id:
        return tr("Id");
    case State:
        return tr("State");
    case ColumnCount:
        break;
    }
    return {};
}
