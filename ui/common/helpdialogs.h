#pragma once

#include <QList>
#include <QString>

class QWidget;

// One keyboard shortcut of a window, as Help ▸ Keyboard Shortcuts lists it.
struct ShortcutEntry {
    QString where;    // menu or page the action belongs to
    QString action;   // its text, without the mnemonic '&'
    QString shortcut; // every key sequence, in the platform's spelling
};

// Every action under window that has a shortcut, read from the actions
// themselves so the list cannot go stale.
QList<ShortcutEntry> collectShortcuts(QWidget* window);

// Non-modal dialogs, deleted on close; object names "keyboardShortcuts" and
// "userGuide". The guide is bundled (qrc:/help/guide.html): it works offline.
void showShortcuts(QWidget* window);
void showUserGuide(QWidget* parent);
