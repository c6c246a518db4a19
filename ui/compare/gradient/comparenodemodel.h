#pragma once

#include "ckptscope/diff/tensordiff.h"
#include "ckptscope/formats/gradient/computationnode.h"

#include <QAbstractTableModel>

#include <optional>

// One node of two compared graphs, field by field: id, op, inputs, output
// and gradient CIDs and each metadata key, A's value beside B's. Rows that
// differ carry the status icon and colour; a side without the node is empty.
class CompareNodeModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Field, SideA, SideB, ColumnCount };
    enum Role { StatusRole = Qt::UserRole + 1 };

    explicit CompareNodeModel(QObject* parent = nullptr);
    void setNodes(const ckptscope::ComputationNode* a, const ckptscope::ComputationNode* b);
    void clear() { setNodes(nullptr, nullptr); }
    // The row of a field ("op", "metadata.shape"), or -1.
    int rowOf(const QString& field) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString field;
        std::optional<QString> a, b; // empty: the side has no such field
        ckptscope::DiffStatus status = ckptscope::DiffStatus::Same;
    };
    std::vector<Row> m_rows;
};
