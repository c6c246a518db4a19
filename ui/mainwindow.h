#pragma once

#include "ckptscope/document.h"

#include <QMainWindow>

#include <memory>

class GraphPage;
class MetadataModel;
class OptimizerStateView;
class NotificationBar;
class OverviewPage;
class QCheckBox;
class QDockWidget;
class QFileSystemWatcher;
class QLineEdit;
class QMenu;
class QProgressBar;
class QSortFilterProxyModel;
class QStackedWidget;
class QTabWidget;
class QTableView;
class QTimer;
class QTreeView;
class RecentFiles;
class StartPage;
class TensorPage;
class TensorTreeModel;
class TensorValuesView;
class ValueScanner;

// One window per open file: tensor tree dock, overview, metadata, tensor
// statistics with histogram, and values. Files open off the GUI thread; a
// failed open reports the core's message and keeps the current document.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens asynchronously; documentLoaded or loadFailed follows. Paths
    // starting with ":/" are bundled resources.
    void openFile(const QString& path);
    void reload();
    std::shared_ptr<const ckptscope::Document> document() const { return m_document; }
    QString currentPath() const { return m_path; }
    bool isLoading() const { return m_loading > 0; }
    bool isScanning() const;

    // For tests and the screenshot script.
    QTreeView* tensorTree() const { return m_tree; }
    TensorTreeModel* tensorModel() const { return m_treeModel; }
    QSortFilterProxyModel* tensorProxy() const { return m_treeProxy; }
    QLineEdit* filterEdit() const { return m_filter; }
    MetadataModel* metadataModel() const { return m_metadataModel; }
    TensorPage* tensorPage() const { return m_tensorPage; }
    TensorValuesView* valuesView() const { return m_valuesView; }
    NotificationBar* notificationBar() const { return m_bar; }
    QTabWidget* tabs() const { return m_tabs; }
    GraphPage* graphPage() const { return m_graphPage; }
    OptimizerStateView* optimizerView() const { return m_optimizerView; }
    bool selectTensor(const QString& fullName);

Q_SIGNALS:
    void documentLoaded(const QString& path);
    void loadFailed(const QString& path, const QString& message);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    void buildActions();
    void buildDock();
    void setDocument(std::shared_ptr<const ckptscope::Document> document, const QString& path,
                     bool keepView);
    void showTensor(int tensor);

public:
    // Applies the filter box now (it otherwise waits for a pause in typing).
    void applyFilter();

private:
    void updateRecentMenu();
    void openDialog();
    void watch(const QString& path);
    void offerReload(const QString& message);
    void onLoaded(const QString& path, std::shared_ptr<const ckptscope::Document> doc,
                  const QString& error, bool isReload, const QString& keepTensor, int serial);

    std::shared_ptr<const ckptscope::Document> m_document;
    QString m_path;
    int m_loading = 0;
    int m_loadSerial = 0;     // the newest openFile(); older results are dropped
    bool m_restoring = false; // reselecting after a reload: keep the tab
    bool m_filtering = false; // the proxy moves the current row: not a choice
    QTimer* m_filterTimer = nullptr;

    RecentFiles* m_recent;
    NotificationBar* m_bar;
    QStackedWidget* m_stack;
    StartPage* m_start;
    QTabWidget* m_tabs;
    OverviewPage* m_overview;
    MetadataModel* m_metadataModel;
    QTableView* m_metadataView;
    TensorPage* m_tensorPage;
    TensorValuesView* m_valuesView;
    GraphPage* m_graphPage;
    OptimizerStateView* m_optimizerView;
    QDockWidget* m_tensorDock = nullptr;
    QDockWidget* m_nodeDock = nullptr;
    TensorTreeModel* m_treeModel;
    QSortFilterProxyModel* m_treeProxy;
    QTreeView* m_tree;
    QLineEdit* m_filter;
    QCheckBox* m_regex;
    QMenu* m_recentMenu;
    QProgressBar* m_busy;
    QFileSystemWatcher* m_watcher;
    QTimer* m_reloadTimer;
    int m_reloadAttempts = 0;
    QAction* m_reloadAction;
    ValueScanner* m_scanner;
    QProgressBar* m_scanProgress;
};
