#include "launch/runlauncher.h"

#include "common/filelocation.h"
#include "common/windowregistry.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/formatmodule.h"

#include <QFile>
#include <QFileDialog>

QStringList RunLauncher::openFolders(const QStringList& paths) {
    QStringList rest;
    for (const QString& p : paths)
        if (isRunFolder(p))
            WindowRegistry::instance().openRun({p});
        else
            rest << p;
    return rest;
}

bool RunLauncher::isRunFolder(const QString& path) {
    // A prefix in a bucket is listed by the loader, off the GUI thread.
    return !filelocation::isRemote(path) &&
           ckptscope::Document::isRunFolder(QFile::encodeName(path).toStdString());
}

RunWindow* RunLauncher::openFolderDialog(QWidget* parent) {
    const QString dir =
        QFileDialog::getExistingDirectory(parent, QObject::tr("Open a Training Run"));
    return dir.isEmpty() ? nullptr : WindowRegistry::instance().openRun({dir});
}

QStringList RunLauncher::askForCheckpoints(QWidget* parent, const QString& dir) {
    return QFileDialog::getOpenFileNames(
        parent, QObject::tr("Open Checkpoint"), dir,
        QString::fromStdString(ckptscope::checkpointDialogFilter()));
}
