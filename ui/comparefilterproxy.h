#pragma once

#include <QSortFilterProxyModel>

// Sorts the compare table by numbers (CompareTensorModel::SortRole) and
// keeps tensors without a figure last in either order, and hides unchanged
// tensors when "differences only" is on; the text filter
// matches tensor names.
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
