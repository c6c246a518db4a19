#include "run/runlauncher.h"

#include "run/runwindow.h"

#include <QFileDialog>
#include <QFileInfo>

RunWindow* RunLauncher::open(const QStringList& paths) {
    auto* run = new RunWindow;
    run->show();
    run->openPaths(paths);
    return run;
}

QStringList RunLauncher::openFolders(const QStringList& paths) {
    QStringList rest;
    for (const QString& p : paths)
        if (QFileInfo(p).isDir())
            open({p});
        else
            rest << p;
    return rest;
}

RunWindow* RunLauncher::openFolderDialog(QWidget* parent) {
    const QString dir =
        QFileDialog::getExistingDirectory(parent, QObject::tr("Open a Training Run"));
    return dir.isEmpty() ? nullptr : open({dir});
}
