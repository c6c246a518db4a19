#include "tensor/statsrunner.h"

StatsRunner::StatsRunner(QObject* parent) : QObject(parent) {
    qRegisterMetaType<ckptscope::StatsResult>();
}

void StatsRunner::start(int key, uint64_t count, ckptscope::ValueReader reader, int bins) {
    start(
        key,
        [count, reader = std::move(reader)](const ckptscope::StatsOptions& options) {
            return ckptscope::computeStats(count, reader, options);
        },
        bins);
}

void StatsRunner::start(int key, Job job, int bins) {
    m_task.start(
        [this, key, job = std::move(job), bins](BackgroundTask::Run& run) {
            ckptscope::StatsOptions options;
            options.bins = bins;
            options.cancel = run.cancelFlag();
            options.progress = [&run](double p) { run.progress(p); };
            const ckptscope::StatsResult result = job(options);
            run.finish([this, key, result] { Q_EMIT finished(key, result); });
        },
        {[this, key](double p) { Q_EMIT progress(key, p); },
         [this, key](const QString& message) { Q_EMIT failed(key, message); }});
}
