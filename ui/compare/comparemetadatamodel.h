#pragma once

#include "ckptscope/diff/tensordiff.h"

#include <QAbstractTableModel>

#include <vector>

// Metadata of both sides, one row per key (sorted): the old (A) and new (B)
// value and the status; rows that differ are tinted in their status colour.
class CompareMetadataModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Key, Status, ValueA, ValueB, ColumnCount };

    explicit CompareMetadataModel(QObject* parent = nullptr);
    void setRows(std::vector<ckptscope::MetadataDiffEntry> rows);
    const std::vector<ckptscope::MetadataDiffEntry>& rows() const { return m_rows; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<ckptscope::MetadataDiffEntry> m_rows;
};
