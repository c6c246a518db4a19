#include "browser/runlauncher.h"

#include "common/windowregistry.h"

#include <QFileDialog>
#include <QFileInfo>

QStringList RunLauncher::openFolders(const QStringList& paths) {
    QStringList rest;
    for (const QString& p : paths)
        if (QFileInfo(p).isDir())
            WindowRegistry::instance().openRun({p});
        else
            rest << p;
    return rest;
}

RunWindow* RunLauncher::openFolderDialog(QWidget* parent) {
    const QString dir =
        QFileDialog::getExistingDirectory(parent, QObject::tr("Open a Training Run"));
    return dir.isEmpty() ? nullptr : WindowRegistry::instance().openRun({dir});
}

QStringList RunLauncher::askForCheckpoints(QWidget* parent, const QString& dir) {
    return QFileDialog::getOpenFileNames(
        parent, QObject::tr("Open Checkpoint"), dir,
        QObject::tr(
            "Checkpoints (*.oxck *.safetensors *.gguf *.ckpt *.bin *.json);;All files (*)"));
}
