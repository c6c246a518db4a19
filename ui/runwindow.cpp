#include "runwindow.h"

#include "distributionview.h"
#include "layerprofileview.h"
#include "metadatachartview.h"
#include "runchartview.h"
#include "runcheckpointmodel.h"
#include "runtensormodel.h"

#include "ckptscope/numberformat.h"

#include <QDir>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QListView>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QtConcurrent>

using namespace ckptscope;

struct RunWindow::Loaded {
    std::shared_ptr<const Run> run;
    std::shared_ptr<const std::vector<TensorSeries>> series;
    QString error;
};

RunWindow::RunWindow(QWidget* parent)
    : QMainWindow(parent), m_checkpoints(new RunCheckpointModel(this)),
      m_tensors(new RunTensorModel(this)), m_checkpointView(new QTableView),
      m_tensorView(new QListView), m_charts(new RunChartView), m_tabs(new QTabWidget),
      m_distribution(new DistributionView), m_layers(new LayerProfileView),
      m_metadata(new MetadataChartView), m_status(new QLabel), m_progress(new QProgressBar),
      m_cancel(new QPushButton(tr("Cancel"))), m_watcher(new QFileSystemWatcher(this)),
      m_settle(new QTimer(this)) {
    setAttribute(Qt::WA_DeleteOnClose);
    m_checkpointView->setModel(m_checkpoints);
    m_checkpointView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_checkpointView->verticalHeader()->hide();
    m_checkpointView->horizontalHeader()->setStretchLastSection(true);
    m_tensorView->setModel(m_tensors);
    m_tensorView->setUniformItemSizes(true);

    auto* left = new QSplitter(Qt::Vertical);
    left->addWidget(m_checkpointView);
    left->addWidget(m_tensorView);
    auto* main = new QSplitter(Qt::Horizontal);
    main->addWidget(left);
    m_tabs->addTab(m_charts, tr("Over steps"));
    m_tabs->addTab(m_distribution, tr("Distribution"));
    m_tabs->addTab(m_layers, tr("Layer profile"));
    m_tabs->addTab(m_metadata, tr("Metadata"));
    connect(m_layers, &LayerProfileView::tensorChosen, this,
            [this](const QString& name) { selectTensorNamed(name); });
    main->addWidget(m_tabs);
    main->setStretchFactor(0, 2);
    main->setStretchFactor(1, 3);
    main->setSizes({560, 840}); // the charts get the larger half from the start
    setCentralWidget(main);

    statusBar()->addWidget(m_status, 1);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    m_progress->hide();
    m_cancel->hide();
    connect(m_cancel, &QPushButton::clicked, this, [this] {
        if (m_cancelFlag)
            m_cancelFlag->store(true);
    });
    connect(m_tensorView->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) { showTensor(current.row()); });
    connect(&m_load, &QFutureWatcher<std::shared_ptr<Loaded>>::finished, this,
            &RunWindow::finishLoad);
    connect(&m_load, &QFutureWatcher<std::shared_ptr<Loaded>>::progressValueChanged, m_progress,
            &QProgressBar::setValue);
    connect(&m_load, &QFutureWatcher<std::shared_ptr<Loaded>>::progressRangeChanged, m_progress,
            &QProgressBar::setRange);
    // A training job writes a checkpoint over seconds: read the folder again
    // once it has been quiet for a second.
    m_settle->setSingleShot(true);
    m_settle->setInterval(1000);
    connect(m_settle, &QTimer::timeout, this, &RunWindow::startLoad);
    connect(m_watcher, &QFileSystemWatcher::directoryChanged, m_settle,
            qOverload<>(&QTimer::start));
    connect(m_watcher, &QFileSystemWatcher::fileChanged, m_settle, qOverload<>(&QTimer::start));
    resize(1400, 860);
}

RunWindow::~RunWindow() {
    if (m_cancelFlag)
        m_cancelFlag->store(true);
    m_load.waitForFinished();
}

void RunWindow::openPaths(const QStringList& paths) {
    m_paths = paths;
    const QString first = paths.isEmpty() ? QString() : QFileInfo(paths.first()).absoluteFilePath();
    setWindowTitle(tr("%1 — run — Ckptscope")
                       .arg(paths.size() == 1 ? first : tr("%1 paths").arg(paths.size())));
    watchFolders();
    startLoad();
}

void RunWindow::watchFolders() {
    if (!m_watcher->directories().isEmpty())
        m_watcher->removePaths(m_watcher->directories());
    for (const QString& p : m_paths) {
        const QFileInfo fi(p);
        if (!fi.isDir())
            continue;
        m_watcher->addPath(fi.absoluteFilePath());
        for (const QFileInfo& sub : QDir(p).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot))
            if (isTrainerCheckpointFolder(sub.fileName().toStdString()))
                m_watcher->addPath(sub.absoluteFilePath());
    }
}

void RunWindow::startLoad() {
    if (m_load.isRunning()) {
        m_reloadPending = true; // read again when this load ends
        return;
    }
    std::vector<std::string> paths;
    for (const QString& p : m_paths)
        paths.push_back(QFile::encodeName(p).toStdString());
    m_cancelFlag = std::make_shared<std::atomic<bool>>(false);
    auto cancel = m_cancelFlag;
    m_progress->setRange(0, 0);
    m_progress->show();
    m_cancel->show();
    m_status->setText(tr("Reading checkpoints…"));
    m_load.setFuture(QtConcurrent::run([paths, cancel](QPromise<std::shared_ptr<Loaded>>& promise) {
        auto out = std::make_shared<Loaded>();
        RunOptions options;
        options.cancel = cancel.get();
        options.progress = [&promise](const RunProgress& p) {
            promise.setProgressRange(0, int(p.filesTotal));
            promise.setProgressValue(int(p.filesDone));
        };
        try {
            auto run = std::make_shared<Run>(readRun(paths, options));
            out->series = std::make_shared<const std::vector<TensorSeries>>(tensorSeries(*run));
            out->run = std::move(run);
        } catch (const Cancelled&) {
            out->error = QObject::tr("Cancelled.");
        } catch (const std::exception& e) {
            out->error = QString::fromStdString(e.what());
        }
        promise.addResult(out);
    }));
}

void RunWindow::finishLoad() {
    m_progress->hide();
    m_cancel->hide();
    const auto results = m_load.future().results();
    const std::shared_ptr<Loaded> loaded = results.isEmpty() ? nullptr : results.first();
    if (!loaded || !loaded->run) {
        m_status->setText(loaded ? loaded->error : tr("Reading failed."));
    } else {
        // Keep the selected tensor across a reload (a new checkpoint arrived).
        const TensorSeries* current = m_tensors->seriesAt(m_tensorView->currentIndex().row());
        const std::string keepName = current ? current->name : std::string();
        const size_t keepOcc = current ? current->occurrence : 0;
        m_run = loaded->run;
        m_series = loaded->series;
        m_checkpoints->setRun(m_run);
        m_tensors->setSeries(m_series);
        m_layers->setRun(m_run, m_series);
        m_distribution->setRun(m_run, m_series);
        m_metadata->setRun(m_run);
        m_checkpointView->resizeColumnsToContents();
        int row = -1;
        for (size_t i = 0; i < m_series->size(); ++i)
            if ((*m_series)[i].name == keepName && (*m_series)[i].occurrence == keepOcc)
                row = int(i);
        if (row < 0 && !m_series->empty())
            row = 0;
        if (row >= 0)
            m_tensorView->setCurrentIndex(m_tensors->index(row));
        showTensor(row);
        QString text = tr("%1 checkpoints, %2 tensors, %3 skipped; cache: %4 hits, %5 misses")
                           .arg(m_run->checkpoints.size())
                           .arg(m_series->size())
                           .arg(m_run->skipped.size())
                           .arg(m_run->cacheHits)
                           .arg(m_run->cacheMisses);
        m_status->setText(text);
        QString skipped;
        for (const SkippedPath& s : m_run->skipped)
            skipped += QString::fromStdString(s.path + ": " + s.reason) + QLatin1Char('\n');
        m_status->setToolTip(skipped.trimmed());
        watchFolders(); // new checkpoint-N folders
    }
    Q_EMIT runLoaded();
    if (m_reloadPending) {
        m_reloadPending = false;
        startLoad();
    }
}

void RunWindow::showTensor(int row) {
    const TensorSeries* series = m_tensors->seriesAt(row);
    m_charts->show(m_run.get(), series);
    const QString name = series ? QString::fromStdString(series->name) : QString();
    m_layers->setSelectedTensor(name);
    m_distribution->setSelectedTensor(name);
}

bool RunWindow::selectTensorNamed(const QString& name) {
    for (int row = 0; row < m_tensors->rowCount(); ++row)
        if (const TensorSeries* s = m_tensors->seriesAt(row);
            s && s->occurrence == 0 && QString::fromStdString(s->name) == name) {
            m_tensorView->setCurrentIndex(m_tensors->index(row));
            return true;
        }
    return false;
}

bool RunWindow::showTab(const QString& title) {
    for (int i = 0; i < m_tabs->count(); ++i)
        if (m_tabs->tabText(i).remove(QLatin1Char('&')).compare(title, Qt::CaseInsensitive) == 0) {
            m_tabs->setCurrentIndex(i);
            return true;
        }
    return false;
}
