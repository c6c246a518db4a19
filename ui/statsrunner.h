#pragma once

#include "ckptscope/tensorstats.h"

#include <QFuture>
#include <QObject>

#include <atomic>
#include <functional>
#include <memory>

// Computes statistics and a histogram off the GUI thread. Starting a new
// request cancels the one before it; results of a cancelled request are
// never delivered.
class StatsRunner : public QObject {
    Q_OBJECT
public:
    explicit StatsRunner(QObject* parent = nullptr);
    ~StatsRunner() override;

    // `key` identifies the request in the signals (for example a tensor index).
    // The reader must stay valid until finished/failed (capture what it needs).
    void start(int key, uint64_t count, ckptscope::ValueReader reader, int bins);
    // Any statistics job (a document tensor of any dtype: computeTensorStats).
    using Job = std::function<ckptscope::StatsResult(const ckptscope::StatsOptions&)>;
    void start(int key, Job job, int bins);
    void cancel();
    bool isRunning() const { return m_running; }

Q_SIGNALS:
    void progress(int key, double fraction);
    void finished(int key, const ckptscope::StatsResult& result);
    void failed(int key, const QString& message);

private:
    std::shared_ptr<std::atomic<bool>> m_cancel;
    QList<QFuture<void>> m_futures;
    bool m_running = false;
};
