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
        m_rows = listOrder(m_checkpoint->graph, *m_index, &m_ordered);
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
    const ckptscope::ComputationNode* n =
        node >= 0 ? m_checkpoint->graph.getNode(m_index->id(node)) : nullptr;
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
