#pragma once

#include <QFuture>
#include <QObject>
#include <QPointer>
#include <QString>

class QThreadPool;

#include <atomic>
#include <concepts>
#include <functional>
#include <memory>
#include <type_traits>

// Runs one job at a time off the GUI thread for a receiver (a page, a
// runner: an object of the GUI thread). Starting a job cancels the one
// before it, and what a cancelled or superseded job posts back is dropped,
// so a slow old result never overwrites a new one. Posts run on the GUI
// thread, only while the receiver lives. Progress reports are throttled to one per percent. By
// default the destructor waits for every worker, because workers may read
// data their owner keeps alive.
class BackgroundTask {
public:
    struct Handlers {
        std::function<void(double)> progress;       // fraction done, 0..1
        std::function<void(const QString&)> failed; // an exception escaped the job
    };

    // What a worker sees of its run. Thread-safe.
    class Run {
    public:
        // True once cancel() or a newer start() was called.
        bool cancelled() const;
        // The flag core routines poll (StatsOptions/LayoutOptions::cancel).
        const std::atomic<bool>* cancelFlag() const { return m_cancel.get(); }
        // Delivered to the progress handler when the whole percent changes.
        void progress(double fraction);
        // Runs fn on the GUI thread if this run is still current.
        void post(std::function<void()> fn) const;
        // Like post(), and marks the task idle just before fn runs.
        void finish(std::function<void()> fn) const;

    private:
        friend class BackgroundTask;
        void fail(const QString& message) const;
        struct Shared;
        std::shared_ptr<Shared> m_shared;
        std::shared_ptr<std::atomic<bool>> m_cancel;
        std::shared_ptr<const Handlers> m_handlers;
        int m_generation = 0;
        std::atomic<int> m_lastPercent{-1};
    };

    enum class OnDestroy { Wait, Detach };

    // Detach suits jobs that touch nothing of their owner (e.g. opening a
    // file by name): closing a window then need not wait for a slow read.
    explicit BackgroundTask(QObject* receiver, OnDestroy onDestroy = OnDestroy::Wait);
    ~BackgroundTask();
    BackgroundTask(const BackgroundTask&) = delete;
    BackgroundTask& operator=(const BackgroundTask&) = delete;

    // Runs work(run) on the global thread pool after cancelling the current
    // job. A ckptscope::Cancelled escaping work ends the run silently; a
    // std::exception goes to handlers.failed (if the run is still current).
    // Either way the task is idle afterwards.
    void start(std::function<void(Run&)> work, Handlers handlers = {});
    // The same for a job with a result: work(run) returns it on the worker,
    // done(result) receives it on the GUI thread if the run is still current
    // — typed end to end, no casts.
    template <typename Work, typename Done>
    requires std::invocable<Work&, Run&> &&
        std::invocable<const Done&, std::invoke_result_t<Work&, Run&>>
    void start(Work work, Done done, Handlers handlers = {}) {
        using Result = std::invoke_result_t<Work&, Run&>;
        static_assert(!std::is_void_v<Result>, "a job without a result uses run.finish()");
        start(
            [work = std::move(work), done = std::move(done)](Run& run) mutable {
                // Shared: the posted function must be copyable, the result need not be.
                auto result = std::make_shared<Result>(work(run));
                run.finish([done, result] { done(std::move(*result)); });
            },
            std::move(handlers));
    }
    // Drops the current job's further posts and asks it to stop.
    void cancel();
    // A job was started and has neither finished, failed nor been cancelled.
    bool isRunning() const;
    // Waits for every worker started so far (tests, shutdown).
    void waitForFinished();
    // The pool every job runs on (not Qt's global one, which painting uses);
    // other work that waits on files runs there too.
    static QThreadPool* pool();

private:
    std::shared_ptr<Run::Shared> m_shared;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    QList<QFuture<void>> m_futures;
    OnDestroy m_onDestroy;
};
