#pragma once

#include "run/runloader.h"

#include "ckptscope/run/runseries.h"

#include <QMainWindow>

#include <memory>
#include <utility>

class QLabel;
class QLineEdit;
class QModelIndex;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
class QTreeView;
class DistributionView;
class LayerProfileView;
class MetadataChartView;
class QTabWidget;
class RunChartView;
class RunCheckpointModel;
class RunOverview;
class RunTensorModel;

// A training run: the checkpoints of folders or files by step, the union of
// their tensors as a tree, and the selected tensor's statistics over the
// steps. RunLoader reads the run in the background (progress, cancel) and
// again when the folders change; the selected tensor is kept by name. A
// checkpoint opens in a main window (double-click, or a click on a chart),
// or is compared with the one before it (context menus). File, View and
// Help menus with the standard shortcuts, as in every window.
class RunWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit RunWindow(QWidget* parent = nullptr);

    void openPaths(const QStringList& paths);
    // Shows the right-hand tab of that title; false when none.
    bool showTab(const QString& title);
    std::shared_ptr<const ckptscope::Run> run() const { return m_run; }
    // The selected tensor's name ("" for none) and its occurrence within a file.
    QString currentTensorName() const;
    bool selectTensorNamed(const QString& name, size_t occurrence = 0);
    // Files held back at the last read: still being written.
    const std::vector<std::string>& waitingFiles() const { return m_waiting; }

    void openCheckpoint(int checkpoint);
    void compareWithPrevious(int checkpoint);

    RunLoader* loader() const { return m_loader; }
    RunCheckpointModel* checkpointModel() const { return m_checkpoints; }
    QSortFilterProxyModel* checkpointProxy() const { return m_checkpointProxy; }
    QTableView* checkpointView() const { return m_checkpointView; }
    RunTensorModel* tensorModel() const { return m_tensors; }
    QSortFilterProxyModel* tensorProxy() const { return m_tensorProxy; }
    QTreeView* tensorView() const { return m_tensorView; }
    QLineEdit* filterEdit() const { return m_filter; }
    RunChartView* chartView() const { return m_charts; }
    QProgressBar* progressBar() const { return m_progress; }
    QPushButton* cancelButton() const { return m_cancel; }
    QTabWidget* chartTabs() const { return m_tabs; }
    DistributionView* distributionView() const { return m_distribution; }
    LayerProfileView* layerProfileView() const { return m_layers; }
    MetadataChartView* metadataChartView() const { return m_metadata; }
    RunOverview* overview() const { return m_overview; }

Q_SIGNALS:
    void runLoaded();
    // The selected tensor changed (by the user, or gone after a reload).
    void currentTensorChanged(const QString& name);

private:
    QWidget* buildTensorPanel();
    void buildMenus();
    void openDialog();
    void started();
    void showProgress(const RunLoader::Progress& progress);
    void finishLoad(std::shared_ptr<const RunLoader::Result> result);
    void showRun(const RunLoader::Result& loaded);
    void showTensor(int series);
    void checkpointMenu(const QPoint& pos);
    int checkpointOfRow(const QModelIndex& index) const;

    std::shared_ptr<const ckptscope::Run> m_run;
    std::shared_ptr<const std::vector<ckptscope::TensorSeries>> m_series;
    std::vector<std::string> m_waiting;
    int m_shownSeries = -1;
    std::pair<QString, size_t> m_shownKey; // name and occurrence of the tensor shown
    RunLoader* m_loader;
    RunCheckpointModel* m_checkpoints;
    QSortFilterProxyModel* m_checkpointProxy;
    RunTensorModel* m_tensors;
    QSortFilterProxyModel* m_tensorProxy;
    QTableView* m_checkpointView;
    QTreeView* m_tensorView;
    QLineEdit* m_filter;
    RunChartView* m_charts;
    QTabWidget* m_tabs;
    DistributionView* m_distribution;
    LayerProfileView* m_layers;
    MetadataChartView* m_metadata;
    RunOverview* m_overview;
    QLabel* m_status;
    QProgressBar* m_progress;
    QPushButton* m_cancel;
};
