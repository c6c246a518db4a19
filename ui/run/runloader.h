#pragma once

#include "common/backgroundtask.h"

#include "ckptscope/run/runseries.h"

#include <QObject>
#include <QStringList>

#include <memory>
#include <mutex>

class QFileSystemWatcher;
class QTimer;
namespace ckptscope {
class WriteSettle;
}

// Reads a run off the GUI thread (BackgroundTask): finds its checkpoints,
// holds back the files a training job is still writing (WriteSettle: size
// and ctime unchanged for a moment), shows what the cache holds at once
// (preview) and then summarises the rest, and derives the series. The folders are watched, and so
// are the checkpoints' files (one may be rewritten in place), the Trainer's states and the files
// held back or failing to read: a change reads the run again after a short pause;
// files held back are looked at again once the moment has passed. One read at a time; a change
// during a read reads again after it.
class RunLoader : public QObject {
    Q_OBJECT
public:
    struct Result {
        std::shared_ptr<const ckptscope::Run> run; // null when cancelled or failed
        std::shared_ptr<const std::vector<ckptscope::TensorSeries>> series;
        std::vector<std::string> waiting;    // files still being written
        std::vector<std::string> unreadable; // checkpoints that did not read cleanly
        QString error;
    };
    struct Progress {
        size_t filesDone = 0, filesTotal = 0;
        uint64_t bytesRead = 0; // values summarised (cache hits add none)
        double seconds = 0;     // since the read started
    };

    explicit RunLoader(QObject* parent = nullptr);
    ~RunLoader() override;

    void open(const QStringList& paths);
    void reload();
    void cancel();
    bool isLoading() const { return m_task.isRunning(); }
    QStringList paths() const { return m_paths; }
    // How long a file must stay unchanged to count as written (default 1 s).
    void setQuietMs(int ms);

Q_SIGNALS:
    void started();
    void progress(const RunLoader::Progress& progress);
    void finished(std::shared_ptr<const RunLoader::Result> result);
    // Before finished, when some checkpoints came from the cache and others
    // are still being summarised: those from the cache.
    void preview(std::shared_ptr<const RunLoader::Result> cached);

private:
    void finish(std::shared_ptr<const Result> result);
    void watch(const Result& result);

    QStringList m_paths;
    BackgroundTask m_task;
    QFileSystemWatcher* m_watcher;
    QTimer* m_settle; // a pause after a change
    QTimer* m_repoll; // files held back: look again
    // Shared with the worker; one poll at a time under the mutex.
    struct Settle;
    std::shared_ptr<Settle> m_settleState;
    bool m_reloadPending = false;
};

// "3 of 8 files · 412.5 MB/s" (the rate once values were read).
QString runProgressText(const RunLoader::Progress& progress);
