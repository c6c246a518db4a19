#include "common/windowregistry.h"

#include "common/filelocation.h"
#include "common/helpdialogs.h"

// The one place that includes the window classes.
#include "browser/mainwindow.h"
#include "compare/comparewindow.h"
#include "run/runwindow.h"

#include <memory>

namespace {

QStringList fileKeys(const QStringList& paths) {
    QStringList keys;
    for (const QString& p : paths)
        keys << filelocation::key(p);
    return keys;
}

} // namespace

WindowRegistry& WindowRegistry::instance() {
    static WindowRegistry registry;
    return registry;
}

QList<QWidget*> WindowRegistry::windows() {
    // Deleted windows leave null pointers; closed ones await deletion hidden.
    m_windows.removeIf([](const QPointer<QWidget>& w) { return w.isNull(); });
    QList<QWidget*> open;
    for (const QPointer<QWidget>& w : std::as_const(m_windows))
        if (w->isVisible())
            open << w.data();
    return open;
}

template <typename Window> Window* WindowRegistry::create(const Setup<Window>& setup) {
    auto* window = new Window; // deletes itself on close
    if (setup)
        setup(window);
    m_windows << QPointer<QWidget>(window);
    window->show();
    return window;
}

template <typename Window, typename Match> Window* WindowRegistry::find(const Match& match) {
    for (QWidget* w : windows())
        if (auto* window = qobject_cast<Window*>(w); window && match(*window))
            return window;
    return nullptr;
}

void WindowRegistry::bringToFront(QWidget* window) {
    window->setWindowState(window->windowState() & ~Qt::WindowMinimized);
    window->raise();
    window->activateWindow();
}

MainWindow* WindowRegistry::newWindow(const Setup<MainWindow>& setup) {
    return create(setup);
}

MainWindow* WindowRegistry::openFile(const QString& path, const Setup<MainWindow>& setup) {
    if (path.isEmpty())
        return nullptr;
    const QString key = filelocation::key(path);
    if (auto* open = find<MainWindow>(
            [&key](const MainWindow& w) { return filelocation::key(w.requestedPath()) == key; })) {
        bringToFront(open);
        return open;
    }
    return openFileInNewWindow(path, setup);
}

MainWindow* WindowRegistry::openFileInNewWindow(const QString& path,
                                                const Setup<MainWindow>& setup) {
    MainWindow* window = create(setup);
    window->openFile(path);
    return window;
}

CompareWindow* WindowRegistry::openComparison(const QString& pathA, const QString& pathB,
                                              const Setup<CompareWindow>& setup) {
    const QString a = filelocation::key(pathA), b = filelocation::key(pathB);
    if (auto* open = find<CompareWindow>([&](const CompareWindow& w) {
            return filelocation::key(w.pathA()) == a && filelocation::key(w.pathB()) == b;
        })) {
        bringToFront(open);
        return open;
    }
    CompareWindow* window = create(setup);
    window->compare(pathA, pathB);
    return window;
}

RunWindow* WindowRegistry::openRun(const QStringList& paths, const Setup<RunWindow>& setup) {
    const QStringList keys = fileKeys(paths);
    if (auto* open = find<RunWindow>(
            [&keys](const RunWindow& w) { return fileKeys(w.loader()->paths()) == keys; })) {
        bringToFront(open);
        return open;
    }
    RunWindow* window = create(setup);
    window->openPaths(paths);
    return window;
}

namespace {

// Window's shortcuts when shown is one, else those of a fresh, unshown one.
template <typename Window> WindowShortcuts shortcutsOf(const QString& kind, QWidget* shown) {
    if (auto* window = qobject_cast<Window*>(shown))
        return {kind, collectShortcuts(window)};
    const auto fresh = std::make_unique<Window>();
    return {kind, collectShortcuts(fresh.get())};
}

} // namespace

QList<WindowShortcuts> WindowRegistry::shortcutsOfEveryWindow(QWidget* shown) {
    // The asking window's kind first: its shortcuts are the ones at hand.
    QList<WindowShortcuts> own, others;
    auto add = [&](WindowShortcuts kind, bool isShown) { (isShown ? own : others) << kind; };
    add(shortcutsOf<MainWindow>(QObject::tr("Browser window"), shown),
        qobject_cast<MainWindow*>(shown));
    add(shortcutsOf<CompareWindow>(QObject::tr("Compare window"), shown),
        qobject_cast<CompareWindow*>(shown));
    add(shortcutsOf<RunWindow>(QObject::tr("Run window"), shown), qobject_cast<RunWindow*>(shown));
    return own + others;
}
