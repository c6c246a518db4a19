#pragma once

#include "ckptscope/diff/tensordiff.h"
#include "ckptscope/document/document.h"
#include "ckptscope/export/valuechunk.h"

#include <QAbstractTableModel>
#include <QColor>

class ValueCache;

#include <memory>
#include <optional>
#include <string>
#include <vector>

// A, B and Δ = B − A of one compared tensor, one row per stored value (flat
// index), reading only the rows shown: chunks of values from each file read
// off the GUI thread by a ValueCache per side (a cell shows "…" until its
// chunk arrives), a few kept. Rows that differ (exact comparison: NaN equals NaN, -0 equals
// +0) are tinted; a side without the tensor, or past its end, is empty.
// Values show exactly, as the main Values page and export spell them
// (ValueChunk): 64-bit integers and F64 whole, not rounded through a float
// or a double; Δ is the shortest text of the difference in double.
class CompareValuesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Index, ValueA, ValueB, Delta, ColumnCount };

    explicit CompareValuesModel(QObject* parent = nullptr);
    // The comparison's tolerance: a pair within it is not tinted, as it is
    // not counted as differing. Applies from the next setTensor.
    void setTolerance(double atol, double rtol) {
        m_atol = atol;
        m_rtol = rtol;
    }
    void setTensor(std::shared_ptr<const ckptscope::Document> a,
                   std::shared_ptr<const ckptscope::Document> b,
                   const ckptscope::TensorDiffEntry* entry);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    // The dtypes of A's and B's tensors (none: that side lacks it), for
    // columns as wide as their widest value.
    std::optional<ckptscope::Dtype> dtypeA() const { return dtypeOf(m_a); }
    std::optional<ckptscope::Dtype> dtypeB() const { return dtypeOf(m_b); }
    // Chunks asked for and not read yet, both sides (tests wait for 0).
    size_t pendingReads() const;

Q_SIGNALS:
    // Reading from a file failed (for example, it changed on disk).
    void readFailed(const QString& message);

private:
    double m_atol = 0, m_rtol = 0;
    struct Side {
        ValueCache* values = nullptr;
        std::optional<size_t> tensor;
        uint64_t count = 0;
        // B's rows against A's (a Llama GGUF's q/k): row r of the page is
        // element element(r) of this side.
        ckptscope::RowOrder order;
        uint64_t rows = 0, rowLength = 0;
        uint64_t element(uint64_t row) const { return order.elementOfB(row, rows, rowLength); }
    };
    // The chunk holding `row` of a side, or null (no such value, not read
    // yet, or a read error).
    const ckptscope::ValueChunk* pageOf(const Side& side, uint64_t row) const;
    // The side holds `row` but its values are still being read.
    bool reading(const Side& side, uint64_t row) const;
    // The value at `row` of a side, or nothing.
    std::optional<double> value(const Side& side, uint64_t row) const;
    QVariant text(const Side& side, uint64_t row) const;
    // B − A at `row` in decimal when both sides are integers, exact (none
    // otherwise).
    std::optional<std::string> integerDelta(uint64_t row) const;
    // A row where a side holds complex values: A, B and Δ as pairs, the
    // tint by the complex elementsDiffer.
    QVariant complexData(int column, int role, uint64_t row) const;
    // The tint of a row whose values differ (or that only one side holds).
    static QColor changedTint(bool inA, bool inB);
    // The dtype of a side's tensor (none: the side lacks it).
    std::optional<ckptscope::Dtype> dtypeOf(const Side& side) const;

    Side m_a, m_b;
    int m_rows = 0;
};
