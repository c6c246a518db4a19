#pragma once

#include "ckptscope/document/document.h"

#include <QTextBrowser>

#include <memory>
#include <set>

class QTimer;

// The summary of an opened file: format, sizes, counts, training fields
// (step, loss, lr when present) and every warning: the file's own, and the
// tensors found holding NaN or Inf (each a link). "No warnings" is said of
// a tensor file only once every value was scanned.
class OverviewPage : public QTextBrowser {
    Q_OBJECT
public:
    explicit OverviewPage(QWidget* parent = nullptr);
    void setDocument(const std::shared_ptr<const ckptscope::Document>& document);
    // The tensor at this index of Document::tensors() holds NaN or ±Inf
    // (found by its statistics or the scan); shown after a moment, so a
    // scan finding thousands redraws the page once.
    void markNonFinite(int tensor);
    // The scan has read every value: no more tensors will be marked.
    void setValuesScanned();
    // Offers a link that asks for the NaN/Inf scan (a model read over the
    // network is not scanned unasked: the scan reads every value).
    void offerScan(bool offer);

Q_SIGNALS:
    void tensorLinkActivated(int tensor); // a tensor named in the warnings clicked
    // A warning's "Open …" link clicked: the file or folder it points to
    // (a shard's whole model; IndexWarning::opens).
    void openRequested(const QString& path);
    void scanRequested(); // the offered scan's link clicked

private:
    void render();
    QString warningsHtml() const;
    QString shardsHtml() const;
    QString pickleHtml() const;

    std::shared_ptr<const ckptscope::Document> m_doc;
    std::set<int> m_nonFinite;
    bool m_scanned = false;
    bool m_scanOffered = false;
    QTimer* m_renderTimer;
};
