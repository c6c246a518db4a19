#include "valuescanner.h"

#include "ckptscope/tensorstats.h"

#include <QPointer>
#include <QtConcurrent>

ValueScanner::ValueScanner(QObject* parent) : QObject(parent) {}

ValueScanner::~ValueScanner() {
    cancel();
    for (auto& f : m_futures)
        f.waitForFinished();
}

void ValueScanner::cancel() {
    if (m_cancel)
        *m_cancel = true;
    m_running = false;
}

void ValueScanner::start(std::shared_ptr<const ckptscope::Document> document) {
    cancel();
    if (!document || document->tensors().empty())
        return;
    auto flag = std::make_shared<std::atomic<bool>>(false);
    m_cancel = flag;
    m_running = true;
    const int generation = ++m_generation;
    QPointer<ValueScanner> self(this);
    // Runs on the GUI thread, only while this scan is the current one.
    auto post = [self, flag, generation](auto&& fn) {
        QMetaObject::invokeMethod(
            self,
            [self, flag, generation, fn] {
                if (self && !*flag && generation == self->m_generation)
                    fn(self.data());
            },
            Qt::QueuedConnection);
    };
    m_futures.removeIf([](const QFuture<void>& f) { return f.isFinished(); });
    m_futures << QtConcurrent::run([document, flag, post] {
        uint64_t total = 0, done = 0;
        for (const auto& t : document->tensors())
            total += t.dataLen;
        ckptscope::StatsOptions options;
        options.cancel = flag.get();
        try {
            for (size_t i = 0; i < document->tensors().size(); ++i) {
                const uint64_t n = document->tensors()[i].dataLen;
                const auto r = ckptscope::computeStats(
                    n,
                    [&](uint64_t first, uint64_t count, float* out) {
                        document->readValues(i, first, count, out);
                    },
                    options);
                if (r.stats.nan + r.stats.posInf + r.stats.negInf > 0)
                    post([i](ValueScanner* s) { Q_EMIT s->nonFinite(int(i)); });
                done += n;
                const double p = total ? double(done) / double(total) : 1.0;
                post([p](ValueScanner* s) { Q_EMIT s->progress(p); });
            }
            post([](ValueScanner* s) {
                s->m_running = false;
                Q_EMIT s->finished();
            });
        } catch (const ckptscope::Cancelled&) {
        } catch (const std::exception& e) {
            const QString message = QString::fromStdString(e.what());
            post([message](ValueScanner* s) {
                s->m_running = false;
                Q_EMIT s->failed(message);
            });
        }
    });
}
