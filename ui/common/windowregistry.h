#pragma once

#include <QList>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <functional>

struct WindowShortcuts;
class CompareWindow;
class MainWindow;
class RunWindow;

// Opens every window of the application: a file (MainWindow), a comparison
// (CompareWindow), a run (RunWindow). It is the only code that names the
// window classes: windows ask it for one another and never include each
// other's headers (the classes are only declared here, so callers that
// ignore the returned window need no window header either). It is defined
// in shell/windowregistry.cpp, the one file that includes them all: every
// window may ask for another, and no folder below shell/ includes a window
// of another folder (tools/check-layers.py).
//
// A request for what an open window already shows — the same file, the
// same A and B, the same run — brings that window to the front instead of
// opening a duplicate; openFileInNewWindow() is for an explicit second
// window. Windows delete themselves on close and are forgotten then.
class WindowRegistry {
public:
    // Runs on a new window before it is shown and given its file (resize it,
    // attach a screenshot or a --select); not called when one is reused.
    template <typename Window> using Setup = std::function<void(Window*)>;

    static WindowRegistry& instance();

    // An empty browser window: the start page.
    MainWindow* newWindow(const Setup<MainWindow>& setup = {});
    // The window showing (or opening) path, raised; else a new one opening it.
    MainWindow* openFile(const QString& path, const Setup<MainWindow>& setup = {});
    // Always a new window, even when another shows path ("Open in New Window").
    MainWindow* openFileInNewWindow(const QString& path, const Setup<MainWindow>& setup = {});
    // B compared with A, the reference.
    CompareWindow* openComparison(const QString& pathA, const QString& pathB,
                                  const Setup<CompareWindow>& setup = {});
    // The checkpoints of these folders and files as one run.
    RunWindow* openRun(const QStringList& paths, const Setup<RunWindow>& setup = {});

    // The windows opened here that are still open, oldest first.
    QList<QWidget*> windows();

    // The keyboard shortcuts of each kind of window, shown's kind first: read
    // from shown, and for the other kinds from a window made for the purpose
    // (never shown, deleted at once), so the list is never stale.
    QList<WindowShortcuts> shortcutsOfEveryWindow(QWidget* shown);

private:
    WindowRegistry() = default;
    template <typename Window> Window* create(const Setup<Window>& setup);
    template <typename Window, typename Match> Window* find(const Match& match);
    static void bringToFront(QWidget* window);

    QList<QPointer<QWidget>> m_windows;
};
