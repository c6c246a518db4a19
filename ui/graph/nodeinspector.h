#pragma once

#include "graph/graphindex.h"

#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include <QWidget>

#include <memory>

class QLabel;
class QTextBrowser;

// Details of the selected node: id, op, inputs linked to their producers,
// output and gradient CIDs, metadata and consumers, plus actions.
class NodeInspector : public QWidget {
    Q_OBJECT
public:
    explicit NodeInspector(QWidget* parent = nullptr);

    void setGraph(std::shared_ptr<const ckptscope::GradientCheckpoint> checkpoint,
                  std::shared_ptr<const GraphIndex> index);
    void setNode(int node);
    int node() const { return m_node; }
    QString text() const; // plain text of the details (tests, copy)

Q_SIGNALS:
    void nodeRequested(int node);
    void provenanceRequested(int node);
    void consumersRequested(int node);

private:
    std::shared_ptr<const ckptscope::GradientCheckpoint> m_checkpoint;
    std::shared_ptr<const GraphIndex> m_index;
    int m_node = -1;
    QTextBrowser* m_browser;
    QList<QWidget*> m_actions;
};
