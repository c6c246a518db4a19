#include "compare/gradient/comparefieldsmodel.h"

#include "common/plaintext.h"
#include "compare/comparetensormodel.h"
#include "compare/gradient/comparechanges.h"

using namespace ckptscope;

CompareFieldsModel::CompareFieldsModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareFieldsModel::setFields(std::vector<FieldDiff> fields) {
    beginResetModel();
    m_fields = std::move(fields);
    endResetModel();
}

int CompareFieldsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_fields.size());
}

int CompareFieldsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareFieldsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= m_fields.size())
        return {};
    const FieldDiff& f = m_fields[size_t(index.row())];
    if (index.column() == Status && role == Qt::DecorationRole)
        return CompareTensorModel::statusIcon(f.status);
    if (index.column() == Status && role == Qt::ForegroundRole)
        return CompareTensorModel::statusColor(f.status);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    QString text;
    switch (index.column()) {
    case Field:
        text = QString::fromStdString(f.field);
        break;
    case SideA:
        text = fieldValueText(f.a);
        break;
    case SideB:
        text = fieldValueText(f.b);
        break;
    case Status:
        text = CompareTensorModel::statusText(f.status);
        break;
    }
    return role == Qt::ToolTipRole ? plainToolTip(text) : text;
}

QVariant CompareFieldsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    return header(section, orientation, role, ColumnCount);
}

QVariant CompareFieldsModel::header(int section, Qt::Orientation orientation, int role,
                                    int columns) {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section >= columns)
        return {};
    switch (section) {
    case Field:
        return tr("Field");
    case SideA:
        return tr("A");
    case SideB:
        return tr("B");
    case Status:
        return tr("Status");
    }
    return {};
}
