#pragma once

#include <QSortFilterProxyModel>

// Filters and sorts the compare tree (CompareTensorModel): "differences
// only" hides unchanged tensors and the text filter matches full tensor
// names, both keeping the groups above a tensor shown; sorting is by
// numbers (CompareTensorModel::SortRole, a group by its largest figure)
// with tensors without a figure last in either order, names in natural
// order.
class CompareFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit CompareFilterProxy(QObject* parent = nullptr);
    void setDifferencesOnly(bool on);
    bool differencesOnly() const { return m_differencesOnly; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

private:
    bool m_differencesOnly = false;
};
