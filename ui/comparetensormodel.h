#pragma once

#include "ckptscope/tensordiff.h"

#include <QAbstractTableModel>
#include <QColor>
#include <QIcon>

#include <memory>

// One row per compared tensor (A's order, then B-only ones): status with a
// colour and an icon, shapes, and the figures that rank changes. SortRole
// gives numbers for the numeric columns, nothing where a figure is missing.
class CompareTensorModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Status, Shape, RelL2, MaxAbsDiff, Differing, Count, ColumnCount };
    enum Role { SortRole = Qt::UserRole + 1, StatusRole };

    explicit CompareTensorModel(QObject* parent = nullptr);
    void setDiff(std::shared_ptr<const ckptscope::TensorDiff> diff);
    const ckptscope::TensorDiffEntry* entry(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    static QString statusText(ckptscope::DiffStatus status);
    static QColor statusColor(ckptscope::DiffStatus status);
    static QIcon statusIcon(ckptscope::DiffStatus status);

private:
    std::shared_ptr<const ckptscope::TensorDiff> m_diff;
};
