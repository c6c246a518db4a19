#include "browser/valuescanbar.h"

#include "tensor/valuescanner.h"

#include <QHBoxLayout>
#include <QProgressBar>
#include <QToolButton>

ValueScanBar::ValueScanBar(QWidget* parent)
    : QWidget(parent), m_scanner(new ValueScanner(this)), m_progress(new QProgressBar),
      m_stop(new QToolButton) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_progress->setObjectName(QStringLiteral("scanProgress"));
    m_progress->setRange(0, 100);
    m_progress->setMaximumWidth(160);
    m_progress->setFormat(tr("scanning %p%"));
    m_progress->setToolTip(tr("Reading every tensor once to flag NaN and ±Inf values"));
    m_stop->setObjectName(QStringLiteral("stopScan"));
    m_stop->setText(tr("Stop"));
    m_stop->setToolTip(tr("Stop checking the values for NaN and Inf"));
    layout->addWidget(m_progress);
    layout->addWidget(m_stop);
    setVisible(false);
    connect(m_scanner, &ValueScanner::nonFinite, this, &ValueScanBar::nonFinite);
    connect(m_scanner, &ValueScanner::progress, this,
            [this](double p) { m_progress->setValue(int(p * 100)); });
    connect(m_scanner, &ValueScanner::finished, this, [this] {
        hide();
        Q_EMIT finished();
    });
    connect(m_scanner, &ValueScanner::failed, this, [this](const QString& message) {
        hide();
        Q_EMIT failed(message);
    });
    connect(m_stop, &QToolButton::clicked, this, [this] {
        m_scanner->cancel();
        hide();
        Q_EMIT stopped();
    });
}

void ValueScanBar::start(std::shared_ptr<const ckptscope::Document> document) {
    m_progress->setValue(0);
    setVisible(document && !document->tensors().empty());
    m_scanner->start(std::move(document));
}

bool ValueScanBar::isRunning() const {
    return m_scanner->isRunning();
}
