#pragma once

#include "common/backgroundtask.h"

#include "ckptscope/export/exporterror.h"

#include <QObject>
#include <QPointer>
#include <QProgressDialog>
#include <QStringList>

#include <functional>
#include <string>
#include <vector>

class QWidget;

// One long write (export, conversion) off the GUI thread with a progress
// dialog that can cancel it. The work returns its warnings; a cancelled
// atomic write leaves no file. Results arrive by signal, never after
// cancel(); the destructor cancels and waits (BackgroundTask).
class ExportJob : public QObject {
    Q_OBJECT
public:
    using Work = std::function<std::vector<std::string>(const ckptscope::TaskControl&)>;

    ExportJob(QWidget* parent, const QString& title, Work work);
    ~ExportJob() override;

    void cancel();
    bool isRunning() const { return m_task.isRunning(); }
    QProgressDialog* dialog() const { return m_dialog; }

Q_SIGNALS:
    void progress(double fraction);
    void finished(const QStringList& warnings);
    void failed(const QString& message);
    void cancelled();

private:
    void closeDialog();

    QPointer<QProgressDialog> m_dialog;
    BackgroundTask m_task{this};
};
