#pragma once

#include "ckptscope/diff/gradientdiff.h"

#include <QAbstractTableModel>

// The checkpoint fields of two gradient checkpoints (step, loss_cid,
// timestamp): A, B and the status, changed rows marked.
class CompareFieldsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Field, SideA, SideB, Status, ColumnCount };

    explicit CompareFieldsModel(QObject* parent = nullptr);
    void setFields(std::vector<ckptscope::FieldDiff> fields);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    // The titles of a Field, A, B[, Status] table's first `columns` columns;
    // CompareNodeModel shows the first three.
    static QVariant header(int section, Qt::Orientation orientation, int role, int columns);

private:
    std::vector<ckptscope::FieldDiff> m_fields;
};
