#pragma once

#include "ckptscope/document/document.h"

#include <QWidget>

#include <memory>

class QProgressBar;
class QToolButton;
class ValueScanner;

// The status bar's NaN/Inf scan: reads every tensor once in the background
// (ValueScanner), shows how far it got and stops when asked. A local file is
// scanned when it opens; a model read over the network only when the user
// asks (the Overview's link), since the scan reads every value.
class ValueScanBar : public QWidget {
    Q_OBJECT
public:
    explicit ValueScanBar(QWidget* parent = nullptr);

    // Scans document (nullptr: stops and hides).
    void start(std::shared_ptr<const ckptscope::Document> document);
    bool isRunning() const;

Q_SIGNALS:
    void nonFinite(int tensor);
    void finished(); // every value read
    void stopped();  // the user stopped it before the end
    void failed(const QString& message);

private:
    ValueScanner* m_scanner;
    QProgressBar* m_progress;
    QToolButton* m_stop;
};
