#include "export/exportjob.h"

#include "ckptscope/stats/tensorstats.h"

#include <QProgressDialog>
#include <QtConcurrent>

ExportJob::ExportJob(QWidget* parent, const QString& title, Work work)
    : QObject(parent), m_cancel(std::make_shared<std::atomic<bool>>(false)) {
    m_dialog = new QProgressDialog(title, tr("Cancel"), 0, 1000, parent);
    m_dialog->setWindowTitle(title);
    m_dialog->setWindowModality(Qt::WindowModal);
    m_dialog->setMinimumDuration(400); // quick writes finish before it shows
    m_dialog->setAutoClose(false);
    m_dialog->setAutoReset(false);
    m_dialog->setValue(0);
    connect(m_dialog, &QProgressDialog::canceled, this, &ExportJob::cancel);

    QPointer<ExportJob> self(this);
    auto flag = m_cancel;
    // Runs on the GUI thread, unless the job was cancelled or destroyed.
    auto post = [self, flag](auto fn) {
        QMetaObject::invokeMethod(
            self,
            [self, flag, fn] {
                if (self && !*flag)
                    fn(self.data());
            },
            Qt::QueuedConnection);
    };
    m_future = QtConcurrent::run([work = std::move(work), flag, post] {
        ckptscope::WriteControl control;
        control.cancel = flag.get();
        auto last = std::make_shared<std::atomic<int>>(-1);
        control.progress = [post, last](double p) {
            const int permille = int(p * 1000);
            if (last->exchange(permille) != permille)
                post([p](ExportJob* j) {
                    if (j->m_dialog)
                        j->m_dialog->setValue(int(p * 1000));
                    Q_EMIT j->progress(p);
                });
        };
        try {
            const std::vector<std::string> warnings = work(control);
            QStringList list;
            for (const std::string& w : warnings)
                list << QString::fromStdString(w);
            post([list](ExportJob* j) {
                j->m_running = false;
                if (j->m_dialog)
                    j->m_dialog->close();
                Q_EMIT j->finished(list);
            });
        } catch (const ckptscope::Cancelled&) {
        } catch (const std::exception& e) {
            const QString message = QString::fromStdString(e.what());
            post([message](ExportJob* j) {
                j->m_running = false;
                if (j->m_dialog)
                    j->m_dialog->close();
                Q_EMIT j->failed(message);
            });
        }
    });
}

ExportJob::~ExportJob() {
    *m_cancel = true;
    m_future.waitForFinished();
    delete m_dialog;
}

void ExportJob::cancel() {
    if (!m_running)
        return;
    *m_cancel = true; // the write stops at its next block; the temporary is removed
    m_running = false;
    if (m_dialog)
        m_dialog->close();
    Q_EMIT cancelled();
}
