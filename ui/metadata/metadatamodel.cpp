#include "metadata/metadatamodel.h"

#include "common/plaintext.h"

MetadataModel::MetadataModel(QObject* parent) : QAbstractTableModel(parent) {}

void MetadataModel::setRows(Rows rows) {
    beginResetModel();
    m_rows.clear();
    m_rows.reserve(rows.size());
    for (auto& [k, v] : rows)
        m_rows.emplace_back(QString::fromStdString(k), QString::fromStdString(v));
    endResetModel();
}

int MetadataModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int MetadataModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant MetadataModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= m_rows.size())
        return {};
    const auto& [key, value] = m_rows[size_t(index.row())];
    if (role == Qt::DisplayRole || role == Qt::EditRole)
        return index.column() == Key ? key : value;
    if (role == Qt::ToolTipRole)
        return plainToolTip(index.column() == Key ? key : value);
    return {};
}

QVariant MetadataModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return section == Key ? tr("Key") : tr("Value");
}
