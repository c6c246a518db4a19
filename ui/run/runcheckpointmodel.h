#pragma once

#include "ckptscope/run/run.h"

#include <QAbstractTableModel>

#include <memory>

// The checkpoints of a run, one row each in step order: step, file, size,
// modification time (UTC), how many tensors hold NaN/Inf (with a warning
// mark) and the Trainer's side files beside it (a count; the names in the
// tooltip). Sortable through SortRole (NaturalSortProxy).
class RunCheckpointModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // NaN/Inf next to the step: in view however narrow the list.
    enum Column { Step, NonFinite, File, Size, Modified, SideFiles, ColumnCount };
    // Numbers for step (none last), size, time and NaN/Inf; the name for File.
    static constexpr int SortRole = Qt::UserRole + 1;

    explicit RunCheckpointModel(QObject* parent = nullptr);
    void setRun(std::shared_ptr<const ckptscope::Run> run);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const ckptscope::Run> m_run;
    std::vector<uint64_t> m_nonFinite; // tensors with NaN/Inf, per checkpoint
};
