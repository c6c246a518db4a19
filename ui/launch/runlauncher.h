#pragma once

#include <QString>
#include <QStringList>

class QWidget;
class RunWindow;

// The ways into a run window: File ▸ Open Folder…, a folder dropped onto a
// window (File ▸ Open… with several files asks the registry itself). The
// windows open through the WindowRegistry.
class RunLauncher {
public:
    // A run window for each run folder among paths; returns the other paths.
    static QStringList openFolders(const QStringList& paths);
    // A folder that is a run: any folder but one holding a sharded model
    // (one *.safetensors.index.json or one complete shard set), which opens
    // as a file.
    static bool isRunFolder(const QString& path);
    // Asks for a folder; returns its window, or nullptr.
    static RunWindow* openFolderDialog(QWidget* parent);
    // Asks for checkpoint files in dir (File ▸ Open…); none when cancelled.
    static QStringList askForCheckpoints(QWidget* parent, const QString& dir);
};
