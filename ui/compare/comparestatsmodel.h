#pragma once

#include "ckptscope/diff/elementdiff.h"
#include "ckptscope/stats/tensorstats.h"

#include <QAbstractTableModel>

#include <optional>

class QTableView;

// One tensor's statistics of A and B side by side, then the Δ statistics
// of the comparison (B − A) in a column of their own. Empty cells where a
// side or the comparison does not exist.
class CompareStatsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Label, SideA, SideB, Delta, ColumnCount };

    explicit CompareStatsModel(QObject* parent = nullptr);
    void setValues(std::optional<ckptscope::TensorStats> a, std::optional<ckptscope::TensorStats> b,
                   std::optional<ckptscope::ElementDiff> delta);
    void clear();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString label, a, b, delta, tipA, tipB, tipDelta;
    };
    std::vector<Row> m_rows;
};

// Shows a CompareStatsModel: the statistic names whole ("rel. L2 change over
// finite pairs"), the three figure columns sharing the rest of the width
// (CompareWindow::fitStats keeps them from going below their widest text).
void showCompareStats(QTableView* view, CompareStatsModel* model);
