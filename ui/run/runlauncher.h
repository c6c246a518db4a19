#pragma once

#include <QStringList>

class QWidget;
class RunWindow;

// The ways into a run window: File ▸ Open Folder…, a folder dropped onto a
// window, several files chosen in File ▸ Open…, and `ckptscope DIR`.
class RunLauncher {
public:
    // A new run window (deleted on close) over the folders and files given.
    static RunWindow* open(const QStringList& paths);
    // A run window for each folder among paths; returns the other paths.
    static QStringList openFolders(const QStringList& paths);
    // Asks for a folder; returns its window, or nullptr.
    static RunWindow* openFolderDialog(QWidget* parent);
};
