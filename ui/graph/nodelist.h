#pragma once

#include "graph/graphindex.h"

#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include <QTableView>

#include <memory>

class NodeTableModel;

// The nodes of the graph on show, in topological order; the main window
// keeps it in a dock of its own, in step with the graph page's selection.
// A graph without its index yet (made off the GUI thread) shows no rows and
// says it is being indexed: never the rows of the graph before.
class NodeList : public QTableView {
    Q_OBJECT
public:
    explicit NodeList(QWidget* parent = nullptr);

    void setGraph(std::shared_ptr<const ckptscope::GradientCheckpoint> checkpoint,
                  std::shared_ptr<const GraphIndex> index);
    // Makes node current and scrolls to it, without emitting nodeChosen.
    void showNode(int node);
    NodeTableModel* nodeModel() const { return m_model; }
    // What the empty list says ("Indexing 100 000 nodes…"), or nothing.
    QString placeholderText() const { return m_placeholder; }

Q_SIGNALS:
    void nodeChosen(int node); // the user moved to another row

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    NodeTableModel* m_model;
    QString m_placeholder;
    bool m_syncing = false;
};
