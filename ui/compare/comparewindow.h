#pragma once

#include "common/backgroundtask.h"
#include "compare/compareresult.h"

#include <QMainWindow>

#include <array>
#include <memory>

struct CompareDetail;
class CompareFieldsModel;
class CompareGraphPage;
class CompareOptimizerPage;
class CompareFilterProxy;
class CompareHistogramView;
class CompareMetadataModel;
class CompareStatsModel;
class CompareTensorModel;
class CompareValuesModel;
class HistogramView;
class NotificationBar;
class ReloadWatcher;
class QCheckBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSplitter;
class QStandardItemModel;
class QTabWidget;
class QTableView;
class QTimer;
class QTreeView;

// Two checkpoints compared, A the reference: for tensor files the list of
// tensors with their status, a summary bar, and for the selected tensor both
// sides' statistics, the two histograms overlaid on the same bins and the
// histogram of B − A; the metadata old and new. For gradient checkpoints the
// list of changes (fields, nodes, edges, optimizer blobs). Everything is
// computed off the GUI thread with progress and cancel; each side is
// compared again when its file changes on disk.
class CompareWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit CompareWindow(QWidget* parent = nullptr);
    ~CompareWindow() override;

    // Opens both files and compares them (replacing any comparison shown
    // only once this one succeeded).
    void compare(const QString& pathA, const QString& pathB);
    void swapSides();
    void recompare();
    void cancel();

    QString pathA() const { return m_pathA; }
    QString pathB() const { return m_pathB; }
    const CompareResult* result() const { return m_result.get(); }
    QString errorText() const;
    QString summaryText() const;

    CompareTensorModel* tensorModel() const { return m_tensorModel; }
    CompareFilterProxy* tensorProxy() const { return m_proxy; }
    CompareMetadataModel* metadataModel() const { return m_metadataModel; }
    CompareStatsModel* statsModel() const { return m_statsModel; }
    CompareValuesModel* valuesModel() const { return m_valuesModel; }
    QStandardItemModel* changesModel() const { return m_changesModel; }
    CompareHistogramView* overlayView() const { return m_overlay; }
    HistogramView* deltaView() const { return m_delta; }
    QTreeView* tensorView() const { return m_tensorView; }
    QTableView* statsView() const { return m_statsView; }
    // Gradient comparisons: the union graph, the fields, the optimizer state.
    CompareGraphPage* graphPage() const { return m_graphPage; }
    CompareFieldsModel* fieldsModel() const { return m_fieldsModel; }
    CompareOptimizerPage* optimizerPage() const { return m_optimizerPage; }
    QTabWidget* tabs() const { return m_tabs; }
    QWidget* metadataPage() const { return m_metadataPage; }
    void setDifferencesOnly(bool on);
    // Elements count as equal when |b - a| <= atol + rtol |a| (texts as the
    // fields take them, empty for 0); compares again when they change.
    // False, changing nothing, when either text is not a tolerance.
    bool setTolerance(const QString& atol, const QString& rtol);
    QLineEdit* atolEdit() const { return m_atolEdit; }
    QLineEdit* rtolEdit() const { return m_rtolEdit; }
    // Selects the tensor at this index of TensorDiff::tensors (its row in
    // the tree wherever that is), opening the groups above it.
    void selectTensor(int tensor);

Q_SIGNALS:
    void comparisonFinished();
    void comparisonFailed(const QString& message);
    void detailShown(int sourceRow);

protected:
    void changeEvent(QEvent* event) override;

private:
    void buildUi();
    void buildToolBar();
    void buildMenus(); // comparewindowmenus.cpp
    QWidget* buildTensorList();
    QWidget* buildTensorPage();
    void buildTablePages();
    void buildGradientPages();
    void buildStatusBar();
    void connectViews();
    void showResult(std::shared_ptr<CompareResult> result);
    void showFailure(const QString& message);
    void showTensor(int sourceRow);
    void showGradientPages(bool on);
    int treeWidth() const;
    // The name column as wide as the names shown (namecolumn.h), measured.
    void fitNameColumn();
    // The same width as last measured, capped for the tree's width now.
    void capNameColumn();
    // Every tree column as wide as its contents, then the name column fitted.
    void fitTreeColumns();
    void fitTreeWidth(int detailWidth);
    void fitStats();
    // The Values page's columns as wide as their dtypes' widest values.
    void fitValuesColumns();
    // On the Values page: the detail side wide enough for its columns whole.
    void fitValuesWidth();
    void showDetail(int sourceRow, const CompareDetail& detail);
    void updateTitle();
    // Each side's files (every shard of a model) watched for a writer.
    void watchSides();
    // Compares the two paths again (recompare without forgetting the files
    // whose change started it).
    void startComparison();

    QString m_pathA, m_pathB;
    std::shared_ptr<CompareResult> m_result;
    std::shared_ptr<const ckptscope::TensorDiff> m_tensorDiff;
    int m_detailRow = -1;
    // What a comparison of the same pair again shows (reload, swap).
    struct KeptView {
        QString tensor;
        QWidget* page = nullptr;
    };
    KeptView m_keep;
    // The tolerance the next comparison uses, and the one of the comparison
    // shown (only the newest comparison's result is delivered).
    struct Tolerance {
        double atol = 0, rtol = 0;
        QString atolText = QStringLiteral("0"), rtolText = QStringLiteral("0");
    };
    Tolerance m_tolerance, m_shownTolerance;
    void applyToleranceFields();

    BackgroundTask m_task{this};       // the comparison
    BackgroundTask m_detailTask{this}; // the selected tensor's statistics
    NotificationBar* m_notification;
    QLabel* m_summary;
    QLineEdit* m_filter;
    QCheckBox* m_differencesOnly;
    // The toolbar entries of the two above: tensor comparisons only.
    QList<QAction*> m_tensorToolActions;
    QList<QAction*> m_tensorMenuActions; // View ▸ Filter Tensors, Differences Only
    QAction* m_swapAction;
    QAction* m_reloadAction;
    QLineEdit* m_atolEdit;
    QLineEdit* m_rtolEdit;
    QTabWidget* m_tabs;
    QTreeView* m_tensorView;
    CompareTensorModel* m_tensorModel;
    CompareFilterProxy* m_proxy;
    QLabel* m_tensorTitle;
    QTableView* m_statsView;
    QSplitter* m_split;
    QSplitter* m_detailSplit;
    bool m_statsHeightFitted = false;
    int m_namesWidth = 0;  // the widest name shown, as fitNameColumn measured it
    int m_statsWidth = 0;  // the detail side's width fitStats found (0: not yet)
    int m_figureLeast = 0; // the statistics header's own least section size
    CompareStatsModel* m_statsModel;
    CompareHistogramView* m_overlay;
    HistogramView* m_delta;
    CompareMetadataModel* m_metadataModel;
    CompareValuesModel* m_valuesModel;
    QWidget* m_valuesPage = nullptr;
    QWidget* m_metadataPage;
    QStandardItemModel* m_changesModel;
    QWidget* m_tensorPage;
    QWidget* m_tensorListPanel;
    QProgressBar* m_progress;
    QPushButton* m_cancel;
    ReloadWatcher* m_watch[2];  // sides A and B
    QStringList m_changedFiles; // what made the comparison now running start
    // The paths of the comparison running, and of the one shown.
    std::array<QString, 2> m_comparing, m_compared;
    CompareGraphPage* m_graphPage;
    CompareFieldsModel* m_fieldsModel;
    QTableView* m_fieldsView;
    CompareOptimizerPage* m_optimizerPage;
};
