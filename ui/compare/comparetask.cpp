#include "compare/comparetask.h"

#include "ckptscope/stats/tensorstats.h"

#include <QPointer>
#include <QtConcurrent>

CompareTask::CompareTask(QObject* parent) : QObject(parent) {}

CompareTask::~CompareTask() {
    cancel();
    for (auto& f : m_futures)
        f.waitForFinished();
}

void CompareTask::cancel() {
    if (m_cancel)
        *m_cancel = true;
    if (m_running) {
        m_running = false;
        Q_EMIT cancelled();
    }
}

void CompareTask::start(Work work) {
    if (m_cancel)
        *m_cancel = true; // the previous job: dropped silently
    auto flag = std::make_shared<std::atomic<bool>>(false);
    m_cancel = flag;
    m_running = true;
    m_futures.removeIf([](const QFuture<void>& f) { return f.isFinished(); });
    QPointer<CompareTask> self(this);
    m_futures << QtConcurrent::run([self, flag, work = std::move(work)] {
        auto lastPercent = std::make_shared<std::atomic<int>>(-1);
        const Progress progress = [self, flag, lastPercent](double p) {
            const int percent = int(p * 100);
            if (lastPercent->exchange(percent) == percent)
                return;
            QMetaObject::invokeMethod(
                self,
                [self, flag, p] {
                    if (self && !*flag)
                        Q_EMIT self->progress(p);
                },
                Qt::QueuedConnection);
        };
        auto deliver = [self, flag](auto emitter) {
            QMetaObject::invokeMethod(
                self,
                [self, flag, emitter] {
                    if (!self || *flag) // cancelled or replaced meanwhile
                        return;
                    self->m_running = false;
                    emitter(self.data());
                },
                Qt::QueuedConnection);
        };
        try {
            std::shared_ptr<void> result = work(*flag, progress);
            deliver([result](CompareTask* t) { Q_EMIT t->finished(result); });
        } catch (const ckptscope::Cancelled&) {
        } catch (const std::exception& e) {
            const QString message = QString::fromUtf8(e.what());
            deliver([message](CompareTask* t) { Q_EMIT t->failed(message); });
        }
    });
}
