#pragma once

#include "ckptscope/diff/gradientdiff.h"

#include <QAbstractTableModel>

// The optimizer blobs of two gradient checkpoints, one row per name: status
// (colour and icon), the byte counts of A and B, how many bytes differ, and
// read as f32 how many values differ, max |Δ| and the relative L2 change.
// Cells stay empty where a figure does not apply (different lengths, a
// length that is no multiple of 4, a side without the blob).
class CompareBlobModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Name,
        Status,
        BytesA,
        BytesB,
        DifferingBytes,
        DifferingValues,
        MaxAbsDiff,
        RelL2,
        ColumnCount
    };

    explicit CompareBlobModel(QObject* parent = nullptr);
    void setBlobs(std::vector<ckptscope::BlobDiff> blobs);
    const ckptscope::BlobDiff* blob(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<ckptscope::BlobDiff> m_blobs;
};
