#pragma once

#include "common/backgroundtask.h"

#include "ckptscope/document/document.h"

#include <QTreeView>

#include <memory>

class MetadataModel;
class ObjectTreeModel;
class QAction;
class QSortFilterProxyModel;

// The Metadata tab: a document's key/value rows, sortable, values shown by
// their kind (timestamps as dates), copyable as tab-separated text; arrays
// expand to their items, read from the file as they are expanded
// (MetadataModel). A document whose metadata is a tree of values (a PyTorch
// checkpoint's object) shows the tree instead (ObjectTreeModel), in file
// order: a link row jumps to the place its object is drawn, Copy Path and
// Copy as JSON copy what a script needs, and a list of dicts opens as a
// table (Show as Table).
class MetadataView : public QTreeView {
    Q_OBJECT
public:
    explicit MetadataView(QWidget* parent = nullptr);

    void setDocument(const std::shared_ptr<const ckptscope::Document>& document);
    MetadataModel* metadataModel() const { return m_model; }
    ObjectTreeModel* objectModel() const { return m_objects; }
    // The selected rows' paths (tree) one per line; their values as JSON.
    QString selectedPaths() const;
    QString selectedJson() const;
    // The selected rows as "key<TAB>value" lines, fields quoted where a
    // spreadsheet needs it.
    QString selectionText() const;
    // Copy Array Items: every item of the selected array rows (a GGUF
    // vocabulary, or a nested array), one per line, read from the file off
    // the GUI thread, then put on the clipboard (arrayItemsCopied).
    void copySelectedArrayItems();
    bool isCopying() const { return m_copying.isRunning(); }

Q_SIGNALS:
    void arrayItemsCopied(const QString& text);
    void copyFailed(const QString& message);

private:
    void updateTreeActions();
    MetadataModel* m_model;
    ObjectTreeModel* m_objects;
    QSortFilterProxyModel* m_proxy;
    QAction* m_copyPath = nullptr;
    QAction* m_copyJson = nullptr;
    QAction* m_showTable = nullptr;
    std::shared_ptr<const ckptscope::Document> m_document;
    QAction* m_copyItems = nullptr;
    BackgroundTask m_copying{this};
};
