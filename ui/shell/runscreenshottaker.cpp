#include "shell/runscreenshottaker.h"

#include "shell/screenshottaker.h"

#include "run/distributionview.h"
#include "run/layerprofileview.h"
#include "run/runwindow.h"

#include <QApplication>
#include <QTimer>

#include <cstdio>

RunScreenshotTaker::RunScreenshotTaker(RunWindow* window, Request request)
    : QObject(window), m_window(window), m_request(std::move(request)) {
    if (m_request.size.isValid())
        window->resize(m_request.size);
    connect(window, &RunWindow::runLoaded, this, [this] {
        if (m_done)
            return; // a folder change read the run again
        // A preview of the cached checkpoints, or files just written and
        // still held back: the complete run follows in a later runLoaded.
        if (!m_window->waitingFiles().empty() ||
            (m_window->run() && m_window->run()->notCached > 0))
            return;
        m_done = true;
        if (!m_window->run() || m_window->run()->checkpoints.empty()) {
            std::fprintf(stderr, "screenshot: no checkpoint was read\n");
            QApplication::exit(1);
            return;
        }
        if (!m_request.selectTensor.isEmpty() &&
            !m_window->selectTensorNamed(m_request.selectTensor))
            std::fprintf(stderr, "screenshot: no tensor %s in the run\n",
                         qPrintable(m_request.selectTensor));
        if (!m_request.statistic.isEmpty() &&
            !m_window->layerProfileView()->setStatistic(m_request.statistic))
            std::fprintf(stderr, "screenshot: no layer statistic %s\n",
                         qPrintable(m_request.statistic));
        if (!m_request.tab.isEmpty() && !m_window->showTab(m_request.tab))
            std::fprintf(stderr, "screenshot: no tab %s\n", qPrintable(m_request.tab));
        auto* poll = new QTimer(this);
        connect(poll, &QTimer::timeout, this, [this, poll] {
            if (m_window->distributionView()->isLoading())
                return;
            poll->stop();
            QTimer::singleShot(300, this, &RunScreenshotTaker::capture);
        });
        poll->start(50);
    });
}

void RunScreenshotTaker::capture() {
    writeScreenshotAndQuit(m_window, m_request.output);
}
