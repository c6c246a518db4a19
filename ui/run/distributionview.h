#pragma once

#include "ckptscope/run/serieshistograms.h"
#include "ckptscope/stats/histogrampercentiles.h"

#include <QWidget>

#include <array>
#include <memory>

class BackgroundTask;
class HeatmapView;
class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QStackedWidget;

// One tensor's distribution over a run's steps, from the fine histograms of
// the summaries: nested percentile bands (0–100, 7–93, 16–84, 31–69) with the
// median, as TensorBoard's distributions, or the per-step histograms as a
// heatmap (step × value). The histograms are read (off the GUI thread) for
// the selected tensor only, and dropped when the selection changes.
class DistributionView : public QWidget {
    Q_OBJECT
public:
    static constexpr int kHeatmapBins = 64;
    using Percentiles = std::array<double, ckptscope::kDistributionPercentiles.size()>;

    explicit DistributionView(QWidget* parent = nullptr);
    ~DistributionView() override;

    void setRun(std::shared_ptr<const ckptscope::Run> run,
                std::shared_ptr<const std::vector<ckptscope::TensorSeries>> series);
    void setSelectedTensor(const QString& name);
    void showHeatmap(bool on);

    // For tests: the tensor shown, its percentiles per checkpoint (nothing
    // where it has no histogram), what hovering at a checkpoint shows, and
    // whether the histograms are still being read.
    QString tensor() const { return m_name; }
    const std::vector<std::optional<Percentiles>>& percentiles() const { return m_percentiles; }
    QString hoverText(size_t checkpoint) const;
    bool isLoading() const;
    void waitForLoaded();
    QChart* bandChart() const;
    HeatmapView* heatmap() const { return m_heatmap; }
    QLabel* note() const { return m_note; }

private:
    void load();
    void present(ckptscope::SeriesHistograms histograms);
    void clearCharts(const QString& message);
    void drawBands();
    void drawHeatmap();

    std::shared_ptr<const ckptscope::Run> m_run;
    std::shared_ptr<const std::vector<ckptscope::TensorSeries>> m_series;
    QString m_name;
    std::vector<std::optional<ckptscope::Histogram>> m_histograms;
    std::vector<std::optional<Percentiles>> m_percentiles;
    std::vector<double> m_x;
    QComboBox* m_mode;
    QLabel* m_note;
    QStackedWidget* m_stack;
    QChartView* m_bands;
    HeatmapView* m_heatmap;
    std::unique_ptr<BackgroundTask> m_task;
};
