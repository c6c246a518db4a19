#include "statsrunner.h"

#include <QPointer>
#include <QtConcurrent>

StatsRunner::StatsRunner(QObject* parent) : QObject(parent) {
    qRegisterMetaType<ckptscope::StatsResult>();
}

StatsRunner::~StatsRunner() {
    cancel();
    // Readers may point into documents owned elsewhere: finish before leaving.
    for (auto& f : m_futures)
        f.waitForFinished();
}

void StatsRunner::cancel() {
    if (m_cancel)
        *m_cancel = true;
    m_running = false;
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
    cancel();
    auto flag = std::make_shared<std::atomic<bool>>(false);
    m_cancel = flag;
    m_running = true;
    m_futures.removeIf([](const QFuture<void>& f) { return f.isFinished(); });
    QPointer<StatsRunner> self(this);
    m_futures << QtConcurrent::run([self, flag, key, job = std::move(job), bins] {
        ckptscope::StatsOptions options;
        options.bins = bins;
        options.cancel = flag.get();
        auto lastReport = std::make_shared<std::atomic<int>>(-1);
        options.progress = [self, key, lastReport, flag](double p) {
            const int percent = int(p * 100);
            if (lastReport->exchange(percent) == percent)
                return;
            QMetaObject::invokeMethod(
                self,
                [self, key, p, flag] {
                    if (self && !*flag) // a cancelled run reports nothing
                        Q_EMIT self->progress(key, p);
                },
                Qt::QueuedConnection);
        };
        auto deliver = [self, flag](auto emitter) {
            QMetaObject::invokeMethod(
                self,
                [self, flag, emitter] {
                    if (!self || *flag) // cancelled meanwhile: drop it
                        return;
                    self->m_running = false;
                    emitter(self.data());
                },
                Qt::QueuedConnection);
        };
        try {
            ckptscope::StatsResult result = job(options);
            deliver([key, result](StatsRunner* r) { Q_EMIT r->finished(key, result); });
        } catch (const ckptscope::Cancelled&) {
        } catch (const std::exception& e) {
            const QString message = QString::fromStdString(e.what());
            deliver([key, message](StatsRunner* r) { Q_EMIT r->failed(key, message); });
        }
    });
}
