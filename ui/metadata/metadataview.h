#pragma once

#include "ckptscope/document/document.h"

#include <QTreeView>

#include <memory>

class MetadataModel;
class QAction;

// The Metadata tab: a document's key/value rows, sortable, values shown by
// their kind (timestamps as dates), copyable as tab-separated text; arrays
// expand to their items, read from the file as they are expanded
// (MetadataModel).
class MetadataView : public QTreeView {
    Q_OBJECT
public:
    explicit MetadataView(QWidget* parent = nullptr);

    void setDocument(const std::shared_ptr<const ckptscope::Document>& document);
    MetadataModel* metadataModel() const { return m_model; }
    // The selected rows as "key<TAB>value" lines, fields quoted where a
    // spreadsheet needs it.
    QString selectionText() const;
    // Every item of the selected array rows (a GGUF vocabulary, or a nested
    // array), one per line, read from the file: what Copy Array Items puts on
    // the clipboard.
    QString selectedArrayItems() const;

private:
    MetadataModel* m_model;
    std::shared_ptr<const ckptscope::Document> m_document;
    QAction* m_copyItems = nullptr;
};
