#pragma once

#include "ckptscope/document/document.h"

#include <QAbstractTableModel>

#include <memory>
#include <optional>
#include <vector>

class ValueCache;

// The values of one tensor as a table that reads only what is shown: 1-D as
// a column, 2-D as a grid, N-D as the 2-D slice of the last two dimensions
// at fixed leading indices. Values come from a ValueCache: read in chunks
// off the GUI thread (a cell shows "…" until its chunk arrives), kept in a
// bounded cache, so a 100M-value tensor, or one on a slow server, scrolls
// without the window waiting.
class TensorValuesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    explicit TensorValuesModel(QObject* parent = nullptr);

    // tensor < 0 clears the table.
    void setTensor(std::shared_ptr<const ckptscope::Document> document, int tensor);
    // Leading indices for N-D tensors (one per dimension before the last two).
    void setLeadingIndices(std::vector<uint64_t> indices);
    const std::vector<uint64_t>& leadingIndices() const { return m_leading; }
    // Dimensions of the slice selectors (empty unless N-D).
    std::vector<uint64_t> leadingDimensions() const;
    // True when rows/columns had to be capped at what a view can address.
    bool truncated() const { return m_truncated; }
    // Linear element index of a cell, for tooltips and tests.
    uint64_t linearIndex(int row, int column) const;
    // Why the table is a flat column although the tensor has a shape (the
    // shape does not match the stored values); empty otherwise.
    QString layoutNote() const;
    // The tensor's dtype (none without a tensor): its values' widest text.
    std::optional<ckptscope::Dtype> dtype() const;
    // Chunks asked for and not read yet (tests wait for 0).
    size_t pendingReads() const;
    // The text a cell shows while its values are being read.
    static QString placeholder();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    // Reading from the file failed (for example, it changed on disk).
    void readFailed(const QString& message) const;

private:
    static constexpr size_t kMaxChunks = 256; // chunks kept: up to 8 MiB of stored values

    void layout();

    std::shared_ptr<const ckptscope::Document> m_document;
    int m_tensor = -1;
    std::vector<uint64_t> m_leading;
    uint64_t m_rows = 0, m_cols = 0, m_base = 0;
    bool m_truncated = false;
    bool m_matrix = false;

    ValueCache* m_values;
};
