#pragma once

#include "ckptscope/diff/tensordiff.h"
#include "ckptscope/document/document.h"

#include <QAbstractTableModel>

#include <map>
#include <memory>
#include <vector>

// A, B and Δ = B − A of one compared tensor, one row per stored value (flat
// index), reading only the rows shown: pages of values from each file, a
// few kept. Rows that differ (exact comparison: NaN equals NaN, -0 equals
// +0) are tinted; a side without the tensor, or past its end, is empty.
// Values show exactly (fmt::exact, as the main Values page): the shortest
// text that reads back to the same value, in float for dtypes a float holds,
// in double for the wider ones (F64, 32/64-bit integers).
class CompareValuesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Index, ValueA, ValueB, Delta, ColumnCount };

    explicit CompareValuesModel(QObject* parent = nullptr);
    void setTensor(std::shared_ptr<const ckptscope::Document> a,
                   std::shared_ptr<const ckptscope::Document> b,
                   const ckptscope::TensorDiffEntry* entry);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Side {
        std::shared_ptr<const ckptscope::Document> doc;
        std::optional<size_t> tensor;
        uint64_t count = 0;
        bool wide = false; // values a float may not hold: shown in double
        mutable std::map<uint64_t, std::vector<double>> pages; // page index → values
    };
    // The value at `row` of a side, or nothing (no such value, or a read error).
    std::optional<double> value(const Side& side, uint64_t row) const;
    static QString text(const Side& side, double v);

    Side m_a, m_b;
    int m_rows = 0;
};
