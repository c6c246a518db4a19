#include "tensor/tensorfilterproxy.h"

#include "common/naturalorder.h"
#include "tensor/tensortreemodel.h"

TensorFilterProxy::TensorFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
    setRecursiveFilteringEnabled(true); // keep the parents of matches
    setFilterRole(TensorTreeModel::FullNameRole);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
    setSortRole(TensorTreeModel::SortRole);
}

bool TensorFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    const QVariant a = left.data(TensorTreeModel::SortRole);
    const QVariant b = right.data(TensorTreeModel::SortRole);
    if (left.column() == TensorTreeModel::Elements || left.column() == TensorTreeModel::Size)
        return a.toULongLong() < b.toULongLong();
    return naturalLess(a.toString(), b.toString());
}
