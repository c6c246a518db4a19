#pragma once

#include <QSortFilterProxyModel>

// Sorts any flat model by its sort role: text in natural order
// ("layers.2" before "layers.10", naturalLess), numbers by value.
class NaturalSortProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit NaturalSortProxy(QObject* parent = nullptr);

protected:
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};
