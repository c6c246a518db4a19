#pragma once

#include "ckptscope/io/writecontrol.h"

#include <QFuture>
#include <QObject>
#include <QPointer>
#include <QProgressDialog>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

class QWidget;

// One long write (export, conversion) off the GUI thread with a progress
// dialog that can cancel it. The work returns its warnings; a cancelled
// atomic write leaves no file. Results arrive by signal, never after
// cancel(); the destructor cancels and waits.
class ExportJob : public QObject {
    Q_OBJECT
public:
    using Work = std::function<std::vector<std::string>(const ckptscope::WriteControl&)>;

    ExportJob(QWidget* parent, const QString& title, Work work);
    ~ExportJob() override;

    void cancel();
    bool isRunning() const { return m_running; }
    QProgressDialog* dialog() const { return m_dialog; }

Q_SIGNALS:
    void progress(double fraction);
    void finished(const QStringList& warnings);
    void failed(const QString& message);
    void cancelled();

private:
    std::shared_ptr<std::atomic<bool>> m_cancel;
    QFuture<void> m_future;
    QPointer<QProgressDialog> m_dialog;
    bool m_running = true;
};
