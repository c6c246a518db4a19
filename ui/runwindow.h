#pragma once

#include "ckptscope/runseries.h"

#include <QFutureWatcher>
#include <QMainWindow>

#include <atomic>
#include <memory>

class QFileSystemWatcher;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableView;
class QListView;
class QTimer;
class DistributionView;
class LayerProfileView;
class MetadataChartView;
class QTabWidget;
class RunChartView;
class RunCheckpointModel;
class RunTensorModel;

// A training run: the checkpoints of folders or files by step, the union of
// their tensors, and the selected tensor's statistics over the steps.
// Summaries are read off the GUI thread (cached ones at once) with progress
// and cancel; the folders are watched, and a changed folder is read again
// after it has been quiet for a moment — a file still being written is
// skipped (it does not read cleanly) until it is complete.
class RunWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit RunWindow(QWidget* parent = nullptr);
    ~RunWindow() override;

    void openPaths(const QStringList& paths);
    // Selects the tensor of that name (its first occurrence); false when none.
    bool selectTensorNamed(const QString& name);
    // Shows the right-hand tab of that title; false when none.
    bool showTab(const QString& title);
    std::shared_ptr<const ckptscope::Run> run() const { return m_run; }
    RunCheckpointModel* checkpointModel() const { return m_checkpoints; }
    RunTensorModel* tensorModel() const { return m_tensors; }
    QListView* tensorView() const { return m_tensorView; }
    RunChartView* chartView() const { return m_charts; }
    QTabWidget* chartTabs() const { return m_tabs; }
    DistributionView* distributionView() const { return m_distribution; }
    LayerProfileView* layerProfileView() const { return m_layers; }
    MetadataChartView* metadataChartView() const { return m_metadata; }

Q_SIGNALS:
    void runLoaded();

private:
    struct Loaded;
    void startLoad();
    void finishLoad();
    void showTensor(int row);
    void watchFolders();

    QStringList m_paths;
    std::shared_ptr<const ckptscope::Run> m_run;
    std::shared_ptr<const std::vector<ckptscope::TensorSeries>> m_series;
    RunCheckpointModel* m_checkpoints;
    RunTensorModel* m_tensors;
    QTableView* m_checkpointView;
    QListView* m_tensorView;
    RunChartView* m_charts;
    QTabWidget* m_tabs;
    DistributionView* m_distribution;
    LayerProfileView* m_layers;
    MetadataChartView* m_metadata;
    QLabel* m_status;
    QProgressBar* m_progress;
    QPushButton* m_cancel;
    QFileSystemWatcher* m_watcher;
    QTimer* m_settle;
    QFutureWatcher<std::shared_ptr<Loaded>> m_load;
    std::shared_ptr<std::atomic<bool>> m_cancelFlag;
    bool m_reloadPending = false;
};
