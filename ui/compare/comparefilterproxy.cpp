#include "compare/comparefilterproxy.h"

#include "common/naturalorder.h"
#include "compare/comparetensormodel.h"

CompareFilterProxy::CompareFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(CompareTensorModel::SortRole);
    setFilterKeyColumn(CompareTensorModel::Name);
    setFilterRole(CompareTensorModel::FullNameRole);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
    setRecursiveFilteringEnabled(true); // a group shows when a tensor below it does
}

void CompareFilterProxy::setDifferencesOnly(bool on) {
    if (on == m_differencesOnly)
        return;
    m_differencesOnly = on;
    invalidateRowsFilter();
}

bool CompareFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    const QModelIndex i = sourceModel()->index(sourceRow, 0, sourceParent);
    // A group shows when a tensor below it passes (recursive filtering).
    if (i.data(CompareTensorModel::TensorIndexRole).toInt() < 0)
        return false;
    if (m_differencesOnly &&
        i.data(CompareTensorModel::StatusRole).toInt() == int(ckptscope::DiffStatus::Same))
        return false;
    if (QSortFilterProxyModel::filterAcceptsRow(sourceRow, sourceParent))
        return true;
    // A pair under mapped names is found by B's name too (blk.0.attn_q).
    const auto* model = static_cast<const CompareTensorModel*>(sourceModel());
    const ckptscope::TensorDiffEntry* e =
        model->entry(i.data(CompareTensorModel::TensorIndexRole).toInt());
    return e && !e->nameB.empty() &&
           filterRegularExpression().match(QString::fromStdString(e->nameB)).hasMatch();
}

bool CompareFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    const QVariant l = left.data(sortRole()), r = right.data(sortRole());
    if (l.isValid() && r.isValid()) {
        if (l.typeId() == QMetaType::QString && r.typeId() == QMetaType::QString)
            return naturalLess(l.toString(), r.toString());
        return QSortFilterProxyModel::lessThan(left, right);
    }
    // A descending sort places x before y when lessThan(y, x): a missing
    // figure is "less" there and "greater" ascending, so it comes last.
    const bool descending = sortOrder() == Qt::DescendingOrder;
    if (!l.isValid() && r.isValid())
        return descending;
    if (l.isValid() && !r.isValid())
        return !descending;
    return false;
}
