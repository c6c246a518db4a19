#pragma once

#include "ckptscope/document/document.h"

#include <QTableView>

#include <memory>

class MetadataModel;

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

private:
    MetadataModel* m_model;
};
