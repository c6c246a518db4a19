#pragma once

#include <QString>
#include <QStringList>

class CompareWindow;
class MainWindow;
class QTabWidget;

// What `ckptscope --select NAME --tab TITLE` asks for, applied to a window
// once its document has loaded, or to a compare window once its comparison
// is shown (every launch, and --screenshot).
struct LaunchSelection {
    QString select; // a tensor's full name, or a graph node's id; optional
    QString tab;    // a tab title without '&', case-insensitive; optional

    // Applies both now; returns what could not be applied, one line each
    // ("no tensor or graph node named …"). A node id needs the graph
    // indexed (GraphPage::whenIndexed).
    QStringList applyTo(MainWindow* window) const;
    // The same for a comparison shown: a tensor present on either side.
    QStringList applyTo(CompareWindow* window) const;
    // Applies them when the window's next document has loaded and its graph
    // is indexed (comparison is shown), once; the problems go to stderr prefixed with "ckptscope:
    // ".
    void applyOnLoad(MainWindow* window) const;
    void applyOnLoad(CompareWindow* window) const;

private:
    // Shows the visible tab titled `tab`; else returns why not.
    QString showTab(QTabWidget* tabs) const;
};
