#pragma once

#include <QList>
#include <QString>

class QMenuBar;
class QWidget;

// One keyboard shortcut of a window, as Help ▸ Keyboard Shortcuts lists it.
struct ShortcutEntry {
    QString where;    // menu or page the action belongs to
    QString action;   // its text, without the mnemonic '&'
    QString shortcut; // every key sequence, in the platform's spelling
};

// The shortcuts of one kind of window ("Browser window", "Compare window", …).
struct WindowShortcuts {
    QString window;
    QList<ShortcutEntry> entries;
};

// Every action under window that has a shortcut, read from the actions
// themselves so the list cannot go stale.
QList<ShortcutEntry> collectShortcuts(QWidget* window);

// Non-modal dialogs, deleted on close; object names "keyboardShortcuts" and
// "userGuide". The shortcuts are those of every kind of window (the
// WindowRegistry reads them), window's own first. The guide is bundled
// (qrc:/help/guide.html): it works offline.
void showShortcuts(QWidget* window);
void showUserGuide(QWidget* parent);
void showAbout(QWidget* parent);

// The Help menu every window has: User Guide (F1), Keyboard Shortcuts, About.
void addHelpMenu(QMenuBar* bar, QWidget* window);
