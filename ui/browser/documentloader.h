#pragma once

#include "common/backgroundtask.h"

#include "ckptscope/document/document.h"

#include <QObject>
#include <QString>

#include <memory>

// Opens documents off the GUI thread. The newest load() wins: the result of
// one it superseded is dropped, never shown.
class DocumentLoader : public QObject {
    Q_OBJECT
public:
    explicit DocumentLoader(QObject* parent = nullptr);

    // Paths starting with ":/" are bundled resources.
    void load(const QString& path);
    bool isLoading() const { return m_task.isRunning(); }
    // Stops the load in progress (a download is aborted); neither loaded()
    // nor failed() follows.
    void cancel() { m_task.cancel(); }

    // The blocking open, run on a worker thread. Throws OpenError.
    static std::shared_ptr<const ckptscope::Document> open(const QString& path);

Q_SIGNALS:
    void loaded(const QString& path, std::shared_ptr<const ckptscope::Document> document);
    void failed(const QString& path, const QString& message);
    // An s3:// prefix holding a training run (checkpoint-N/ folders, …), not
    // one model: for a run window to open.
    void runFolder(const QString& path);
    // A URL being opened: requests made and bytes received so far.
    void traffic(const QString& path, quint64 requests, quint64 bytes);

private:
    // A load reads only its own file: closing the window need not wait for it.
    BackgroundTask m_task{this, BackgroundTask::OnDestroy::Detach};
};
