#pragma once

#include "ckptscope/document/document.h"

#include <QDockWidget>

#include <memory>

class QCheckBox;
class QLineEdit;
class QSortFilterProxyModel;
class QTimer;
class QTreeView;
class TensorTreeModel;

// The "Tensors" dock: the tensor tree of an OXCK file with its filter box
// (plain text or regular expression, applied after a pause in typing;
// Escape anywhere in the dock clears it, the chosen tensor staying current).
class TensorDock : public QDockWidget {
    Q_OBJECT
public:
    explicit TensorDock(QWidget* parent = nullptr);

    void setDocument(std::shared_ptr<const ckptscope::Document> document);
    // Selects the tensor, clearing a filter that hides it; false when the
    // document has no such tensor.
    bool selectTensor(const QString& fullName);
    QString currentTensorName() const;
    // Applies the filter box now (it otherwise waits for a pause in typing).
    void applyFilter();
    void focusFilter();

    QTreeView* tree() const { return m_tree; }
    TensorTreeModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    QLineEdit* filterEdit() const { return m_filter; }

Q_SIGNALS:
    void tensorSelected(int tensor);  // the current row changed (not by filtering)
    void tensorActivated(int tensor); // Enter or double-click on a tensor

private:
    void resizeColumns();
    // The name column fills the tree's width, never narrower than its names
    // (m_namesWidth, up to nameColumnWidth's cap).
    void fitNameColumn();
    void keepChosenVisible();

    TensorTreeModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QTreeView* m_tree;
    QLineEdit* m_filter;
    QCheckBox* m_regex;
    QTimer* m_filterTimer;
    QTimer* m_fitTimer;
    QTimer* m_resizeTimer;
    int m_namesWidth = 0;     // measured as the rows change, not at every resize
    bool m_filtering = false; // the proxy moves the current row: not a choice
    QString m_chosen;         // the tensor last chosen, kept through filtering
};
