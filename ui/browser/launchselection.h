#pragma once

#include <QString>
#include <QStringList>

class MainWindow;

// What `ckptscope --select NAME --tab TITLE` asks for, applied to a window
// once its document has loaded (every launch, and --screenshot).
struct LaunchSelection {
    QString select; // a tensor's full name, or a graph node's id; optional
    QString tab;    // a tab title without '&', case-insensitive; optional

    // Applies both now; returns what could not be applied, one line each
    // ("no tensor or graph node named …").
    QStringList applyTo(MainWindow* window) const;
    // Applies them when the window's next document has loaded, once; the
    // problems go to stderr prefixed with "ckptscope: ".
    void applyOnLoad(MainWindow* window) const;
};
