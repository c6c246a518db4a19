#include "common/backgroundtask.h"

#include "ckptscope/stats/tensorstats.h" // ckptscope::Cancelled

#include <QCoreApplication>
#include <QThread>
#include <QThreadPool>
#include <QtConcurrent>

#include <algorithm>

// Shared by the task and its runs, so a post that arrives after the task is
// gone still has something to check.
struct BackgroundTask::Run::Shared {
    QPointer<QObject> receiver;  // read on the GUI thread only
    std::atomic<int> generation; // the current run; older ones are stale
    bool running = false;        // GUI thread only
};

bool BackgroundTask::Run::cancelled() const {
    return *m_cancel || m_shared->generation != m_generation;
}

void BackgroundTask::Run::progress(double fraction) {
    if (!m_handlers->progress)
        return;
    const int percent = int(fraction * 100);
    if (m_lastPercent.exchange(percent) == percent)
        return; // one report per whole percent: a fast job must not flood the event loop
    post([h = m_handlers, fraction] { h->progress(fraction); });
}

void BackgroundTask::Run::post(std::function<void()> fn) const {
    // Posted to the application object, which outlives every receiver; the
    // receiver itself is looked at only on the GUI thread, where it dies.
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [shared = m_shared, cancel = m_cancel, generation = m_generation, fn = std::move(fn)] {
            if (shared->receiver && !*cancel && shared->generation == generation)
                fn();
        },
        Qt::QueuedConnection);
}

void BackgroundTask::Run::finish(std::function<void()> fn) const {
    post([shared = m_shared, fn = std::move(fn)] {
        shared->running = false;
        fn();
    });
}

void BackgroundTask::Run::fail(const QString& message) const {
    finish([h = m_handlers, message] {
        if (h->failed)
            h->failed(message);
    });
}

BackgroundTask::BackgroundTask(QObject* receiver, OnDestroy onDestroy)
    : m_shared(std::make_shared<Run::Shared>()), m_onDestroy(onDestroy) {
    m_shared->receiver = receiver;
    m_shared->generation = 0;
}

BackgroundTask::~BackgroundTask() {
    cancel();
    if (m_onDestroy == OnDestroy::Wait)
        waitForFinished();
}

void BackgroundTask::cancel() {
    if (m_cancel)
        *m_cancel = true;
    ++m_shared->generation; // posts already queued are dropped too
    m_shared->running = false;
}

bool BackgroundTask::isRunning() const {
    return m_shared->running;
}

void BackgroundTask::waitForFinished() {
    for (QFuture<void>& f : m_futures)
        f.waitForFinished();
    m_futures.clear();
}

void BackgroundTask::start(std::function<void(Run&)> work, Handlers handlers) {
    cancel();
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_shared->running = true;
    m_futures.removeIf([](const QFuture<void>& f) { return f.isFinished(); });
    auto run = std::make_shared<Run>();
    run->m_shared = m_shared;
    run->m_cancel = m_cancel;
    run->m_handlers = std::make_shared<const Handlers>(std::move(handlers));
    run->m_generation = m_shared->generation;
    m_futures << QtConcurrent::run(pool(), [run, work = std::move(work)] {
        // Nothing may escape: QFuture would rethrow it in waitForFinished().
        try {
            work(*run);
        } catch (const ckptscope::Cancelled&) {
        } catch (const std::exception& e) {
            run->fail(QString::fromStdString(e.what()));
        } catch (...) {
            run->fail(QStringLiteral("unexpected error"));
        }
    });
}

// Jobs wait on disks and servers (a value read from a slow URL takes
// seconds), so they get a pool of their own: Qt's global pool also serves
// the raster paint engine, and a job blocked there stalled the window's
// painting until the server answered (tst_remotevalues caught it). The work
// that computes spreads over the core's own statistics pool.
QThreadPool* BackgroundTask::pool() {
    static QThreadPool* jobs = [] {
        auto* p = new QThreadPool;
        p->setMaxThreadCount(std::max(8, 2 * QThread::idealThreadCount()));
        return p;
    }();
    return jobs;
}
