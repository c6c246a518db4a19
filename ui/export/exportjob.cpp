#include "export/exportjob.h"

#include <QProgressDialog>

ExportJob::ExportJob(QWidget* parent, const QString& title, Work work) : QObject(parent) {
    m_dialog = new QProgressDialog(title, tr("Cancel"), 0, 1000, parent);
    m_dialog->setWindowTitle(title);
    m_dialog->setWindowModality(Qt::WindowModal);
    m_dialog->setMinimumDuration(400); // quick writes finish before it shows
    m_dialog->setAutoClose(false);
    m_dialog->setAutoReset(false);
    m_dialog->setValue(0);
    connect(m_dialog, &QProgressDialog::canceled, this, &ExportJob::cancel);

    BackgroundTask::Handlers handlers;
    handlers.progress = [this](double p) {
        if (m_dialog)
            m_dialog->setValue(int(p * 1000));
        Q_EMIT progress(p);
    };
    handlers.failed = [this](const QString& message) {
        closeDialog();
        Q_EMIT failed(message);
    };
    m_task.start(
        [work = std::move(work)](BackgroundTask::Run& run) {
            ckptscope::TaskControl control;
            control.cancel = run.cancelFlag();
            control.progress = [&run](double p) { run.progress(p); };
            QStringList warnings;
            for (const std::string& w : work(control))
                warnings << QString::fromStdString(w);
            return warnings;
        },
        [this](const QStringList& warnings) {
            closeDialog();
            Q_EMIT finished(warnings);
        },
        std::move(handlers));
}

ExportJob::~ExportJob() {
    m_task.cancel(); // the write stops at its next block; m_task waits for it
    delete m_dialog;
}

void ExportJob::closeDialog() {
    if (m_dialog)
        m_dialog->close();
}

void ExportJob::cancel() {
    if (!m_task.isRunning())
        return;
    m_task.cancel(); // the write stops at its next block; the temporary is removed
    closeDialog();
    Q_EMIT cancelled();
}
