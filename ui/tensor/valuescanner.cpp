#include "tensor/valuescanner.h"

#include "ckptscope/stats/documentstats.h"

ValueScanner::ValueScanner(QObject* parent) : QObject(parent) {}

void ValueScanner::start(std::shared_ptr<const ckptscope::Document> document) {
    cancel();
    if (!document || document->tensors().empty())
        return;
    m_task.start(
        [this, document](BackgroundTask::Run& run) {
            uint64_t total = 0, done = 0;
            for (const auto& t : document->tensors())
                total += t.dataLen;
            ckptscope::StatsOptions options;
            options.cancel = run.cancelFlag();
            for (size_t i = 0; i < document->tensors().size(); ++i) {
                const uint64_t n = document->tensors()[i].dataLen;
                if (!ckptscope::hasStatistics(document->tensors()[i].dtype)) {
                    done += n; // complex, quantized: no statistics, so no scan
                    continue;
                }
                // The statistics `stats` computes: F64 in double, so a finite
                // 1e300 is not an f32 Inf; no histogram.
                const auto r = ckptscope::computeTensorStats(*document, i, options);
                if (r.stats.nan + r.stats.posInf + r.stats.negInf > 0)
                    run.post([this, i] { Q_EMIT nonFinite(int(i)); });
                done += n;
                run.progress(total ? double(done) / double(total) : 1.0);
            }
            run.finish([this] { Q_EMIT finished(); });
        },
        {[this](double p) { Q_EMIT progress(p); },
         [this](const QString& message) { Q_EMIT failed(message); }});
}
