#include "browser/mainwindow.h"

#include "browser/documentloader.h"
#include "browser/optimizerfigures.h"
#include "browser/optimizerstateview.h"
#include "browser/overviewpage.h"
#include "browser/recentfiles.h"
#include "browser/startpage.h"
#include "browser/tensordock.h"
#include "browser/valuescanbar.h"
#include "common/documentsummary.h"
#include "common/filelocation.h"
#include "common/plaintext.h"
#include "common/reloadwatcher.h"
#include "common/sizeformat.h"
#include "common/windowregistry.h"
#include "graph/graphpage.h"
#include "graph/nodelist.h"
#include "metadata/metadataview.h"
#include "tensor/tensorpage.h"
#include "tensor/tensortreemodel.h"
#include "tensor/tensorvaluesmodel.h"
#include "tensor/tensorvaluesview.h"
#include "widgets/notificationbar.h"

#include "ckptscope/formats/pytorch/picklescan.h"

#include <QAction>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileInfo>
#include <QLineEdit>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

using ckptscope::Document;

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_recent(new RecentFiles(this)), m_loader(new DocumentLoader(this)),
      m_reloadWatcher(new ReloadWatcher(this)) {
    setAttribute(Qt::WA_DeleteOnClose);
    setAcceptDrops(true);
    setWindowTitle(QStringLiteral("Ckptscope"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/ckptscope.svg")));

    buildPages();
    buildStatusBar();
    buildDocks();
    buildActions();
    restoreSettings();

    connect(m_loader, &DocumentLoader::loaded, this, &MainWindow::onLoaded);
    connect(m_loader, &DocumentLoader::failed, this, &MainWindow::onLoadFailed);
    // An s3:// prefix of a training run: the run window, as for a local run folder.
    connect(m_loader, &DocumentLoader::runFolder, this, [this](const QString& path) {
        endLoad();
        statusBar()->showMessage(tr("%1 is a training run: opened in a run window").arg(path),
                                 5000);
        WindowRegistry::instance().openRun({path});
    });
    connect(m_loader, &DocumentLoader::traffic, this,
            [this](const QString& path, quint64 requests, quint64 bytes) {
                if (path != m_requestedPath || !m_loader->isLoading())
                    return;
                statusBar()->showMessage(
                    tr("Opening %1… %2, %3 received")
                        .arg(filelocation::displayName(path),
                             requests == 1 ? tr("1 request") : tr("%1 requests").arg(requests),
                             humanBytes(bytes)));
            });
    // A training job rewrites the file: reload once it settles.
    connect(m_reloadWatcher, &ReloadWatcher::changed, this, &MainWindow::reloadFor);
    connect(m_reloadWatcher, &ReloadWatcher::gone, this, [this](const QString& file) {
        m_bar->showMessage(
            NotificationBar::Kind::Error,
            tr("%1 was deleted or moved; the view shows it as it was.").arg(file.toHtmlEscaped()));
    });
    statusBar()->showMessage(tr("Drop a checkpoint here, or press Ctrl+O"));
}

MainWindow::~MainWindow() {
    // The tab and stack widgets die in ~QWidget, when this is no longer a
    // MainWindow: a page change they report on the way out must not reach
    // us (the GraphPage scene's selectionChanged did exactly that).
    disconnect(m_tabs, nullptr, this, nullptr);
    disconnect(m_stack, nullptr, this, nullptr);
}

void MainWindow::buildPages() {
    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_bar = new NotificationBar;
    layout->addWidget(m_bar);
    m_unsafeBar = new NotificationBar;
    layout->addWidget(m_unsafeBar);
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
    m_metadataView = new MetadataView;
    m_tabs->addTab(m_metadataView, tr("&Metadata"));
    m_tensorPage = new TensorPage;
    m_tabs->addTab(m_tensorPage, tr("&Tensor"));
    m_optimizerFigures = new OptimizerFigures(this);
    connect(m_optimizerFigures, &OptimizerFigures::ready, this, &MainWindow::showOptimizerFigure);
    connect(m_optimizerFigures, &OptimizerFigures::failed, this, [this](const QString& message) {
        statusBar()->showMessage(tr("Optimizer figures: %1").arg(message));
    });
    connect(m_tensorPage, &TensorPage::stateTensorRequested, this, &MainWindow::showStateTensor);
    m_valuesView = new TensorValuesView;
    m_tabs->addTab(m_valuesView, tr("&Values"));
    m_graphPage = new GraphPage;
    m_tabs->addTab(m_graphPage, tr("&Graph"));
    m_optimizerView = new OptimizerStateView;
    m_tabs->addTab(m_optimizerView, tr("O&ptimizer State"));
    m_stack->addWidget(m_tabs);

    connect(m_tensorPage, &TensorPage::statsReady, this,
            [this](int tensor, const ckptscope::StatsResult& r) {
                if (r.stats.nan + r.stats.posInf + r.stats.negInf > 0) {
                    tensorModel()->markNonFinite(tensor);
                    m_overview->markNonFinite(tensor);
                }
            });
    connect(m_overview, &OverviewPage::tensorLinkActivated, this, [this](int tensor) {
        if (m_document &&
            selectTensor(QString::fromStdString(m_document->tensors().at(size_t(tensor)).name)))
            m_tabs->setCurrentWidget(m_tensorPage);
    });
    connect(m_overview, &OverviewPage::openRequested, this, &MainWindow::openFile);
    // Reads that find the file changed (truncated or rewritten in place)
    // offer a reload instead of showing stale or mixed values.
    connect(m_tensorPage, &TensorPage::statsFailed, this, &MainWindow::offerReload);
    connect(m_valuesView->model(), &TensorValuesModel::readFailed, this, &MainWindow::offerReload);
}

void MainWindow::buildStatusBar() {
    m_busy = new QProgressBar;
    m_busy->setRange(0, 0); // indeterminate while indexing
    m_busy->setMaximumWidth(140);
    m_busy->setVisible(false);
    statusBar()->addPermanentWidget(m_busy);
    m_cancelLoad = new QToolButton;
    m_cancelLoad->setObjectName(QStringLiteral("cancelLoad"));
    m_cancelLoad->setText(tr("Cancel"));
    m_cancelLoad->setToolTip(tr("Stop opening this file"));
    m_cancelLoad->setVisible(false);
    statusBar()->addPermanentWidget(m_cancelLoad);
    connect(m_cancelLoad, &QToolButton::clicked, this, &MainWindow::cancelLoad);
    m_scanBar = new ValueScanBar;
    statusBar()->addPermanentWidget(m_scanBar);
    connect(m_scanBar, &ValueScanBar::nonFinite, this, [this](int tensor) {
        tensorModel()->markNonFinite(tensor);
        m_overview->markNonFinite(tensor);
    });
    connect(m_scanBar, &ValueScanBar::finished, m_overview, &OverviewPage::setValuesScanned);
    connect(m_scanBar, &ValueScanBar::stopped, m_overview, [this] { m_overview->offerScan(true); });
    connect(m_scanBar, &ValueScanBar::failed, this, &MainWindow::offerReload);
    connect(m_overview, &OverviewPage::scanRequested, this, [this] {
        m_overview->offerScan(false);
        m_scanBar->start(m_document);
    });
}

void MainWindow::buildDocks() {
    m_tensorDock = new TensorDock(this);
    addDockWidget(Qt::LeftDockWidgetArea, m_tensorDock);
    resizeDocks({m_tensorDock}, {560}, Qt::Horizontal);
    connect(m_tensorDock, &TensorDock::tensorSelected, this, &MainWindow::showTensor);
    connect(m_tensorDock, &TensorDock::tensorActivated, this,
            [this] { m_tabs->setCurrentWidget(m_tensorPage); });

    m_nodeDock = new QDockWidget(tr("Nodes"), this);
    m_nodeDock->setObjectName(QStringLiteral("nodeDock"));
    m_nodeList = new NodeList;
    m_nodeDock->setWidget(m_nodeList);
    addDockWidget(Qt::LeftDockWidgetArea, m_nodeDock);
    m_nodeDock->hide();
    connect(m_graphPage, &GraphPage::graphChanged, m_nodeList, &NodeList::setGraph);
    connect(m_graphPage, &GraphPage::nodeSelected, m_nodeList, &NodeList::showNode);
    connect(m_nodeList, &NodeList::nodeChosen, this, [this](int node) {
        if (node != m_graphPage->selectedNode())
            m_graphPage->selectNode(node);
    });
}

void MainWindow::restoreSettings() {
    QSettings settings;
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
        resize(1400, 900);
    m_tensorPage->setBins(settings.value(QStringLiteral("histogram/bins"), 64).toInt());
    m_tensorPage->setLogScale(settings.value(QStringLiteral("histogram/log"), false).toBool());
    connect(m_tensorPage, &TensorPage::binsChanged, this,
            [](int n) { QSettings().setValue(QStringLiteral("histogram/bins"), n); });
    connect(m_tensorPage, &TensorPage::logScaleChanged, this,
            [](bool on) { QSettings().setValue(QStringLiteral("histogram/log"), on); });
}

void MainWindow::switchLayout(const QString& kind) {
    if (kind == m_layoutKind)
        return;
    QSettings settings;
    if (!m_layoutKind.isEmpty())
        settings.setValue(QStringLiteral("window/state/") + m_layoutKind, saveState());
    m_layoutKind = kind;
    if (!restoreState(settings.value(QStringLiteral("window/state/") + kind).toByteArray()))
        defaultLayout(kind);
}

void MainWindow::defaultLayout(const QString& kind) {
    // "oxck" is the saved layout of every tensor file (the key predates the
    // other formats; kept so saved layouts still apply).
    const bool tensorFile = kind == QLatin1String("oxck");
    m_tensorDock->setVisible(tensorFile);
    m_nodeDock->setVisible(!tensorFile);
    // Wide enough for the tree's name, shape, element and size columns.
    QDockWidget* dock = tensorFile ? static_cast<QDockWidget*>(m_tensorDock) : m_nodeDock;
    resizeDocks({dock}, {tensorFile ? 560 : 420}, Qt::Horizontal);
}

void MainWindow::openFile(const QString& path) {
    if (path.isEmpty())
        return;
    m_requestedPath = path;
    m_pendingReload = path == m_path;
    if (!m_pendingReload)
        m_reloadCause.clear(); // another file: no change of this one to tell
    m_pendingKeep = m_pendingReload ? m_tensorDock->currentTensorName() : QString();
    m_busy->setVisible(true);
    m_cancelLoad->setVisible(true);
    statusBar()->showMessage(tr("Opening %1…").arg(filelocation::displayName(path)));
    m_loader->load(path);
}

bool MainWindow::isLoading() const {
    return m_loader->isLoading();
}

void MainWindow::endLoad() {
    m_busy->setVisible(false);
    m_cancelLoad->setVisible(false);
    m_requestedPath = m_path; // still showing the file it showed
    // The file still shown keeps its line; "Opening …" must not stay.
    if (m_document)
        statusBar()->showMessage(documentSummary(*m_document, filelocation::displayName(m_path)));
    else
        statusBar()->clearMessage();
}

void MainWindow::cancelLoad() {
    if (!m_loader->isLoading())
        return;
    m_loader->cancel();
    endLoad();
}

void MainWindow::onLoadFailed(const QString& path, const QString& error) {
    endLoad();
    m_bar->showMessage(NotificationBar::Kind::Error,
                       tr("<b>Could not open the file.</b> %1").arg(error.toHtmlEscaped()),
                       m_pendingReload ? tr("Try Again") : QString());
    disconnect(m_bar, &NotificationBar::actionTriggered, nullptr, nullptr);
    connect(m_bar, &NotificationBar::actionTriggered, this, &MainWindow::reload);
    Q_EMIT loadFailed(path, error);
}

void MainWindow::onLoaded(const QString& path, std::shared_ptr<const Document> doc) {
    m_busy->setVisible(false);
    m_cancelLoad->setVisible(false);
    setDocument(std::move(doc), path, m_pendingReload);
    if (m_pendingReload) {
        m_bar->showMessage(NotificationBar::Kind::Info, reloadMessage().toHtmlEscaped());
        m_reloadCause.clear();
        m_restoring = true;
        if (!m_pendingKeep.isEmpty())
            selectTensor(m_pendingKeep);
        m_restoring = false;
    } else {
        m_bar->hide();
    }
    Q_EMIT documentLoaded(path);
}

void MainWindow::setDocument(std::shared_ptr<const Document> doc, const QString& path,
                             bool keepView) {
    m_document = std::move(doc);
    // Every shard too (a reload may bring others).
    m_reloadWatcher->watch(path, filelocation::localFiles(m_document->sourceNames()));
    m_path = path;
    const QString name = filelocation::displayName(path);
    setWindowTitle(name + QStringLiteral(" — Ckptscope"));
    setWindowFilePath(filelocation::isBundled(path) || filelocation::isRemote(path) ? QString()
                                                                                    : path);
    if (!path.startsWith(QStringLiteral(":/")))
        m_recent->add(path);
    m_reloadAction->setEnabled(true);

    showUnsafeCalls();
    m_tensorDock->setDocument(m_document);
    m_overview->setDocument(m_document);
    m_metadataView->setDocument(m_document);
    m_tensorPage->clear();
    m_optimizerFigures->setDocument(m_document);
    m_valuesView->setTensor(nullptr, -1);
    m_stack->setCurrentWidget(m_tabs);
    if (!keepView) // a reload leaves the user where they were
        m_tabs->setCurrentWidget(m_overview);
    // Tabs follow the content: tensors, or a gradient checkpoint's graph and
    // optimizer state.
    const bool tensorFile = m_document->hasTensors();
    if (!keepView)
        switchLayout(tensorFile ? QStringLiteral("oxck") : QStringLiteral("gradient"));
    m_tabs->setTabVisible(m_tabs->indexOf(m_tensorPage), tensorFile);
    m_tabs->setTabVisible(m_tabs->indexOf(m_valuesView), tensorFile);
    m_tabs->setTabVisible(m_tabs->indexOf(m_graphPage), !tensorFile);
    m_tabs->setTabVisible(m_tabs->indexOf(m_optimizerView), !tensorFile);
    if (!keepView) {
        m_tensorDock->setVisible(tensorFile);
        m_nodeDock->setVisible(!tensorFile);
    }
    m_graphPage->setDocument(tensorFile ? nullptr : m_document);
    // The tree is up; NaN/Inf flags fill in as the background scan finds
    // them. A model over the network is read only where the user looks, so
    // its scan (every value) waits for the Overview's link.
    const bool scanNow = tensorFile && !filelocation::isRemote(path);
    m_scanBar->start(scanNow ? m_document : nullptr);
    m_overview->offerScan(tensorFile && !scanNow);
    m_optimizerView->setDocument(tensorFile ? nullptr : m_document);
    statusBar()->showMessage(documentSummary(*m_document, name));
    updateFindAction();
}

// A pickle that would run code when torch.load reads it: said at the top of
// the window, each call as Python spells it, until another file is shown.
void MainWindow::showUnsafeCalls() {
    // The first calls, and how many more (the Overview lists each import's):
    // a banner of a pickle of 100 000 calls stays a line.
    constexpr size_t kShown = 8;
    const ckptscope::UnsafeCalls calls =
        ckptscope::unsafeCalls(m_document->objects(), m_document->imports(), kShown);
    if (calls.shown.empty()) {
        m_unsafeBar->hide();
        return;
    }
    QStringList shown;
    for (const std::string& call : calls.shown)
        shown << QStringLiteral("<b>%1</b>").arg(shownExcerpt(call, 120).toHtmlEscaped());
    const QString list =
        calls.more > 0 ? tr("%1 and %2 more calls")
                             .arg(shown.join(QStringLiteral(", ")), groupedNumber(calls.more))
        : shown.size() == 1
            ? shown[0]
            : tr("%1 and %2")
                  .arg(shown.mid(0, shown.size() - 1).join(QStringLiteral(", ")), shown.last());
    m_unsafeBar->showMessage(NotificationBar::Kind::Error,
                             tr("This file asks to run %1 when loaded with torch.load. Ckptscope "
                                "did not run it.")
                                 .arg(list));
}

QString MainWindow::reloadMessage() const {
    if (m_reloadCause.isEmpty())
        return tr("Reloaded from disk.");
    // A shard of a multi-file model: name the files that changed.
    if (m_reloadCause == QStringList{m_path} || !m_document->isSharded())
        return tr("The file changed on disk and was reloaded.");
    QStringList names;
    for (const QString& f : m_reloadCause)
        names << filelocation::displayName(f);
    return tr("%1 changed on disk; the model was reloaded.").arg(names.join(QStringLiteral(", ")));
}

bool MainWindow::isScanning() const {
    return m_scanBar->isRunning();
}

void MainWindow::offerReload(const QString& message) {
    m_bar->showMessage(NotificationBar::Kind::Error, message.toHtmlEscaped(), tr("Reload"));
    disconnect(m_bar, &NotificationBar::actionTriggered, nullptr, nullptr);
    connect(m_bar, &NotificationBar::actionTriggered, this, &MainWindow::reload);
}

void MainWindow::reload() {
    reloadFor({}); // F5 or Try Again: no change seen
}

void MainWindow::reloadFor(const QStringList& changedFiles) {
    if (m_path.isEmpty())
        return;
    m_reloadCause = changedFiles;
    m_reloadWatcher->rearm();
    m_reloadWatcher->loading();
    openFile(m_path);
}

QTreeView* MainWindow::tensorTree() const {
    return m_tensorDock->tree();
}
TensorTreeModel* MainWindow::tensorModel() const {
    return m_tensorDock->model();
}
QSortFilterProxyModel* MainWindow::tensorProxy() const {
    return m_tensorDock->proxy();
}
QLineEdit* MainWindow::filterEdit() const {
    return m_tensorDock->filterEdit();
}
MetadataModel* MainWindow::metadataModel() const {
    return m_metadataView->metadataModel();
}

bool MainWindow::selectTensor(const QString& fullName) {
    return m_tensorDock->selectTensor(fullName);
}

void MainWindow::applyFilter() {
    m_tensorDock->applyFilter();
}

void MainWindow::showStatus(const QString& message, int timeoutMs) {
    statusBar()->showMessage(message, timeoutMs);
}

void MainWindow::showTensor(int tensor) {
    m_tensorPage->setTensor(m_document, tensor);
    showOptimizerFigure();
    m_valuesView->setTensor(m_document, tensor);
    if (!m_restoring &&
        (m_tabs->currentWidget() == m_overview || m_tabs->currentWidget() == m_metadataView))
        m_tabs->setCurrentWidget(m_tensorPage);
}

// The selected tensor's optimizer figures on the Tensor page, once computed.
void MainWindow::showOptimizerFigure() {
    const auto f = m_optimizerFigures->forTensor(m_tensorPage->tensor());
    m_tensorPage->setOptimizer(f ? &f->update : nullptr, f ? f->optimizerFile : QString(),
                               f ? f->stateTensors : QStringList());
}

// A state tensor's link: selected here when this file holds it, else its
// file opens (one window per file) with it selected.
void MainWindow::showStateTensor(const QString& file, const QString& tensor) {
    if (m_document && QFile::decodeName(m_document->path().c_str()) == file) {
        selectTensor(tensor);
        return;
    }
    WindowRegistry::instance().openFile(file, [tensor](MainWindow* w) {
        auto* once = new QObject(w);
        connect(w, &MainWindow::documentLoaded, once, [w, tensor, once] {
            w->selectTensor(tensor);
            once->deleteLater();
        });
        if (w->document())
            w->selectTensor(tensor);
    });
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    if (!m_layoutKind.isEmpty())
        settings.setValue(QStringLiteral("window/state/") + m_layoutKind, saveState());
    QMainWindow::closeEvent(event);
}
