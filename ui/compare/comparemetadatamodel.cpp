#include "compare/comparemetadatamodel.h"

#include "common/plaintext.h"
#include "compare/comparetensormodel.h"

using namespace ckptscope;

CompareMetadataModel::CompareMetadataModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareMetadataModel::setRows(std::vector<MetadataDiffEntry> rows) {
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

int CompareMetadataModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int CompareMetadataModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareMetadataModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= m_rows.size())
        return {};
    const MetadataDiffEntry& e = m_rows[size_t(index.row())];
    if (role == Qt::BackgroundRole && e.status != DiffStatus::Same) {
        QColor c = CompareTensorModel::statusColor(e.status);
        c.setAlpha(48);
        return c;
    }
    if (role == Qt::DecorationRole && index.column() == Status)
        return CompareTensorModel::statusIcon(e.status);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    auto value = [](const std::optional<std::string>& v) {
        return v ? shownLines(QString::fromStdString(*v)) : QString();
    };
    switch (index.column()) {
    case Key:
        return shownText(e.key);
    case Status:
        return CompareTensorModel::statusText(e.status);
    case ValueA: // with a type or an array item that differs
        return value(e.shown(false));
    case ValueB:
        return value(e.shown(true));
    }
    return {};
}

QVariant CompareMetadataModel::headerData(int section, Qt::Orientation orientation,
                                          int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Key:
        return tr("Key");
    case Status:
        return tr("Status");
    case ValueA:
        return tr("A (old)");
    case ValueB:
        return tr("B (new)");
    }
    return {};
}
