#pragma once

#include "graph/graphgrid.h"
#include "graph/opfamily.h"

#include <QGraphicsItem>
#include <QHash>

#include <functional>
#include <vector>

// The whole drawn graph as one item: nodes and edges from flat arrays,
// drawn only where exposed (a grid finds them) and with the detail the zoom
// can show — blocks of colour and plain lines far out, boxes with outlines,
// labels and arrow heads close up. Picking (hover, click) uses the grid too.
// One item instead of one per node and edge: a 100k-node graph costs arrays,
// not 230 000 QGraphicsItems and the scene's index over them.
class GraphCanvas : public QGraphicsItem {
public:
    enum class State : uint8_t { Pending, ForwardDone, BackwardDone };
    enum class Mark : uint8_t { None, Highlighted, Dimmed };
    // What a comparison found for a node or edge (none outside the compare
    // view). Nodes: an outline in the status colour of a style of its own, a
    // badge with a glyph (+ added, − removed, ~ changed), a hatch over removed
    // nodes, unchanged ones faded — never by colour alone. Edges: added solid
    // and thick, removed dotted, changed dash-dotted.
    enum class Change : uint8_t { None, Same, Changed, Added, Removed };
    enum NodeFlag : uint8_t { Loss = 1, Problem = 2 }; // problem: on a cycle

    struct Drawing {
        std::vector<QRectF> boxes; // per node, scene coordinates; empty: not drawn
        std::vector<OpFamily> families;
        std::vector<State> states;
        std::vector<uint8_t> flags;          // NodeFlag bits
        std::vector<QPointF> points;         // every edge's route, one after another
        std::vector<uint32_t> edgeStart;     // edge e is points[edgeStart[e], edgeStart[e + 1])
        std::vector<uint8_t> reversed;       // per edge: reversed to break a cycle
        QRectF bounds;                       // the layout's box
        std::function<QString(int)> label;   // a node's label (its op)
        std::function<QString(int)> toolTip; // unless a comparison set one
    };

    // clicked: a node was clicked.
    GraphCanvas(Drawing drawing, std::function<void(int)> clicked);

    int nodeCount() const { return int(m_d.boxes.size()); }
    int edgeCount() const { return int(m_d.edgeStart.size()) - 1; }
    QRectF nodeBox(int node) const;
    QPolygonF edgeRoute(int edge) const;
    // The node under a scene point (a few pixels of slack at this zoom), -1
    // for none.
    int nodeAt(QPointF pos, double zoom) const;

    void setSelected(int node);
    int selected() const { return m_selected; }
    // Per node: Mark; per edge: highlighted (both ends marked) or dimmed.
    void setMarks(std::vector<Mark> nodes, std::vector<uint8_t> edgesOn, bool any);
    Mark mark(int node) const;
    void setNodeChange(int node, Change change, QColor color);
    Change nodeChange(int node) const;
    void setEdgeChange(int edge, Change change, QColor color);
    Change edgeChange(int edge) const;
    void setToolTipOf(int node, const QString& tip) { m_tips.insert(node, tip); }
    QString toolTipOf(int node) const;

    // Comparison marks and tooltips of a drawing of the same graph (the
    // drawing rebuilt as groups expand).
    void takeStateFrom(GraphCanvas& old);
    // The tooltip where no node is (a group's), by scene point.
    void setOtherToolTip(std::function<QString(QPointF)> tip) { m_otherTip = std::move(tip); }

    // Far views are thinned to a block per pixel unless every node is asked
    // for (exports, --render).
    void setDrawEveryNode(bool on) { m_everyNode = on; }

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

protected:
    void hoverMoveEvent(QGraphicsSceneHoverEvent* event) override;
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;

private:
    struct EdgeStyle;
    // Items of a grid with a box near rect, in index order.
    // shown: the items drawn when some are not (m_partial).
    std::vector<int> itemsIn(const GraphGrid& grid, int count, const QRectF& rect,
                             const std::vector<int>& shown) const;
    void paintEdges(QPainter* painter, const QStyleOptionGraphicsItem* option,
                    const QRectF& exposed, double lod) const;
    void paintLines(QPainter* painter, const QStyleOptionGraphicsItem* option,
                    const std::vector<int>& edges, double lod) const;
    void paintNodes(QPainter* painter, const QStyleOptionGraphicsItem* option,
                    const QRectF& exposed, double lod) const;
    void paintBlocks(QPainter* painter, const std::vector<int>& nodes, double lod) const;
    void paintBox(QPainter* painter, const QStyleOptionGraphicsItem* option, int node,
                  double lod) const;
    void paintChange(QPainter* painter, int node, const QRectF& box) const;
    QPen edgePen(const QStyleOptionGraphicsItem* option, int edge, double lod) const;
    QColor nodeFill(int node) const;
    double viewZoom() const;

    Drawing m_d;
    std::function<void(int)> m_clicked;
    GraphGrid m_nodeGrid, m_edgeGrid;
    // Nodes and edges drawn, listed when some are not (m_partial: those of
    // collapsed groups).
    std::vector<int> m_shownNodes, m_shownEdges;
    bool m_partial = false;
    std::function<QString(QPointF)> m_otherTip;
    bool m_everyNode = false;
    mutable bool m_thin = false; // this paint thins far views per pixel
    int m_selected = -1;
    std::vector<Mark> m_marks;                        // empty: none
    std::vector<uint8_t> m_edgeOn;                    // empty: none; else 1 highlighted, 0 dimmed
    std::vector<Change> m_nodeChanges, m_edgeChanges; // empty until a comparison sets them
    std::vector<QRgb> m_nodeColors, m_edgeColors;
    QHash<int, QString> m_tips; // set by a comparison; else op and id
};
