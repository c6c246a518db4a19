#include "mainwindow.h"

#include "graphpage.h"
#include "metadatamodel.h"
#include "notificationbar.h"
#include "optimizerstateview.h"
#include "overviewpage.h"
#include "recentfiles.h"
#include "runwindow.h"
#include "startpage.h"
#include "tensorfilterproxy.h"
#include "tensorpage.h"
#include "tensortreemodel.h"
#include "tensorvaluesmodel.h"
#include "tensorvaluesview.h"
#include "valuescanner.h"

#include "ckptscope/bytesource.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QCloseEvent>
#include <QDateTime>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QRegularExpression>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>
#include <QtConcurrent>

using ckptscope::Document;

namespace {

// Runs on a worker thread: never touches widgets.
std::shared_ptr<const Document> loadDocument(const QString& path) {
    if (path.startsWith(QStringLiteral(":/"))) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            throw ckptscope::OpenError(path.toStdString(), "cannot open the bundled sample");
        const QByteArray bytes = f.readAll();
        auto source = std::make_shared<ckptscope::MemorySource>(
            std::vector<uint8_t>(bytes.begin(), bytes.end()), path.toStdString());
        return Document::open(std::move(source));
    }
    return Document::open(QFile::encodeName(path).toStdString());
}

struct LoadOutcome {
    std::shared_ptr<const Document> document;
    QString error;
};

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_recent(new RecentFiles(this)), m_watcher(new QFileSystemWatcher(this)),
      m_reloadTimer(new QTimer(this)) {
    setAttribute(Qt::WA_DeleteOnClose);
    setAcceptDrops(true);
    setWindowTitle(QStringLiteral("Ckptscope"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/ckptscope.svg")));

    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_bar = new NotificationBar;
    layout->addWidget(m_bar);
    m_stack = new QStackedWidget;
    layout->addWidget(m_stack, 1);
    setCentralWidget(central);

    m_start = new StartPage(m_recent);
    connect(m_start, &StartPage::openRequested, this, &MainWindow::openFile);
    connect(m_start, &StartPage::openDialogRequested, this, &MainWindow::openDialog);
    m_stack->addWidget(m_start);

    m_tabs = new QTabWidget;
    m_tabs->setDocumentMode(true);
    m_overview = new OverviewPage;
    m_tabs->addTab(m_overview, tr("&Overview"));
    m_metadataModel = new MetadataModel(this);
    auto* metaProxy = new QSortFilterProxyModel(this);
    metaProxy->setSourceModel(m_metadataModel);
    m_metadataView = new QTableView;
    m_metadataView->setModel(metaProxy);
    m_metadataView->setSortingEnabled(true);
    m_metadataView->sortByColumn(-1, Qt::AscendingOrder);
    m_metadataView->setWordWrap(true);
    m_metadataView->horizontalHeader()->setStretchLastSection(true);
    m_metadataView->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_metadataView->setSelectionMode(QAbstractItemView::ExtendedSelection);
    auto* copyMeta = new QAction(tr("&Copy"), m_metadataView);
    copyMeta->setShortcut(QKeySequence::Copy);
    copyMeta->setShortcutContext(Qt::WidgetShortcut);
    connect(copyMeta, &QAction::triggered, this, [this] {
        QStringList lines;
        const auto rows = m_metadataView->selectionModel()->selectedRows();
        for (const QModelIndex& r : rows)
            lines << r.data().toString() + QLatin1Char('\t') +
                         r.siblingAtColumn(MetadataModel::Value).data().toString();
        QApplication::clipboard()->setText(lines.join(QLatin1Char('\n')));
    });
    m_metadataView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_metadataView->addAction(copyMeta);
    m_metadataView->setContextMenuPolicy(Qt::ActionsContextMenu);
    m_tabs->addTab(m_metadataView, tr("&Metadata"));
    m_tensorPage = new TensorPage;
    m_tabs->addTab(m_tensorPage, tr("&Tensor"));
    m_valuesView = new TensorValuesView;
    m_tabs->addTab(m_valuesView, tr("&Values"));
    m_graphPage = new GraphPage;
    m_tabs->addTab(m_graphPage, tr("&Graph"));
    m_optimizerView = new OptimizerStateView;
    m_tabs->addTab(m_optimizerView, tr("O&ptimizer State"));
    m_stack->addWidget(m_tabs);

    m_busy = new QProgressBar;
    m_busy->setRange(0, 0); // indeterminate while indexing
    m_busy->setMaximumWidth(140);
    m_busy->setVisible(false);
    statusBar()->addPermanentWidget(m_busy);
    m_scanProgress = new QProgressBar;
    m_scanProgress->setRange(0, 100);
    m_scanProgress->setMaximumWidth(160);
    m_scanProgress->setFormat(tr("scanning %p%"));
    m_scanProgress->setToolTip(tr("Reading every tensor once to flag NaN and ±Inf values"));
    m_scanProgress->setVisible(false);
    statusBar()->addPermanentWidget(m_scanProgress);
    m_scanner = new ValueScanner(this);
    connect(m_scanner, &ValueScanner::nonFinite, this,
            [this](int tensor) { m_treeModel->markNonFinite(tensor); });
    connect(m_scanner, &ValueScanner::progress, this,
            [this](double p) { m_scanProgress->setValue(int(p * 100)); });
    connect(m_scanner, &ValueScanner::finished, m_scanProgress, &QWidget::hide);
    connect(m_scanner, &ValueScanner::failed, this, [this](const QString& message) {
        m_scanProgress->hide();
        offerReload(message);
    });

    buildDock();
    m_nodeDock = new QDockWidget(tr("Nodes"), this);
    m_nodeDock->setObjectName(QStringLiteral("nodeDock"));
    m_nodeDock->setWidget(m_graphPage->nodeList());
    m_graphPage->nodeList()->show();
    addDockWidget(Qt::LeftDockWidgetArea, m_nodeDock);
    m_nodeDock->hide();
    buildActions();

    QSettings settings;
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
        resize(1400, 900);
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    m_tensorPage->setBins(settings.value(QStringLiteral("histogram/bins"), 64).toInt());
    m_tensorPage->setLogScale(settings.value(QStringLiteral("histogram/log"), false).toBool());
    connect(m_tensorPage, &TensorPage::binsChanged, this,
            [](int n) { QSettings().setValue(QStringLiteral("histogram/bins"), n); });
    connect(m_tensorPage, &TensorPage::logScaleChanged, this,
            [](bool on) { QSettings().setValue(QStringLiteral("histogram/log"), on); });
    connect(m_tensorPage, &TensorPage::statsReady, this,
            [this](int tensor, const ckptscope::StatsResult& r) {
                if (r.stats.nan + r.stats.posInf + r.stats.negInf > 0)
                    m_treeModel->markNonFinite(tensor);
            });

    // Reads that find the file changed (truncated or rewritten in place)
    // offer a reload instead of showing stale or mixed values.
    connect(m_tensorPage, &TensorPage::statsFailed, this, &MainWindow::offerReload);
    connect(m_valuesView->model(), &TensorValuesModel::readFailed, this, &MainWindow::offerReload);

    // A training job rewrites the file: wait until it settles, then reload.
    m_reloadTimer->setSingleShot(true);
    m_reloadTimer->setInterval(400);
    connect(m_watcher, &QFileSystemWatcher::fileChanged, this, [this] { m_reloadTimer->start(); });
    connect(m_reloadTimer, &QTimer::timeout, this, [this] {
        if (!m_path.isEmpty() && QFileInfo::exists(m_path)) {
            m_reloadAttempts = 0;
            reload();
        } else if (++m_reloadAttempts < 25) {
            m_reloadTimer->start(); // replaced by rename: try again shortly
        } else {
            m_reloadAttempts = 0; // gone for good: say so instead of polling
            m_bar->showMessage(NotificationBar::Kind::Error,
                               tr("%1 was deleted or moved; the view shows it as it was.")
                                   .arg(m_path.toHtmlEscaped()));
        }
    });
    statusBar()->showMessage(tr("Drop a checkpoint here, or press Ctrl+O"));
}

MainWindow::~MainWindow() = default;

void MainWindow::buildDock() {
    auto* dock = new QDockWidget(tr("Tensors"), this);
    m_tensorDock = dock;
    dock->setObjectName(QStringLiteral("tensorDock"));
    auto* panel = new QWidget;
    auto* layout = new QVBoxLayout(panel);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* filterRow = new QHBoxLayout;
    m_filter = new QLineEdit;
    m_filter->setPlaceholderText(tr("Filter tensors (Ctrl+F)"));
    m_filter->setClearButtonEnabled(true);
    m_regex = new QCheckBox(tr("Regex"));
    m_regex->setToolTip(tr("Treat the filter as a regular expression"));
    filterRow->addWidget(m_filter, 1);
    filterRow->addWidget(m_regex);
    layout->addLayout(filterRow);

    m_treeModel = new TensorTreeModel(this);
    m_treeProxy = new TensorFilterProxy(this);
    m_treeProxy->setSourceModel(m_treeModel);
    m_tree = new QTreeView;
    m_tree->setModel(m_treeProxy);
    m_tree->setUniformRowHeights(true);
    m_tree->setAlternatingRowColors(true);
    m_tree->setSortingEnabled(true); // natural name order by default
    m_tree->sortByColumn(TensorTreeModel::Name, Qt::AscendingOrder);
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->setSectionResizeMode(TensorTreeModel::Name, QHeaderView::Stretch);
    // Keep shape/size columns readable as branches open.
    connect(m_tree, &QTreeView::expanded, this, [this] {
        for (int c = 1; c < TensorTreeModel::ColumnCount; ++c)
            m_tree->resizeColumnToContents(c);
    });
    layout->addWidget(m_tree, 1);
    dock->setWidget(panel);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    resizeDocks({dock}, {520}, Qt::Horizontal);

    // Filter after a short pause in typing: 100k tensors re-filter in ~0.1 s.
    m_filterTimer = new QTimer(this);
    m_filterTimer->setSingleShot(true);
    m_filterTimer->setInterval(200);
    connect(m_filterTimer, &QTimer::timeout, this, &MainWindow::applyFilter);
    connect(m_filter, &QLineEdit::textChanged, m_filterTimer, qOverload<>(&QTimer::start));
    connect(m_regex, &QCheckBox::toggled, this, &MainWindow::applyFilter);
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) {
                if (!m_filtering) // rows moving under the filter are not a choice
                    showTensor(current.data(TensorTreeModel::TensorIndexRole).toInt());
            });
    connect(m_tree, &QTreeView::activated, this, [this](const QModelIndex& idx) {
        if (idx.data(TensorTreeModel::TensorIndexRole).toInt() >= 0)
            m_tabs->setCurrentWidget(m_tensorPage);
    });
}

void MainWindow::buildActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::openDialog);
    open->setShortcut(QKeySequence::Open);
    QAction* openFolder = file->addAction(tr("Open &Folder…"), this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a Training Run"));
        if (dir.isEmpty())
            return;
        auto* run = new RunWindow;
        run->show();
        run->openPaths({dir});
    });
    openFolder->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+O")));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recent, &RecentFiles::changed, this, &MainWindow::updateRecentMenu);
    updateRecentMenu();
    m_reloadAction = file->addAction(tr("&Reload"), this, &MainWindow::reload);
    m_reloadAction->setShortcuts({QKeySequence::Refresh, QKeySequence(Qt::CTRL | Qt::Key_R)});
    m_reloadAction->setEnabled(false);
    QAction* newWindow = file->addAction(tr("&New Window"), this, [] { (new MainWindow)->show(); });
    newWindow->setShortcut(QKeySequence::New);
    file->addSeparator();
    QAction* close = file->addAction(tr("&Close Window"), this, &QWidget::close);
    close->setShortcut(QKeySequence::Close);
    QAction* quit = file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    QAction* find = view->addAction(tr("&Filter Tensors"), this, [this] {
        m_filter->setFocus();
        m_filter->selectAll();
    });
    find->setShortcut(QKeySequence::Find);
    for (QDockWidget* dock : findChildren<QDockWidget*>())
        view->addAction(dock->toggleViewAction());

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Ckptscope"), this, [this] {
        QMessageBox::about(this, tr("About Ckptscope"),
                           tr("<h3>Ckptscope %1</h3><p>A browser for OXCK model checkpoints and "
                              "gradient checkpoints.</p>")
                               .arg(QStringLiteral(CKPTSCOPE_VERSION)));
    });
}

void MainWindow::updateRecentMenu() {
    m_recentMenu->clear();
    for (const QString& path : m_recent->files())
        m_recentMenu->addAction(QFileInfo(path).fileName(), this, [this, path] { openFile(path); })
            ->setToolTip(path);
    m_recentMenu->addSeparator();
    m_recentMenu->addAction(tr("Clear List"), m_recent, &RecentFiles::clear);
    m_recentMenu->setEnabled(!m_recent->files().isEmpty());
}

void MainWindow::openDialog() {
    const QString dir = m_path.isEmpty() || m_path.startsWith(QStringLiteral(":/"))
                            ? QString()
                            : QFileInfo(m_path).absolutePath();
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open Checkpoint"), dir,
                                     tr("Checkpoints (*.oxck *.ckpt *.bin *.json);;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::openFile(const QString& path) {
    if (path.isEmpty())
        return;
    const bool isReload = path == m_path;
    const QString keep = isReload
                             ? m_tree->currentIndex().data(TensorTreeModel::FullNameRole).toString()
                             : QString();
    ++m_loading;
    const int serial = ++m_loadSerial;
    m_busy->setVisible(true);
    statusBar()->showMessage(tr("Opening %1…").arg(QFileInfo(path).fileName()));
    auto* watcher = new QFutureWatcher<LoadOutcome>(this);
    connect(watcher, &QFutureWatcher<LoadOutcome>::finished, this,
            [this, watcher, path, isReload, keep, serial] {
                const LoadOutcome outcome = watcher->result();
                watcher->deleteLater();
                onLoaded(path, outcome.document, outcome.error, isReload, keep, serial);
            });
    watcher->setFuture(QtConcurrent::run([path]() -> LoadOutcome {
        try {
            return {loadDocument(path), {}};
        } catch (const std::exception& e) {
            return {nullptr, QString::fromStdString(e.what())};
        }
    }));
}

void MainWindow::onLoaded(const QString& path, std::shared_ptr<const Document> doc,
                          const QString& error, bool isReload, const QString& keepTensor,
                          int serial) {
    if (--m_loading == 0)
        m_busy->setVisible(false);
    if (serial != m_loadSerial)
        return; // a later open (or reload) superseded this one
    if (!doc) {
        statusBar()->clearMessage();
        m_bar->showMessage(NotificationBar::Kind::Error,
                           tr("<b>Could not open the file.</b> %1").arg(error.toHtmlEscaped()),
                           isReload ? tr("Try Again") : QString());
        disconnect(m_bar, &NotificationBar::actionTriggered, nullptr, nullptr);
        connect(m_bar, &NotificationBar::actionTriggered, this, &MainWindow::reload);
        Q_EMIT loadFailed(path, error);
        return;
    }
    setDocument(std::move(doc), path, isReload);
    if (isReload) {
        m_bar->showMessage(NotificationBar::Kind::Info,
                           tr("The file changed on disk and was reloaded."));
        m_restoring = true;
        if (!keepTensor.isEmpty())
            selectTensor(keepTensor);
        m_restoring = false;
    } else {
        m_bar->hide();
    }
    Q_EMIT documentLoaded(path);
}

void MainWindow::setDocument(std::shared_ptr<const Document> doc, const QString& path,
                             bool keepView) {
    m_document = std::move(doc);
    if (path != m_path)
        watch(path);
    m_path = path;
    const QString name = QFileInfo(path).fileName();
    setWindowTitle(name + QStringLiteral(" — Ckptscope"));
    setWindowFilePath(path.startsWith(QStringLiteral(":/")) ? QString() : path);
    if (!path.startsWith(QStringLiteral(":/")))
        m_recent->add(path);
    m_reloadAction->setEnabled(true);

    m_treeModel->setDocument(m_document);
    m_tree->expandToDepth(0);
    for (int c = 1; c < TensorTreeModel::ColumnCount; ++c)
        m_tree->resizeColumnToContents(c);
    m_overview->setDocument(m_document);
    MetadataModel::Rows rows = m_document->metadata();
    if (const ckptscope::GradientCheckpoint* g = m_document->gradient())
        for (auto& [key, value] : rows)
            if (key == "timestamp") // Unix seconds, shown as a local date too
                value = QDateTime::fromSecsSinceEpoch(qint64(g->timestamp))
                            .toString(Qt::ISODate)
                            .toStdString() +
                        " (" + value + ")";
    m_metadataModel->setRows(std::move(rows));
    m_metadataView->resizeColumnToContents(MetadataModel::Key);
    m_tensorPage->clear();
    m_valuesView->setTensor(nullptr, -1);
    m_stack->setCurrentWidget(m_tabs);
    if (!keepView) // a reload leaves the user where they were
        m_tabs->setCurrentWidget(m_overview);
    // Tabs follow the format: tensors for OXCK, graph and optimizer state for
    // gradient checkpoints.
    const bool oxck = m_document->format() == ckptscope::Format::Oxck;
    m_tabs->setTabVisible(m_tabs->indexOf(m_tensorPage), oxck);
    m_tabs->setTabVisible(m_tabs->indexOf(m_valuesView), oxck);
    m_tabs->setTabVisible(m_tabs->indexOf(m_graphPage), !oxck);
    m_tabs->setTabVisible(m_tabs->indexOf(m_optimizerView), !oxck);
    if (!keepView) {
        m_tensorDock->setVisible(oxck);
        m_nodeDock->setVisible(!oxck);
    }
    m_graphPage->setDocument(oxck ? nullptr : m_document);
    // The tree is up; NaN/Inf flags fill in as the background scan finds them.
    m_scanProgress->setValue(0);
    m_scanProgress->setVisible(oxck && !m_document->tensors().empty());
    m_scanner->start(oxck ? m_document : nullptr);
    m_optimizerView->setDocument(oxck ? nullptr : m_document);
    if (const ckptscope::GradientCheckpoint* g = m_document->gradient())
        statusBar()->showMessage(
            tr("%1: gradient checkpoint, step %2, %n node(s)", nullptr, int(g->graph.nodeCount()))
                .arg(name)
                .arg(g->step));
    else
        statusBar()->showMessage(
            tr("%1: OXCK checkpoint, %n tensor(s)", nullptr, int(m_document->tensors().size()))
                .arg(name));
}

bool MainWindow::isScanning() const {
    return m_scanner->isRunning();
}

void MainWindow::offerReload(const QString& message) {
    m_bar->showMessage(NotificationBar::Kind::Error, message.toHtmlEscaped(), tr("Reload"));
    disconnect(m_bar, &NotificationBar::actionTriggered, nullptr, nullptr);
    connect(m_bar, &NotificationBar::actionTriggered, this, &MainWindow::reload);
}

void MainWindow::watch(const QString& path) {
    if (!m_watcher->files().isEmpty())
        m_watcher->removePaths(m_watcher->files());
    if (!path.startsWith(QStringLiteral(":/")))
        m_watcher->addPath(path);
}

void MainWindow::reload() {
    if (m_path.isEmpty())
        return;
    // A writer that replaces the file by rename drops it from the watcher.
    if (!m_path.startsWith(QStringLiteral(":/")) && !m_watcher->files().contains(m_path))
        m_watcher->addPath(m_path);
    openFile(m_path);
}

bool MainWindow::selectTensor(const QString& fullName) {
    const QModelIndex source = m_treeModel->indexOfName(fullName);
    const QModelIndex idx = m_treeProxy->mapFromSource(source);
    if (!idx.isValid())
        return false;
    m_tree->setCurrentIndex(idx);
    m_tree->scrollTo(idx);
    return true;
}

void MainWindow::showTensor(int tensor) {
    if (tensor < 0)
        return;
    m_tensorPage->setTensor(m_document, tensor);
    m_valuesView->setTensor(m_document, tensor);
    if (!m_restoring &&
        (m_tabs->currentWidget() == m_overview || m_tabs->currentWidget() == m_metadataView))
        m_tabs->setCurrentWidget(m_tensorPage);
}

void MainWindow::applyFilter() {
    m_filterTimer->stop();
    m_filtering = true;
    const QString text = m_filter->text();
    if (m_regex->isChecked()) {
        const QRegularExpression re(text, QRegularExpression::CaseInsensitiveOption);
        m_filter->setStyleSheet(re.isValid() ? QString() : QStringLiteral("color: #d33"));
        m_filter->setToolTip(re.isValid() ? QString() : re.errorString());
        if (re.isValid())
            m_treeProxy->setFilterRegularExpression(re);
    } else {
        m_filter->setStyleSheet(QString());
        m_treeProxy->setFilterFixedString(text);
    }
    m_filtering = false;
    // Show the matches; a huge tree opens only its first levels.
    if (text.isEmpty())
        return;
    if (m_treeModel->tensorCount() > 20000)
        m_tree->expandToDepth(2);
    else
        m_tree->expandAll();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls())
        for (const QUrl& url : event->mimeData()->urls())
            if (url.isLocalFile()) {
                event->acceptProposedAction();
                return;
            }
}

void MainWindow::dropEvent(QDropEvent* event) {
    QStringList files;
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile())
            files << url.toLocalFile();
    if (files.isEmpty())
        return;
    event->acceptProposedAction();
    // The first file opens here, every further one in a window of its own.
    openFile(files.takeFirst());
    for (const QString& f : std::as_const(files)) {
        auto* w = new MainWindow;
        w->show();
        w->openFile(f);
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    QMainWindow::closeEvent(event);
}
