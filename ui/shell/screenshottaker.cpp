#include "shell/screenshottaker.h"

#include "browser/mainwindow.h"
#include "graph/graphpage.h"
#include "shell/launchselection.h"
#include "tensor/tensorpage.h"
#include "tensor/tensorvaluesview.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QSaveFile>
#include <QTimer>

#include <cstdio>

ScreenshotTaker::ScreenshotTaker(MainWindow* window, Request request)
    : QObject(window), m_window(window), m_request(std::move(request)) {
    if (m_request.size.isValid())
        window->resize(m_request.size);
    connect(window, &MainWindow::documentLoaded, this, [this] {
        // A node id is looked up in the graph's index, made after the load;
        // without one the window settles while the index is made.
        if (m_request.selectTensor.isEmpty())
            settle();
        else
            m_window->graphPage()->whenIndexed(this, [this] { settle(); });
    });
    connect(window, &MainWindow::loadFailed, this, [](const QString&, const QString& message) {
        std::fprintf(stderr, "screenshot: %s\n", qPrintable(message));
        QApplication::exit(1);
    });
}

void ScreenshotTaker::settle() {
    for (const QString& problem :
         LaunchSelection{m_request.selectTensor, m_request.tab}.applyTo(m_window))
        std::fprintf(stderr, "screenshot: %s\n", qPrintable(problem));
    // Let statistics finish, the values shown arrive and the layout settle
    // before grabbing.
    auto* poll = new QTimer(this);
    connect(poll, &QTimer::timeout, this, [this, poll] {
        if (busy())
            return;
        poll->stop();
        QTimer::singleShot(300, this, [this, poll] {
            if (busy()) // a repaint asked for more values meanwhile
                poll->start(50);
            else
                capture();
        });
    });
    poll->start(50);
}

bool ScreenshotTaker::busy() const {
    return m_window->tensorPage()->isComputing() || m_window->graphPage()->isLayingOut() ||
           m_window->valuesView()->isReading();
}

void ScreenshotTaker::capture() {
    // The node list is in the picture whole, never "indexing".
    m_window->graphPage()->whenIndexed(
        this, [this] { writeScreenshotAndQuit(m_window, m_request.output); });
}

void writeScreenshotAndQuit(QWidget* window, const QString& output) {
    const QPixmap pixmap = window->grab();
    // Written through a temporary file and renamed, like every file we write.
    QSaveFile file(output);
    QDir().mkpath(QFileInfo(output).absolutePath());
    if (!file.open(QIODevice::WriteOnly) || !pixmap.save(&file, "PNG") || !file.commit()) {
        std::fprintf(stderr, "screenshot: cannot write %s\n", qPrintable(output));
        QApplication::exit(1);
        return;
    }
    QApplication::exit(0);
}
