#pragma once

#include <QObject>
#include <QSize>
#include <QString>

class MainWindow;
class QWidget;

// Saves the window's picture as a PNG at `output` (a temporary file,
// renamed) and ends the application: 0 when written, else 1 with a message.
void writeScreenshotAndQuit(QWidget* window, const QString& output);

// Renders a window to a PNG once its document is loaded (and the selected
// tensor's statistics are in): used by tools/screenshots.sh for the README.
class ScreenshotTaker : public QObject {
    Q_OBJECT
public:
    struct Request {
        QString output;
        QString selectTensor; // tensor full name or graph node id, optional
        QString tab;          // tab title without '&', optional
        QSize size;           // the window's, when valid
    };
    ScreenshotTaker(MainWindow* window, Request request);

private:
    void settle(); // applies the selection, then captures once all is drawn
    void capture();
    bool busy() const; // statistics, layout or values still under way
    MainWindow* m_window;
    Request m_request;
};
