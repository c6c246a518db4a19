#pragma once

#include <QString>
#include <QStringList>

#include <functional>

class CompareWindow;
class QDropEvent;
class QPoint;
class QWidget;

// The ways into a comparison from the browser: File ▸ Compare With…, a file
// dropped onto a window that shows one, the start page's "Compare two
// checkpoints…". The windows open through the WindowRegistry (an open
// comparison of the same files is brought to the front).
class CompareLauncher {
public:
    enum class DropChoice { Open, Compare, NewWindow, Cancelled };

    // Asks for one file to open (title, start folder); empty when cancelled.
    // QFileDialog unless replaced (tests replace it: a dialog would block).
    using FileChooser =
        std::function<QString(QWidget* parent, const QString& title, const QString& folder)>;
    static void setFileChooser(FileChooser chooser); // empty: QFileDialog again

    // Asks for B; the open file is A. Returns the window, or nullptr.
    static CompareWindow* compareWithDialog(QWidget* parent, const QString& openPath);
    // Asks for A, then for B (in A's folder). Returns the window, or nullptr
    // when either question was cancelled.
    static CompareWindow* compareTwoWithDialogs(QWidget* parent);
    // A file dropped onto a window showing openPath: the drop menu offers
    // "Open" (the default: Enter or a click), "Compare with the open file
    // (A → B)" and "Open in New Window"; Escape cancels. Compare and New
    // Window are carried out here; Open is left to the caller.
    static DropChoice askOnDrop(QWidget* parent, const QString& openPath, const QString& dropped,
                                const QPoint& globalPos);
    // A drop onto a window showing openPath: one file (not a folder) asks
    // with askOnDrop; several files, a folder, or no open document open as
    // always, without a menu. True when the drop needs nothing more
    // (compared, opened in a new window, or the menu dismissed).
    static bool handleDrop(QWidget* window, const QDropEvent& event, const QString& openPath,
                           const QStringList& files);
};
