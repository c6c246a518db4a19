#pragma once

#include <QString>
#include <QStringList>

class CompareWindow;
class QDropEvent;
class QPoint;
class QWidget;

// The ways into a comparison from the browser: File ▸ Compare With…, a file
// dropped onto a window that shows one, and `ckptscope --compare A B`.
class CompareLauncher {
public:
    enum class DropChoice { Open, Compare, Cancelled };

    // A new compare window (deleted on close) comparing B with A.
    static CompareWindow* open(const QString& pathA, const QString& pathB);
    // Asks for B; the open file is A. Returns the window, or nullptr.
    static CompareWindow* compareWithDialog(QWidget* parent, const QString& openPath);
    // A file dropped onto a window showing openPath: a menu offers "Open"
    // (the default) and "Compare with the open file"; Compare opens the
    // compare window at once.
    static DropChoice askOnDrop(QWidget* parent, const QString& openPath, const QString& dropped,
                                const QPoint& globalPos);
    // A drop onto a window showing openPath: one file dropped with Shift or
    // Alt held (or dragged with the right button) asks with askOnDrop; a
    // plain drop opens as always. True when the drop needs nothing more
    // (compared, or the menu dismissed).
    static bool handleDrop(QWidget* window, const QDropEvent& event, const QString& openPath,
                           const QStringList& files);
};
