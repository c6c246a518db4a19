#include "run/runwindow.h"

#include "common/documentsummary.h"
#include "common/helpdialogs.h"
#include "common/naturalsortproxy.h"
#include "common/windowregistry.h"
#include "launch/runlauncher.h"
#include "run/distributionview.h"
#include "run/layerprofileview.h"
#include "run/metadatachartview.h"
#include "run/runchartview.h"
#include "run/runcheckpointmodel.h"
#include "run/runoverview.h"
#include "run/runtensormodel.h"
#include "tensor/tensorfilterproxy.h"
#include "widgets/rowheight.h"

#include "ckptscope/common/numberformat.h"

#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

#include <utility>

using namespace ckptscope;

namespace {

// A checkpoint folder or shard set opens at its index, else its first file.
QString firstFile(const RunCheckpoint& c) {
    return QFile::decodeName(c.openPath().c_str());
}

} // namespace

RunWindow::RunWindow(QWidget* parent)
    : QMainWindow(parent), m_loader(new RunLoader(this)),
      m_checkpoints(new RunCheckpointModel(this)), m_checkpointProxy(new NaturalSortProxy(this)),
      m_tensors(new RunTensorModel(this)), m_tensorProxy(new TensorFilterProxy(this)),
      m_checkpointView(new QTableView), m_tensorView(new QTreeView), m_filter(new QLineEdit),
      m_charts(new RunChartView), m_tabs(new QTabWidget), m_distribution(new DistributionView),
      m_layers(new LayerProfileView), m_metadata(new MetadataChartView),
      m_overview(new RunOverview), m_status(new QLabel), m_progress(new QProgressBar),
      m_cancel(new QPushButton(tr("Cancel"))) {
    setAttribute(Qt::WA_DeleteOnClose);
    m_checkpointProxy->setSourceModel(m_checkpoints);
    m_checkpointProxy->setSortRole(RunCheckpointModel::SortRole);
    m_checkpointView->setModel(m_checkpointProxy);
    m_checkpointView->setSortingEnabled(true);
    m_checkpointView->sortByColumn(RunCheckpointModel::Step, Qt::AscendingOrder);
    m_checkpointView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_checkpointView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_checkpointView->verticalHeader()->hide();
    rowheight::followFont(m_checkpointView, 6);
    m_checkpointView->horizontalHeader()->setStretchLastSection(true);
    m_checkpointView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_checkpointView, &QTableView::doubleClicked, this,
            [this](const QModelIndex& index) { openCheckpoint(checkpointOfRow(index)); });
    connect(m_checkpointView, &QTableView::customContextMenuRequested, this,
            &RunWindow::checkpointMenu);

    auto* left = new QSplitter(Qt::Vertical);
    left->addWidget(m_checkpointView);
    left->addWidget(buildTensorPanel());
    auto* main = new QSplitter(Qt::Horizontal);
    main->addWidget(left);
    m_tabs->addTab(m_charts, tr("Over steps"));
    m_tabs->addTab(m_distribution, tr("Distribution"));
    m_tabs->addTab(m_layers, tr("Layer profile"));
    m_tabs->addTab(m_metadata, tr("Metadata"));
    m_tabs->addTab(m_overview, tr("Overview"));
    connect(m_layers, &LayerProfileView::tensorChosen, this,
            [this](const QString& name) { selectTensorNamed(name); });
    main->addWidget(m_tabs);
    main->setStretchFactor(0, 2);
    main->setStretchFactor(1, 3);
    main->setSizes({560, 840}); // the charts get the larger half from the start
    setCentralWidget(main);
    connect(m_charts, &RunChartView::openRequested, this, &RunWindow::openCheckpoint);
    connect(m_charts, &RunChartView::compareRequested, this, &RunWindow::compareWithPrevious);

    statusBar()->addWidget(m_status, 1);
    m_progress->setMinimumWidth(260);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    m_progress->hide();
    m_cancel->hide();
    connect(m_cancel, &QPushButton::clicked, m_loader, &RunLoader::cancel);
    connect(m_loader, &RunLoader::started, this, &RunWindow::started);
    connect(m_loader, &RunLoader::progress, this, &RunWindow::showProgress);
    connect(m_loader, &RunLoader::finished, this, &RunWindow::finishLoad);
    connect(m_loader, &RunLoader::preview, this,
            [this](std::shared_ptr<const RunLoader::Result> cached) { showRun(*cached); });
    buildMenus();
    resize(1400, 860);
}

// The menus and standard shortcuts of every window: File, View, Help.
void RunWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), this, &RunWindow::openDialog)->setShortcut(QKeySequence::Open);
    file->addAction(tr("Open &Folder…"), this, [this] { RunLauncher::openFolderDialog(this); })
        ->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+O")));
    file->addSeparator();
    file->addAction(tr("&Close Window"), this, &QWidget::close)->setShortcuts(QKeySequence::Close);
    file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows)
        ->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Filter Tensors"), this,
                    [this] {
                        m_filter->setFocus(Qt::ShortcutFocusReason);
                        m_filter->selectAll();
                    })
        ->setShortcut(QKeySequence::Find);
    view->addSeparator();
    for (int i = 0; i < m_tabs->count(); ++i) // Ctrl+1 … the chart tabs
        view->addAction(m_tabs->tabText(i), this, [this, i] { m_tabs->setCurrentIndex(i); })
            ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
    addHelpMenu(menuBar(), this);
}

// File ▸ Open…: one file in a browser window, several as a run of their own.
void RunWindow::openDialog() {
    const QString dir = m_run && !m_run->checkpoints.empty()
                            ? QFileInfo(firstFile(m_run->checkpoints.front())).absolutePath()
                            : QString();
    const QStringList paths = RunLauncher::askForCheckpoints(this, dir);
    if (paths.size() == 1)
        WindowRegistry::instance().openFile(paths.first());
    else if (paths.size() > 1)
        WindowRegistry::instance().openRun(paths);
}

QWidget* RunWindow::buildTensorPanel() {
    auto* panel = new QWidget;
    auto* layout = new QVBoxLayout(panel);
    layout->setContentsMargins(0, 0, 0, 0);
    m_filter->setPlaceholderText(tr("Filter tensors"));
    m_filter->setClearButtonEnabled(true);
    layout->addWidget(m_filter);
    m_tensorProxy->setSourceModel(m_tensors);
    m_tensorView->setModel(m_tensorProxy);
    m_tensorView->setUniformRowHeights(true);
    m_tensorView->header()->hide();
    layout->addWidget(m_tensorView, 1);
    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString& text) {
        // Rows vanishing under the filter move the current row: not a choice.
        const QSignalBlocker block(m_tensorView->selectionModel());
        m_tensorProxy->setFilterFixedString(text);
        if (!text.isEmpty())
            m_tensorView->expandAll();
    });
    connect(m_tensorView->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) {
                const int series = m_tensors->seriesOf(m_tensorProxy->mapToSource(current));
                if (series >= 0)
                    showTensor(series);
            });
    return panel;
}

void RunWindow::openPaths(const QStringList& paths) {
    bool allFiles = true;
    for (const QString& p : paths)
        allFiles = allFiles && !QFileInfo(p).isDir();
    QString what = tr("%1 paths").arg(paths.size());
    if (paths.size() == 1)
        what = QFileInfo(paths.first()).fileName();
    else if (allFiles)
        what = tr("%1 files").arg(paths.size());
    setWindowTitle(tr("%1 — run — Ckptscope").arg(what));
    setWindowFilePath(paths.size() == 1 ? QFileInfo(paths.first()).absoluteFilePath() : QString());
    m_loader->open(paths);
}

void RunWindow::started() {
    m_progress->setRange(0, 0);
    m_progress->setFormat(tr("finding checkpoints"));
    m_progress->show();
    m_cancel->show();
    if (!m_run)
        m_status->setText(tr("Reading checkpoints…"));
}

void RunWindow::showProgress(const RunLoader::Progress& p) {
    m_progress->setRange(0, int(std::min<size_t>(p.filesTotal, INT_MAX)));
    m_progress->setValue(int(std::min(p.filesDone, p.filesTotal)));
    m_progress->setFormat(runProgressText(p));
}

void RunWindow::finishLoad(std::shared_ptr<const RunLoader::Result> loaded) {
    m_progress->hide();
    m_cancel->hide();
    if (loaded->run)
        showRun(*loaded);
    else // a run already shown stays; the status says why nothing new came
        m_status->setText(loaded->error);
    Q_EMIT runLoaded();
}

void RunWindow::showRun(const RunLoader::Result& loaded) {
    // Keep the selected tensor, by name, across a reload (a new checkpoint).
    const TensorSeries* current = m_tensors->seriesAt(m_shownSeries);
    const std::string keepName = current ? current->name : std::string();
    const size_t keepOcc = current ? current->occurrence : 0;
    m_run = loaded.run;
    m_series = loaded.series;
    m_waiting = loaded.waiting;
    m_checkpoints->setRun(m_run);
    m_tensors->setSeries(m_run, m_series);
    m_layers->setRun(m_run, m_series);
    m_distribution->setRun(m_run, m_series);
    m_metadata->setRun(m_run);
    m_overview->setRun(m_run, m_series);
    m_checkpointView->resizeColumnsToContents();
    m_tensorView->expandToDepth(0);
    if (!m_filter->text().isEmpty())
        m_tensorView->expandAll();
    int series = current ? m_tensors->findSeries(keepName, keepOcc) : -1;
    if (series < 0 && !m_series->empty())
        series = 0;
    m_shownSeries = -1;
    {
        const QSignalBlocker block(m_tensorView->selectionModel());
        const QModelIndex index = m_tensorProxy->mapFromSource(m_tensors->indexOfSeries(series));
        m_tensorView->setCurrentIndex(index);
        m_tensorView->scrollTo(index);
    }
    showTensor(series);
    QString text =
        tr("%1, %2, %3 skipped; cache: %4, %5")
            .arg(countNoun(m_run->checkpoints.size(), tr("checkpoint"), tr("checkpoints")),
                 countNoun(m_series->size(), tr("tensor"), tr("tensors")),
                 QString::number(m_run->skipped.size()),
                 countNoun(m_run->cacheHits, tr("hit"), tr("hits")),
                 countNoun(m_run->cacheMisses, tr("miss"), tr("misses")));
    if (m_run->notCached > 0) // a preview: the rest is being summarised
        text += tr("; %n more being read", nullptr, int(m_run->notCached));
    if (!m_run->warnings.empty())
        text +=
            QStringLiteral("; ") + countNoun(m_run->warnings.size(), tr("warning"), tr("warnings"));
    if (!m_waiting.empty())
        text += tr("; %1 still being written")
                    .arg(countNoun(m_waiting.size(), tr("file"), tr("files")));
    m_status->setText(text);
    QString details;
    for (const std::string& w : m_run->warnings)
        details += QString::fromStdString(w) + QLatin1Char('\n');
    for (const SkippedPath& s : m_run->skipped)
        details += QString::fromStdString(s.path + ": " + s.reason) + QLatin1Char('\n');
    for (const std::string& w : m_waiting)
        details += QFile::decodeName(w.c_str()) + tr(": still being written") + QLatin1Char('\n');
    m_status->setToolTip(details.trimmed());
}

void RunWindow::showTensor(int series) {
    const TensorSeries* s = m_tensors->seriesAt(series);
    m_shownSeries = s ? series : -1;
    m_charts->show(m_run.get(), s);
    const QString name = s ? QString::fromStdString(s->name) : QString();
    m_layers->setSelectedTensor(name);
    m_distribution->setSelectedTensor(name);
    // Told by name: the same tensor at another index after a reload is no change.
    const std::pair<QString, size_t> shown{currentTensorName(), s ? s->occurrence : 0};
    if (shown != m_shownKey) {
        m_shownKey = shown;
        Q_EMIT currentTensorChanged(shown.first);
    }
}

QString RunWindow::currentTensorName() const {
    const TensorSeries* s = m_tensors->seriesAt(m_shownSeries);
    return s ? QString::fromStdString(s->name) : QString();
}

bool RunWindow::selectTensorNamed(const QString& name, size_t occurrence) {
    const int series = m_tensors->findSeries(name.toStdString(), occurrence);
    if (series < 0)
        return false;
    const QModelIndex index = m_tensorProxy->mapFromSource(m_tensors->indexOfSeries(series));
    if (index.isValid()) {
        m_tensorView->setCurrentIndex(index);
        m_tensorView->scrollTo(index);
    }
    showTensor(series);
    return true;
}

int RunWindow::checkpointOfRow(const QModelIndex& index) const {
    return index.isValid() ? m_checkpointProxy->mapToSource(index).row() : -1;
}

void RunWindow::openCheckpoint(int checkpoint) {
    if (!m_run || checkpoint < 0 || size_t(checkpoint) >= m_run->checkpoints.size())
        return;
    WindowRegistry::instance().openFile(firstFile(m_run->checkpoints[size_t(checkpoint)]));
}

void RunWindow::compareWithPrevious(int checkpoint) {
    if (!m_run || checkpoint < 1 || size_t(checkpoint) >= m_run->checkpoints.size())
        return;
    WindowRegistry::instance().openComparison(firstFile(m_run->checkpoints[size_t(checkpoint) - 1]),
                                              firstFile(m_run->checkpoints[size_t(checkpoint)]));
}

void RunWindow::checkpointMenu(const QPoint& pos) {
    const int c = checkpointOfRow(m_checkpointView->indexAt(pos));
    if (c < 0)
        return;
    QMenu menu(this);
    menu.setObjectName(QStringLiteral("checkpointMenu"));
    menu.addAction(tr("Open This Checkpoint"), this, [this, c] { openCheckpoint(c); })
        ->setObjectName(QStringLiteral("openCheckpoint"));
    QAction* compare = menu.addAction(tr("Compare with Previous Checkpoint"), this,
                                      [this, c] { compareWithPrevious(c); });
    compare->setObjectName(QStringLiteral("compareWithPrevious"));
    compare->setEnabled(c > 0);
    // The Trainer's pickles beside the model (optimizer.pt, scheduler.pt,
    // rng_state.pth, training_args.bin…) open in the browser, read without
    // running them; by name, so the menu reads no file.
    bool first = true;
    for (const std::string& side : m_run->checkpoints[size_t(c)].sideFiles) {
        const QString path = QFile::decodeName(side.c_str());
        const QString name = QFileInfo(path).fileName();
        if (!QRegularExpression(QStringLiteral("\\.(pt|pth|bin|ckpt)$")).match(name).hasMatch())
            continue;
        if (std::exchange(first, false))
            menu.addSeparator();
        menu.addAction(tr("Open %1").arg(name), this,
                       [path] { WindowRegistry::instance().openFile(path); })
            ->setObjectName(QStringLiteral("openSideFile:") + name);
    }
    menu.exec(m_checkpointView->viewport()->mapToGlobal(pos));
}

bool RunWindow::showTab(const QString& title) {
    for (int i = 0; i < m_tabs->count(); ++i)
        if (m_tabs->tabText(i).remove(QLatin1Char('&')).compare(title, Qt::CaseInsensitive) == 0) {
            m_tabs->setCurrentIndex(i);
            return true;
        }
    return false;
}
