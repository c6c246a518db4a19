#include "common/naturalsortproxy.h"

#include "common/naturalorder.h"

NaturalSortProxy::NaturalSortProxy(QObject* parent) : QSortFilterProxyModel(parent) {}

bool NaturalSortProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    const QVariant a = left.data(sortRole()), b = right.data(sortRole());
    if (a.typeId() == QMetaType::QString && b.typeId() == QMetaType::QString)
        return naturalLess(a.toString(), b.toString());
    return QSortFilterProxyModel::lessThan(left, right);
}
