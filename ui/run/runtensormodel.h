#pragma once

#include "ckptscope/run/runseries.h"
#include "tensor/nametreemodel.h"

#include <memory>

// Every tensor of any checkpoint of a run as a tree: names split on '.' and
// '/' in natural order (the tensor dock's NameTreeModel), a name repeated within
// a file showing its occurrence. A tensor holding NaN/Inf in some
// checkpoint is marked, and so are the groups above it. The roles are the
// tensor dock's (TensorTreeModel), so TensorFilterProxy filters it.
class RunTensorModel : public NameTreeModel {
    Q_OBJECT
public:
    enum Column { Name, ColumnCount };

    explicit RunTensorModel(QObject* parent = nullptr);
    // `run` is the run the series were made from (for the NaN/Inf marks).
    void setSeries(std::shared_ptr<const ckptscope::Run> run,
                   std::shared_ptr<const std::vector<ckptscope::TensorSeries>> series);
    const ckptscope::TensorSeries* seriesAt(int series) const;
    // The series index of a tree index (-1 for a group).
    int seriesOf(const QModelIndex& index) const;
    QModelIndex indexOfSeries(int series) const;
    // The series with this name and occurrence, or -1.
    int findSeries(const std::string& name, size_t occurrence) const;
    // Checkpoints in which the series holds NaN or ±Inf.
    size_t nonFiniteCheckpoints(int series) const;

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const ckptscope::Run> m_run;
    std::shared_ptr<const std::vector<ckptscope::TensorSeries>> m_series;
    std::vector<size_t> m_nonFinite; // per series: checkpoints with NaN/Inf
    std::vector<bool> m_marked;      // per node: it or a tensor below holds NaN/Inf
};
