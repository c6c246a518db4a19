#pragma once

#include "graph/graphindex.h"

#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/layout/graphlayout.h"

#include <QGraphicsScene>

#include <memory>
#include <vector>

class GraphEdgeItem;
class GraphNodeItem;

// The drawn computation graph: one item per node and per routed edge, built
// from a finished layout. Highlighting marks a node set and dims the rest.
class GraphScene : public QGraphicsScene {
    Q_OBJECT
public:
    enum class Orientation { TopDown, LeftRight };

    explicit GraphScene(QObject* parent = nullptr);

    void build(std::shared_ptr<const ckptscope::GradientCheckpoint> checkpoint,
               std::shared_ptr<const GraphIndex> index,
               std::shared_ptr<const ckptscope::GraphLayout> layout, Orientation orientation);
    void clearGraph();

    GraphNodeItem* nodeItem(int index) const;
    int nodeCount() const { return int(m_nodes.size()); }
    // Edge e is drawn for layout()->edges[e].
    GraphEdgeItem* edgeItem(int e) const;
    int edgeCount() const { return int(m_edges.size()); }
    const ckptscope::GraphLayout* layout() const { return m_layout.get(); }
    int selectedNode() const;
    void selectNode(int index);
    // Marks `nodes` (and edges between marked nodes) and dims the rest; an
    // empty set clears the marks.
    void highlight(const std::vector<int>& nodes, int focus = -1);
    const std::vector<int>& highlighted() const { return m_highlighted; }
    int highlightFocus() const { return m_focus; }
    Orientation orientation() const { return m_orientation; }

    // Node sizes for the layout: label width from the font, fixed height.
    static ckptscope::GraphLayoutInput layoutInput(const ckptscope::ComputationGraphStore& graph);

private:
    QPointF map(double x, double y) const;

    std::shared_ptr<const ckptscope::GradientCheckpoint> m_checkpoint;
    std::shared_ptr<const GraphIndex> m_index;
    std::shared_ptr<const ckptscope::GraphLayout> m_layout;
    std::vector<GraphNodeItem*> m_nodes;
    std::vector<GraphEdgeItem*> m_edges;
    std::vector<int> m_highlighted;
    int m_focus = -1;
    Orientation m_orientation = Orientation::TopDown;
};
