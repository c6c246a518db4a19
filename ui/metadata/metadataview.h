#pragma once

#include "ckptscope/document/document.h"

#include <QTableView>

#include <memory>
#include <optional>
#include <vector>

class MetadataModel;
class QAction;

// The Metadata tab: a document's key/value rows, sortable, values shown by
// their kind (timestamps as dates), copyable as tab-separated text.
class MetadataView : public QTableView {
    Q_OBJECT
public:
    explicit MetadataView(QWidget* parent = nullptr);

    void setDocument(const std::shared_ptr<const ckptscope::Document>& document);
    MetadataModel* metadataModel() const { return m_model; }
    // The selected rows as "key<TAB>value" lines, fields quoted where a
    // spreadsheet needs it.
    QString selectionText() const;
    // Every item of the selected array rows (a GGUF vocabulary), one per
    // line, read from the file: what Copy Array Items puts on the clipboard.
    QString selectedArrayItems() const;

private:
    MetadataModel* m_model;
    std::shared_ptr<const ckptscope::Document> m_document;
    std::vector<std::optional<ckptscope::MetadataArray>> m_arrays; // per source row
    QAction* m_copyItems = nullptr;
};
