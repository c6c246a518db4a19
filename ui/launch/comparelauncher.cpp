#include "launch/comparelauncher.h"

#include "launch/runlauncher.h"

#include "common/filelocation.h"
#include "common/windowregistry.h"

#include "ckptscope/formats/formatmodule.h"

#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>

namespace {

CompareLauncher::FileChooser& chooser() {
    static CompareLauncher::FileChooser c;
    return c;
}

QString chooseFile(QWidget* parent, const QString& title, const QString& folder) {
    if (chooser())
        return chooser()(parent, title, folder);
    return QFileDialog::getOpenFileName(
        parent, title, folder, QString::fromStdString(ckptscope::checkpointDialogFilter()));
}

// Asks for B in A's folder (title: %1 is A's name) and compares them.
CompareWindow* compareWithB(QWidget* parent, const QString& a, const QString& title) {
    const QString b =
        chooseFile(parent, title.arg(QFileInfo(a).fileName()), QFileInfo(a).absolutePath());
    return b.isEmpty() ? nullptr : WindowRegistry::instance().openComparison(a, b);
}

} // namespace

void CompareLauncher::setFileChooser(FileChooser c) {
    chooser() = std::move(c);
}

CompareWindow* CompareLauncher::compareWithDialog(QWidget* parent, const QString& openPath) {
    if (openPath.isEmpty())
        return nullptr;
    return compareWithB(parent, openPath, QObject::tr("Compare %1 With"));
}

CompareWindow* CompareLauncher::compareTwoWithDialogs(QWidget* parent) {
    const QString a =
        chooseFile(parent, QObject::tr("Compare: Choose A, the Reference"), QString());
    if (a.isEmpty())
        return nullptr;
    return compareWithB(parent, a, QObject::tr("Compare %1 With (B)"));
}

CompareLauncher::DropChoice CompareLauncher::askOnDrop(QWidget* parent, const QString& openPath,
                                                       const QString& dropped,
                                                       const QPoint& globalPos) {
    QMenu menu(parent);
    menu.setObjectName(QStringLiteral("dropMenu"));
    const auto [a, b] = filelocation::pairLabels(openPath, dropped); // two model.safetensors apart
    QAction* openAction = menu.addAction(QObject::tr("Open %1").arg(QFileInfo(dropped).fileName()));
    openAction->setObjectName(QStringLiteral("openDropped"));
    QAction* compareAction =
        menu.addAction(QObject::tr("Compare with the open file (%1 → %2)").arg(a, b));
    compareAction->setObjectName(QStringLiteral("compareWithOpenFile"));
    QAction* newWindowAction = menu.addAction(QObject::tr("Open in New Window"));
    newWindowAction->setObjectName(QStringLiteral("openInNewWindow"));
    // Plain open stays the default: the menu opens on it, Enter takes it.
    menu.setDefaultAction(openAction);
    menu.setActiveAction(openAction);
    QAction* chosen = menu.exec(globalPos, openAction);
    if (chosen == compareAction) {
        WindowRegistry::instance().openComparison(openPath, dropped);
        return DropChoice::Compare;
    }
    if (chosen == newWindowAction) { // asked for: even when another window shows it
        WindowRegistry::instance().openFileInNewWindow(dropped);
        return DropChoice::NewWindow;
    }
    return chosen == openAction ? DropChoice::Open : DropChoice::Cancelled;
}

bool CompareLauncher::handleDrop(QWidget* window, const QDropEvent& event, const QString& openPath,
                                 const QStringList& files) {
    if (files.size() != 1 || openPath.isEmpty() || RunLauncher::isRunFolder(files.first()))
        return false;
    const QPoint at = window->mapToGlobal(event.position().toPoint());
    return askOnDrop(window, openPath, files.first(), at) != DropChoice::Open;
}
