#pragma once

#include <QFuture>
#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>

// One background job of the compare window at a time: starting another
// cancels the one before (its result is never delivered), progress is
// throttled to whole percents, and the destructor waits for the job, which
// may read files owned elsewhere. Results travel as shared_ptr<void>; the
// window knows each job's type.
class CompareTask : public QObject {
    Q_OBJECT
public:
    using Progress = std::function<void(double)>;
    using Work = std::function<std::shared_ptr<void>(const std::atomic<bool>& cancel,
                                                     const Progress& progress)>;

    explicit CompareTask(QObject* parent = nullptr);
    ~CompareTask() override;

    void start(Work work);
    void cancel();
    bool isRunning() const { return m_running; }

Q_SIGNALS:
    void progress(double fraction);
    void finished(std::shared_ptr<void> result);
    // what() of the exception the job threw.
    void failed(const QString& message);
    void cancelled();

private:
    std::shared_ptr<std::atomic<bool>> m_cancel;
    QList<QFuture<void>> m_futures;
    bool m_running = false;
};
