#include "comparelauncher.h"

#include "comparewindow.h"

#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>

CompareWindow* CompareLauncher::open(const QString& pathA, const QString& pathB) {
    auto* window = new CompareWindow;
    window->show();
    window->compare(pathA, pathB);
    return window;
}

CompareWindow* CompareLauncher::compareWithDialog(QWidget* parent, const QString& openPath) {
    if (openPath.isEmpty())
        return nullptr;
    const QString b = QFileDialog::getOpenFileName(
        parent, QObject::tr("Compare %1 With").arg(QFileInfo(openPath).fileName()),
        QFileInfo(openPath).absolutePath(),
        QObject::tr("Checkpoints (*.oxck *.json);;All files (*)"));
    return b.isEmpty() ? nullptr : open(openPath, b);
}

CompareLauncher::DropChoice CompareLauncher::askOnDrop(QWidget* parent, const QString& openPath,
                                                       const QString& dropped,
                                                       const QPoint& globalPos) {
    QMenu menu(parent);
    menu.setObjectName(QStringLiteral("dropMenu"));
    QAction* openAction = menu.addAction(QObject::tr("Open %1").arg(QFileInfo(dropped).fileName()));
    QAction* compareAction =
        menu.addAction(QObject::tr("Compare with the open file (%1 → %2)")
                           .arg(QFileInfo(openPath).fileName(), QFileInfo(dropped).fileName()));
    compareAction->setObjectName(QStringLiteral("compareWithOpenFile"));
    menu.setDefaultAction(openAction);
    menu.setActiveAction(openAction);
    QAction* chosen = menu.exec(globalPos, openAction);
    if (chosen == compareAction) {
        open(openPath, dropped);
        return DropChoice::Compare;
    }
    return chosen == openAction ? DropChoice::Open : DropChoice::Cancelled;
}

bool CompareLauncher::handleDrop(QWidget* window, const QDropEvent& event, const QString& openPath,
                                 const QStringList& files) {
    const bool ask = (event.modifiers() & (Qt::ShiftModifier | Qt::AltModifier)) ||
                     (event.buttons() & Qt::RightButton);
    if (!ask || files.size() != 1 || openPath.isEmpty())
        return false;
    const QPoint at = window->mapToGlobal(event.position().toPoint());
    return askOnDrop(window, openPath, files.first(), at) != DropChoice::Open;
}
