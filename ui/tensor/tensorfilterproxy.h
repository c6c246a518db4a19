#pragma once

#include <QSortFilterProxyModel>

// Filters the tensor tree on full names (keeping the parents of matches) and
// sorts it: names in natural order, elements and sizes by value.
class TensorFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit TensorFilterProxy(QObject* parent = nullptr);

protected:
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};
