#pragma once

#include "graph/graphcanvas.h"
#include "graph/graphgrouplayer.h"
#include "graph/graphindex.h"

#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/layout/collapsedlayout.h"
#include "ckptscope/layout/graphlayout.h"

#include <QGraphicsScene>

#include <memory>
#include <vector>

// The drawn computation graph, built from a finished layout: one canvas item
// draws every node and routed edge from flat arrays (GraphCanvas). Node i is
// the index's node i; edge e is layout()->edges[e]. Highlighting marks a
// node set and dims the rest.
class GraphScene : public QGraphicsScene {
    Q_OBJECT
public:
    enum class Orientation { TopDown, LeftRight };
    using Mark = GraphCanvas::Mark;
    using Change = GraphCanvas::Change;

    explicit GraphScene(QObject* parent = nullptr);

    void build(std::shared_ptr<const ckptscope::GradientCheckpoint> checkpoint,
               std::shared_ptr<const GraphIndex> index,
               std::shared_ptr<const ckptscope::GraphLayout> layout, Orientation orientation);
    // A collapsed graph: groups drawn as boxes (GraphGroupLayer), the nodes
    // of expanded groups by the canvas. Node and edge numbers stay those of
    // the whole graph (nodes of collapsed groups have no box).
    struct GroupInfo {
        QString label, toolTip;
        OpFamily family = OpFamily::Other;
    };
    void buildGrouped(std::shared_ptr<const ckptscope::GradientCheckpoint> checkpoint,
                      std::shared_ptr<const GraphIndex> index,
                      std::shared_ptr<const ckptscope::CollapsedLayout> collapsed,
                      std::vector<GroupInfo> groups, Orientation orientation);
    // Draws the collapsed layout again after groups were expanded or
    // collapsed; keeps the selection, highlight and comparison marks.
    void rebuildGroups();
    void clearGraph();

    // Groups of a collapsed graph (none otherwise).
    GraphGroupLayer* groupLayer() const { return m_groupLayer; }
    const ckptscope::CollapsedLayout* collapsed() const { return m_collapsed.get(); }
    int groupCount() const { return m_groupLayer ? m_groupLayer->groupCount() : 0; }
    QRectF groupRect(int group) const {
        return m_groupLayer && group >= 0 && group < groupCount() ? m_groupLayer->group(group).box
                                                                  : QRectF();
    }

    int nodeCount() const { return m_canvas ? m_canvas->nodeCount() : 0; }
    int edgeCount() const { return m_canvas ? m_canvas->edgeCount() : 0; }
    // A drawn node's box in scene coordinates; empty when not drawn.
    QRectF nodeRect(int node) const { return m_canvas ? m_canvas->nodeBox(node) : QRectF(); }
    QPolygonF edgeRoute(int edge) const {
        return m_canvas ? m_canvas->edgeRoute(edge) : QPolygonF();
    }
    // The node under a scene point at a view zoom (a few pixels of slack).
    int nodeAt(QPointF pos, double zoom = 1) const {
        return m_canvas ? m_canvas->nodeAt(pos, zoom) : -1;
    }
    Mark nodeMark(int node) const { return m_canvas ? m_canvas->mark(node) : Mark::None; }
    Change nodeChange(int node) const {
        return m_canvas ? m_canvas->nodeChange(node) : Change::None;
    }
    void setNodeChange(int node, Change change, const QColor& color);
    Change edgeChange(int edge) const {
        return m_canvas ? m_canvas->edgeChange(edge) : Change::None;
    }
    void setEdgeChange(int edge, Change change, const QColor& color);
    QString nodeToolTip(int node) const { return m_canvas ? m_canvas->toolTipOf(node) : QString(); }
    void setNodeToolTip(int node, const QString& tip);
    GraphCanvas* canvas() const { return m_canvas; }

    const ckptscope::GraphLayout* layout() const { return m_layout.get(); }
    int selectedNode() const { return m_canvas ? m_canvas->selected() : -1; }
    // -1 clears the selection.
    void selectNode(int index);
    // Marks `nodes` (and edges between marked nodes) and dims the rest; an
    // empty set clears the marks.
    void highlight(const std::vector<int>& nodes, int focus = -1);
    const std::vector<int>& highlighted() const { return m_highlighted; }
    int highlightFocus() const { return m_focus; }
    Orientation orientation() const { return m_orientation; }

    // Node sizes for the layout: label width from the font, fixed height.
    static ckptscope::GraphLayoutInput layoutInput(const ckptscope::ComputationGraphStore& graph);
    // The same sizes for an index made with its graph, and its edges (as
    // layoutInputFromGraph found them): no second pass over the ids.
    static ckptscope::LayoutInput layoutInput(const GraphIndex& index,
                                              std::vector<std::pair<uint32_t, uint32_t>> edges);

Q_SIGNALS:
    // A node was selected (by a click or selectNode), or -1: none.
    void selectedNodeChanged(int node);
    // A group's box or title strip was double-clicked.
    void groupActivated(int group);

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;

private:
    QPointF map(double x, double y) const;
    GraphCanvas::Drawing looks() const; // families, states, flags, labels
    GraphCanvas::Drawing drawing();
    void addCanvas(GraphCanvas* previous);
    void addGroupLayer(const ckptscope::CollapsedLayout::Drawing& d);
    void markGroups(const std::vector<char>& marked, bool any);

    std::shared_ptr<const ckptscope::GradientCheckpoint> m_checkpoint;
    std::shared_ptr<const GraphIndex> m_index;
    std::shared_ptr<const ckptscope::GraphLayout> m_layout;
    GraphCanvas* m_canvas = nullptr; // owned by the scene
    std::shared_ptr<const ckptscope::CollapsedLayout> m_collapsed;
    std::vector<GroupInfo> m_groupInfo;
    std::unique_ptr<GraphCanvas::Drawing> m_looks; // grouped: looks(), kept over redraws
    GraphGroupLayer* m_groupLayer = nullptr;       // owned by the scene
    std::vector<int> m_highlighted;
    int m_focus = -1;
    Orientation m_orientation = Orientation::TopDown;
};
