#pragma once

#include <QObject>
#include <QSize>
#include <QString>

class RunWindow;

// Renders a run window to a PNG once its run is read, the tensor selected
// and the tab shown (and a distribution's histograms are in): used by
// tools/screenshots.sh for the README's run pictures.
class RunScreenshotTaker : public QObject {
    Q_OBJECT
public:
    struct Request {
        QString output;
        QString selectTensor; // optional
        QString tab;          // optional: Over steps, Distribution, Layer profile, Metadata
        QString statistic;    // optional: the Layer profile's (update / weight, L2 norm, …)
        QSize size;           // the window's, when valid
    };
    RunScreenshotTaker(RunWindow* window, Request request);

private:
    void capture();
    RunWindow* m_window;
    Request m_request;
    bool m_done = false;
};
