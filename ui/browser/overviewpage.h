#pragma once

#include "ckptscope/document/document.h"

#include <QTextBrowser>

#include <memory>

// The summary of an opened file: format, sizes, counts, training fields
// (step, loss, lr when present) and every warning.
class OverviewPage : public QTextBrowser {
    Q_OBJECT
public:
    explicit OverviewPage(QWidget* parent = nullptr);
    void setDocument(const std::shared_ptr<const ckptscope::Document>& document);
};
