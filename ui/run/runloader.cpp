#include "run/runloader.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/io/httpsource.h"
#include "ckptscope/run/writesettle.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QTimer>

#include <filesystem>
#include <set>

using namespace ckptscope;

struct RunLoader::Settle {
    std::mutex mutex;
    WriteSettle settle{1'000'000'000};
};

RunLoader::RunLoader(QObject* parent)
    : QObject(parent), m_task(this), m_watcher(new QFileSystemWatcher(this)),
      m_settle(new QTimer(this)), m_repoll(new QTimer(this)),
      m_settleState(std::make_shared<Settle>()) {
    // Directory events come in bursts (create, write, rename): read once
    // they pause.
    m_settle->setSingleShot(true);
    m_settle->setInterval(300);
    m_repoll->setSingleShot(true);
    m_repoll->setInterval(1000);
    connect(m_settle, &QTimer::timeout, this, &RunLoader::reload);
    connect(m_repoll, &QTimer::timeout, this, &RunLoader::reload);
    connect(m_watcher, &QFileSystemWatcher::directoryChanged, m_settle,
            qOverload<>(&QTimer::start));
    connect(m_watcher, &QFileSystemWatcher::fileChanged, m_settle, qOverload<>(&QTimer::start));
}

RunLoader::~RunLoader() = default; // the task cancels and waits for its worker

void RunLoader::setQuietMs(int ms) {
    std::lock_guard lock(m_settleState->mutex);
    m_settleState->settle = WriteSettle(int64_t(ms) * 1'000'000);
    m_repoll->setInterval(ms);
}

void RunLoader::open(const QStringList& paths) {
    m_paths = paths;
    reload();
}

void RunLoader::cancel() {
    if (!m_task.isRunning())
        return;
    m_task.cancel();         // its result is dropped: report the cancel here
    m_reloadPending = false; // and the user asked for no more reading
    auto result = std::make_shared<Result>();
    result->error = tr("Cancelled.");
    finish(result);
}

void RunLoader::reload() {
    if (m_task.isRunning()) {
        m_reloadPending = true; // read again when this read ends
        return;
    }
    m_settle->stop();
    m_repoll->stop();
    std::vector<std::string> paths;
    for (const QString& p : std::as_const(m_paths))
        paths.push_back(QFile::encodeName(p).toStdString());
    Q_EMIT started();
    m_task.start(
        [paths, settle = m_settleState, self = this](BackgroundTask::Run& job) {
            auto out = std::make_shared<Result>();
            // Checkpoints by URL stop on Cancel too.
            const HttpTask http(job.cancelFlag(), nullptr);
            Discovery found = discoverCheckpoints(paths);
            {
                std::lock_guard lock(settle->mutex);
                out->waiting = settle->settle.holdBack(found, WriteSettle::nowNs());
            }
            QElapsedTimer clock;
            clock.start();
            qint64 lastPost = -1000;
            size_t lastDone = 0;
            RunOptions options;
            options.cancel = job.cancelFlag();
            options.progress = [&](const RunProgress& p) {
                // Each file, and ten times a second within one: no flood.
                const qint64 now = clock.elapsed();
                if (p.filesDone == lastDone && now - lastPost < 100)
                    return;
                lastDone = p.filesDone;
                lastPost = now;
                const Progress progress{p.filesDone, p.filesTotal, p.bytesRead, now / 1000.0};
                job.post([self, progress] { Q_EMIT self->progress(progress); });
            };
            // What the cache holds first, shown at once; often that is all.
            RunOptions quick;
            quick.cacheOnly = true;
            auto cached = std::make_shared<Run>(readCandidates(found, quick));
            if (cached->notCached > 0 && !cached->checkpoints.empty()) {
                auto preview = std::make_shared<Result>();
                preview->series =
                    std::make_shared<const std::vector<TensorSeries>>(tensorSeries(*cached));
                preview->run = std::move(cached);
                preview->waiting = out->waiting;
                job.post([self, preview] { Q_EMIT self->preview(preview); });
            } else if (cached->notCached == 0) {
                out->series =
                    std::make_shared<const std::vector<TensorSeries>>(tensorSeries(*cached));
                out->run = std::move(cached);
                job.finish([self, out] { self->finish(out); });
                return;
            }
            std::set<std::string> noCheckpoint; // found so by their first bytes
            for (const SkippedPath& s : found.skipped)
                noCheckpoint.insert(s.path);
            auto run = std::make_shared<Run>(readCandidates(std::move(found), options));
            for (const SkippedPath& s : run->skipped)
                if (!noCheckpoint.count(s.path))
                    out->unreadable.push_back(s.path);
            out->series = std::make_shared<const std::vector<TensorSeries>>(tensorSeries(*run));
            out->run = std::move(run);
            job.finish([self, out] { self->finish(out); });
        },
        {nullptr, [this](const QString& message) {
             auto result = std::make_shared<Result>();
             result->error = message;
             finish(result);
         }});
}

void RunLoader::finish(std::shared_ptr<const Result> result) {
    if (result->run)
        watch(*result);
    if (!result->waiting.empty())
        m_repoll->start();
    Q_EMIT finished(result);
    if (m_reloadPending) {
        m_reloadPending = false;
        reload();
    }
}

void RunLoader::watch(const Result& result) {
    std::set<QString> want;
    for (const QString& p : std::as_const(m_paths)) {
        const QFileInfo fi(p);
        if (!fi.isDir())
            continue;
        want.insert(fi.absoluteFilePath());
        for (const QFileInfo& sub : QDir(p).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot))
            if (isTrainerCheckpointFolder(sub.fileName().toStdString()))
                want.insert(sub.absoluteFilePath());
    }
    // A file still being written, or one that did not read cleanly, is read
    // again when it changes (a folder reports only files coming and going).
    for (const std::string& f : result.waiting)
        if (QFileInfo(QFile::decodeName(f.c_str())).isFile())
            want.insert(QFileInfo(QFile::decodeName(f.c_str())).absoluteFilePath());
    // Each checkpoint's files too: one rewritten in place (last.ckpt saved
    // over) changes no folder; and the Trainer's states, rewritten so.
    // (Not every skipped file: a training log appended to every step must
    // not read the run again every second.)
    const auto local = [&](const std::string& f) {
        if (!isUrl(f))
            want.insert(QFileInfo(QFile::decodeName(f.c_str())).absoluteFilePath());
    };
    const auto states = [&](const std::vector<std::string>& sideFiles) {
        for (const std::string& f : sideFiles)
            if (std::filesystem::path(f).filename() == kTrainerStateName)
                local(f);
    };
    for (const RunCheckpoint& cp : result.run->checkpoints) {
        for (const std::string& f : cp.files)
            local(f);
        states(cp.sideFiles);
    }
    states(result.run->sideFiles);
    for (const std::string& f : result.unreadable)
        local(f); // a server tells nothing of changes
    QStringList drop, add;
    for (const QString& w : m_watcher->directories() + m_watcher->files())
        if (!want.count(w))
            drop << w;
    const QStringList have = m_watcher->directories() + m_watcher->files();
    for (const QString& w : want)
        if (!have.contains(w))
            add << w;
    if (!drop.isEmpty())
        m_watcher->removePaths(drop);
    if (!add.isEmpty())
        m_watcher->addPaths(add);
}

QString runProgressText(const RunLoader::Progress& p) {
    QString text = RunLoader::tr("%1 of %2 files")
                       .arg(QString::fromStdString(fmt::grouped(p.filesDone)),
                            QString::fromStdString(fmt::grouped(p.filesTotal)));
    if (p.bytesRead > 0 && p.seconds > 0) {
        // Page-cache reads pass 1 GB/s: "2.0 GB/s" rather than "2002.4 MB/s".
        const double mb = double(p.bytesRead) / 1e6 / p.seconds;
        text +=
            QStringLiteral(" · ") + (mb >= 1000 ? RunLoader::tr("%1 GB/s").arg(mb / 1e3, 0, 'f', 1)
                                                : RunLoader::tr("%1 MB/s").arg(mb, 0, 'f', 1));
    }
    return text;
}
