#pragma once

#include "export/exportcontext.h"

#include "ckptscope/document/document.h"

#include <QMainWindow>
#include <QStringList>

#include <memory>

class DocumentLoader;
class GraphPage;
class MetadataModel;
class MetadataView;
class NodeList;
class NotificationBar;
class OptimizerStateView;
class OverviewPage;
class QDockWidget;
class QLineEdit;
class QMenu;
class QProgressBar;
class QToolButton;
class QSortFilterProxyModel;
class QStackedWidget;
class QTabWidget;
class QTreeView;
class RecentFiles;
class ReloadWatcher;
class StartPage;
class TensorDock;
class OptimizerFigures;
class TensorPage;
class TensorTreeModel;
class TensorValuesView;
class ValueScanBar;

// One window per open file: tensor tree dock, overview, metadata, tensor
// statistics with histogram, and values. Files open off the GUI thread; a
// failed open reports the core's message and keeps the current document.
// Other windows open through the WindowRegistry; File and Tensor's export
// entries (ExportActions) see this window as their ExportContext.
class MainWindow : public QMainWindow, public ExportContext {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens asynchronously; documentLoaded or loadFailed follows. Paths
    // starting with ":/" are bundled resources.
    void openFile(const QString& path);
    void reload();
    std::shared_ptr<const ckptscope::Document> document() const override { return m_document; }
    QString currentPath() const override { return m_path; }
    // The file shown, or the one being opened in its place.
    QString requestedPath() const { return m_requestedPath; }
    bool isLoading() const;
    bool isScanning() const;

    // For tests and the screenshot script.
    QTreeView* tensorTree() const override;
    TensorTreeModel* tensorModel() const;
    QSortFilterProxyModel* tensorProxy() const;
    QLineEdit* filterEdit() const;
    MetadataModel* metadataModel() const;
    MetadataView* metadataView() const { return m_metadataView; }
    TensorPage* tensorPage() const override { return m_tensorPage; }
    TensorValuesView* valuesView() const override { return m_valuesView; }
    NotificationBar* notificationBar() const { return m_bar; }
    // The red banner of a file whose pickle would run code when loaded.
    NotificationBar* unsafeBanner() const { return m_unsafeBar; }
    QTabWidget* tabs() const { return m_tabs; }
    GraphPage* graphPage() const { return m_graphPage; }
    NodeList* nodeList() const { return m_nodeList; }
    bool selectTensor(const QString& fullName);
    // View ▸ Find (Ctrl+F): its text names the search it will focus.
    QAction* findAction() const { return m_findAction; }
    // Applies the filter box now (it otherwise waits for a pause in typing).
    void applyFilter();

    // ExportContext: export dialogs and messages belong to this window.
    QWidget* dialogParent() override { return this; }
    void showStatus(const QString& message, int timeoutMs) override;

Q_SIGNALS:
    void documentLoaded(const QString& path);
    void loadFailed(const QString& path, const QString& message);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    void buildPages();
    void buildStatusBar();
    void buildDocks();
    void buildActions();
    void restoreSettings();
    void find();
    void updateFindAction();
    // Dock layouts are kept per file kind ("oxck", "gradient"): a graph's
    // narrow node list must not squeeze the next OXCK file's tensor tree.
    void switchLayout(const QString& kind);
    void defaultLayout(const QString& kind);
    void setDocument(std::shared_ptr<const ckptscope::Document> document, const QString& path,
                     bool keepView);
    void showTensor(int tensor);
    void showOptimizerFigure();
    void showStateTensor(const QString& file, const QString& tensor);
    void updateRecentMenu();
    void openDialog();
    void openUrlDialog();
    void offerReload(const QString& message);
    // Reloads the file shown; `changedFiles`: what the watcher saw change.
    void reloadFor(const QStringList& changedFiles);
    // The notice after a reload: what changed, as the watcher saw it.
    QString reloadMessage() const;
    void showUnsafeCalls();
    void onLoaded(const QString& path, std::shared_ptr<const ckptscope::Document> doc);
    void onLoadFailed(const QString& path, const QString& error);
    // Back to the file shown before a load that failed or was cancelled.
    void endLoad();
    void cancelLoad();

    std::shared_ptr<const ckptscope::Document> m_document;
    QString m_path;
    // What the newest openFile() asked for; older results never arrive.
    QString m_requestedPath;
    bool m_pendingReload = false;
    QStringList m_reloadCause; // the files whose change set off the reload
    QString m_pendingKeep;     // tensor to reselect after a reload
    bool m_restoring = false;  // reselecting after a reload: keep the tab
    QString m_layoutKind;      // the file kind whose dock layout is on show

    RecentFiles* m_recent;
    DocumentLoader* m_loader;
    ReloadWatcher* m_reloadWatcher;
    NotificationBar* m_bar = nullptr;
    NotificationBar* m_unsafeBar = nullptr;
    QStackedWidget* m_stack = nullptr;
    StartPage* m_start = nullptr;
    QTabWidget* m_tabs = nullptr;
    OverviewPage* m_overview = nullptr;
    MetadataView* m_metadataView = nullptr;
    OptimizerFigures* m_optimizerFigures = nullptr;
    TensorPage* m_tensorPage = nullptr;
    TensorValuesView* m_valuesView = nullptr;
    GraphPage* m_graphPage = nullptr;
    OptimizerStateView* m_optimizerView = nullptr;
    TensorDock* m_tensorDock = nullptr;
    QDockWidget* m_nodeDock = nullptr;
    NodeList* m_nodeList = nullptr;
    QMenu* m_recentMenu = nullptr;
    QProgressBar* m_busy = nullptr;
    QToolButton* m_cancelLoad = nullptr;
    QAction* m_reloadAction = nullptr;
    QAction* m_findAction = nullptr;
    ValueScanBar* m_scanBar = nullptr;
};
