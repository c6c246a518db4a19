#include "statsrunner.h"

StatsRunner::StatsRunner(QObject* parent) : QObject(parent) {
    qRegisterMetaType<ckptscope::StatsResult>();
}

void StatsRunner::start(int key, uint64_t count, ckptscope::ValueReader reader, int bins) {
    m_task.start(
        [this, key, count, reader = std::move(reader), bins](BackgroundTask::Run& run) {
            ckptscope::StatsOptions options;
            options.bins = bins;
            options.cancel = run.cancelFlag();
            options.progress = [&run](double p) { run.progress(p); };
            const ckptscope::StatsResult result = ckptscope::computeStats(count, reader, options);
            run.finish([this, key, result] { Q_EMIT finished(key, result); });
        },
        {[this, key](double p) { Q_EMIT progress(key, p); },
         [this, key](const QString& message) { Q_EMIT failed(key, message); }});
}
