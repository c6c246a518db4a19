#pragma once

#include "common/backgroundtask.h"

#include "ckptscope/document/document.h"

#include <QObject>

#include <memory>

// After a file opens, reads every tensor once in the background to find the
// ones holding NaN or ±Inf, so the tree can flag them without the user
// visiting each. One pass (no histogram), cancelled by the next document.
class ValueScanner : public QObject {
    Q_OBJECT
public:
    explicit ValueScanner(QObject* parent = nullptr);

    void start(std::shared_ptr<const ckptscope::Document> document);
    void cancel() { m_task.cancel(); }
    bool isRunning() const { return m_task.isRunning(); }

Q_SIGNALS:
    void nonFinite(int tensor);     // tensor holds NaN or ±Inf
    void progress(double fraction); // by bytes scanned
    void finished();
    void failed(const QString& message); // e.g. the file changed on disk

private:
    BackgroundTask m_task{this};
};
