// What the main window does with a drop: local files open (a folder as a
// run; one file onto an open document asks whether to compare), links from a
// web browser open as URLs.
#include "browser/mainwindow.h"
#include "common/windowregistry.h"
#include "launch/comparelauncher.h"
#include "launch/runlauncher.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QUrl>

namespace {

// A link dragged from a web browser: an http(s) URL, not a local file.
bool isWebLink(const QUrl& url) {
    return url.scheme() == QStringLiteral("http") || url.scheme() == QStringLiteral("https");
}

} // namespace

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls())
        for (const QUrl& url : event->mimeData()->urls())
            if (url.isLocalFile() || isWebLink(url)) {
                event->acceptProposedAction();
                return;
            }
}

void MainWindow::dropEvent(QDropEvent* event) {
    QStringList files;
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile())
            files << url.toLocalFile();
    if (files.isEmpty()) {
        // Links from a web browser open as URLs, each in its own window
        // after the first.
        QStringList links;
        for (const QUrl& url : event->mimeData()->urls())
            if (isWebLink(url))
                links << url.toString(QUrl::FullyEncoded);
        if (links.isEmpty())
            return;
        event->acceptProposedAction();
        openFile(links.takeFirst());
        for (const QString& link : std::as_const(links))
            WindowRegistry::instance().openFile(link);
        return;
    }
    event->acceptProposedAction();
    files = RunLauncher::openFolders(files); // a folder is a run, unless it holds a model
    if (files.isEmpty())
        return;
    if (CompareLauncher::handleDrop(this, *event, m_path, files))
        return; // compared, or the drop menu was dismissed
    // The first file opens here, every further one in a window of its own.
    openFile(files.takeFirst());
    for (const QString& f : std::as_const(files))
        WindowRegistry::instance().openFile(f);
}
