#include "metadata/metadatamodel.h"

#include "common/plaintext.h"

MetadataModel::MetadataModel(QObject* parent) : QAbstractTableModel(parent) {}

void MetadataModel::setRows(Rows rows, std::vector<std::string> types,
                            std::vector<std::string> previews) {
    beginResetModel();
    m_rows.clear();
    m_rows.reserve(rows.size());
    for (auto& [k, v] : rows)
        m_rows.emplace_back(QString::fromStdString(k), QString::fromStdString(v));
    m_types.assign(m_rows.size(), QString());
    m_previews.assign(m_rows.size(), QString());
    for (size_t i = 0; i < previews.size() && i < m_previews.size(); ++i)
        m_previews[i] = QString::fromStdString(previews[i]);
    m_hasTypes = false;
    for (size_t i = 0; i < types.size() && i < m_types.size(); ++i) {
        m_types[i] = QString::fromStdString(types[i]);
        m_hasTypes = m_hasTypes || !m_types[i].isEmpty();
    }
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
    const QString& text = index.column() == Key     ? key
                          : index.column() == Value ? value
                                                    : m_types[size_t(index.row())];
    if (role == Qt::DisplayRole || role == Qt::EditRole)
        return text;
    if (role == Qt::ToolTipRole && index.column() == Value &&
        !m_previews[size_t(index.row())].isEmpty())
        return plainToolTip(m_previews[size_t(index.row())]);
    if (role == Qt::ToolTipRole)
        return plainToolTip(text);
    return {};
}

QVariant MetadataModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return section == Key ? tr("Key") : section == Value ? tr("Value") : tr("Type");
}
