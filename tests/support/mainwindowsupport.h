#pragma once

#include "browser/mainwindow.h"

#include <QSignalSpy>
#include <QTest>

namespace guisupport {

// Waits (10 s at most) for the window's file to open: true when it loaded,
// false when it failed or nothing came.
inline bool waitLoaded(MainWindow& w) {
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    return QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, 10000) &&
           !loaded.isEmpty();
}

} // namespace guisupport
