#pragma once

#include "common/backgroundtask.h"

#include "ckptscope/stats/tensorstats.h"

#include <QObject>

#include <functional>

// Computes statistics and a histogram off the GUI thread. Starting a new
// request cancels the one before it; results of a cancelled request are
// never delivered.
class StatsRunner : public QObject {
    Q_OBJECT
public:
    explicit StatsRunner(QObject* parent = nullptr);

    // Any statistics job (a document tensor of any dtype: computeTensorStats).
    using Job = std::function<ckptscope::StatsResult(const ckptscope::StatsOptions&)>;

    // `key` identifies the request in the signals (for example a tensor index).
    // The job (or reader) must stay valid until finished/failed (capture what
    // it needs).
    void start(int key, Job job, int bins);
    void start(int key, uint64_t count, ckptscope::ValueReader reader, int bins);
    void cancel() { m_task.cancel(); }
    bool isRunning() const { return m_task.isRunning(); }

Q_SIGNALS:
    void progress(int key, double fraction);
    void finished(int key, const ckptscope::StatsResult& result);
    void failed(int key, const QString& message);

private:
    // Readers may point into documents owned elsewhere: it waits for them.
    BackgroundTask m_task{this};
};
