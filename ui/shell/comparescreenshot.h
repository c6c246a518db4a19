#pragma once

#include <QObject>
#include <QSize>
#include <QString>

class CompareWindow;

// Renders a compare window to a PNG once the comparison is shown (for two
// gradient checkpoints: the union graph drawn, the first node change
// selected), then quits: `ckptscope --compare A B --screenshot FILE`, used
// by tools/screenshots.sh for the README.
class CompareScreenshot : public QObject {
    Q_OBJECT
public:
    // size: the window's, when valid. A --tab or --select is applied by
    // LaunchSelection, connected first.
    CompareScreenshot(CompareWindow* window, QString output, QSize size);

private:
    void whenSettled();
    void capture();

    CompareWindow* m_window;
    QString m_output;
};
