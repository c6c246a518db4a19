#include "comparefilterproxy.h"

#include "comparetensormodel.h"

CompareFilterProxy::CompareFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(CompareTensorModel::SortRole);
    setFilterKeyColumn(CompareTensorModel::Name);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
}

void CompareFilterProxy::setDifferencesOnly(bool on) {
    if (on == m_differencesOnly)
        return;
    m_differencesOnly = on;
    invalidateRowsFilter();
}

bool CompareFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (m_differencesOnly) {
        const QModelIndex i = sourceModel()->index(sourceRow, 0, sourceParent);
        if (i.data(CompareTensorModel::StatusRole).toInt() == int(ckptscope::DiffStatus::Same))
            return false;
    }
    return QSortFilterProxyModel::filterAcceptsRow(sourceRow, sourceParent);
}

bool CompareFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    const QVariant l = left.data(sortRole()), r = right.data(sortRole());
    if (l.isValid() && r.isValid())
        return QSortFilterProxyModel::lessThan(left, right);
    // A descending sort places x before y when lessThan(y, x): a missing
    // figure is "less" there and "greater" ascending, so it comes last.
    const bool descending = sortOrder() == Qt::DescendingOrder;
    if (!l.isValid() && r.isValid())
        return descending;
    if (l.isValid() && !r.isValid())
        return !descending;
    return false;
}
