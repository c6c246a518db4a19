#pragma once

#include "ckptscope/runseries.h"

#include <QAbstractListModel>

#include <memory>

// Every tensor of any checkpoint of a run (a flat list in order of first
// appearance; a name repeated within a file shows its occurrence).
class RunTensorModel : public QAbstractListModel {
    Q_OBJECT
public:
    explicit RunTensorModel(QObject* parent = nullptr);
    void setSeries(std::shared_ptr<const std::vector<ckptscope::TensorSeries>> series);
    const ckptscope::TensorSeries* seriesAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const std::vector<ckptscope::TensorSeries>> m_series;
};
