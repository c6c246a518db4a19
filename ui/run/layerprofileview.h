#pragma once

#include "ckptscope/run/layerprofile.h"

#include <QWidget>

#include <memory>

class HeatmapView;
class QCheckBox;
class QComboBox;
class QLabel;

// The layer profile of a run: for a family of tensors that differ by one
// number (layers.{N}.…), a heatmap of layer × step of one statistic, so a
// layer that drifts or explodes stands out. Clicking a cell chooses that
// layer's tensor; the tensor selected elsewhere is outlined (and its family
// shown when the current family does not hold it).
class LayerProfileView : public QWidget {
    Q_OBJECT
public:
    explicit LayerProfileView(QWidget* parent = nullptr);

    void setRun(std::shared_ptr<const ckptscope::Run> run,
                std::shared_ptr<const std::vector<ckptscope::TensorSeries>> series);
    void setSelectedTensor(const QString& name);
    // Chooses the statistic named (layerStatisticName, case-insensitive);
    // false when there is none of that name.
    bool setStatistic(const QString& name);

    const std::vector<ckptscope::LayerFamily>& families() const { return m_families; }
    const ckptscope::LayerProfile& profile() const { return m_profile; }
    int currentFamily() const;
    HeatmapView* heatmap() const { return m_heatmap; }
    QComboBox* familyChooser() const { return m_family; }
    QComboBox* statisticChooser() const { return m_statistic; }
    QCheckBox* logScale() const { return m_log; }

Q_SIGNALS:
    void tensorChosen(const QString& name);

private:
    void refresh();
    // The row of a tensor in family f, -1 when it is not one of its members.
    int familyRow(int f, const QString& name) const;
    QString cellText(int row, int col) const;
    const ckptscope::TensorSeries* member(int row) const;

    std::shared_ptr<const ckptscope::Run> m_run;
    std::shared_ptr<const std::vector<ckptscope::TensorSeries>> m_series;
    std::vector<ckptscope::LayerFamily> m_families;
    ckptscope::LayerProfile m_profile;
    QString m_selected;
    QComboBox* m_family;
    QComboBox* m_statistic;
    QCheckBox* m_log;
    QLabel* m_meaning;
    HeatmapView* m_heatmap;
};
