#pragma once

#include "ckptscope/document.h"

#include <QFuture>
#include <QObject>

#include <atomic>
#include <memory>

// After a file opens, reads every tensor once in the background to find the
// ones holding NaN or ±Inf, so the tree can flag them without the user
// visiting each. One pass (no histogram), cancelled by the next document.
class ValueScanner : public QObject {
    Q_OBJECT
public:
    explicit ValueScanner(QObject* parent = nullptr);
    ~ValueScanner() override;

    void start(std::shared_ptr<const ckptscope::Document> document);
    void cancel();
    bool isRunning() const { return m_running; }

Q_SIGNALS:
    void nonFinite(int tensor);     // tensor holds NaN or ±Inf
    void progress(double fraction); // by bytes scanned
    void finished();
    void failed(const QString& message); // e.g. the file changed on disk

private:
    std::shared_ptr<std::atomic<bool>> m_cancel;
    QList<QFuture<void>> m_futures; // all waited for on destruction
    bool m_running = false;
    int m_generation = 0;
};
