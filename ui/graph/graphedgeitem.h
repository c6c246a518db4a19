#pragma once

#include <QGraphicsItem>
#include <QPainterPath>

// A routed edge: polyline through the layout's points with an arrow head at
// the target. Reversed (cycle) and dangling edges are drawn distinctly.
class GraphEdgeItem : public QGraphicsItem {
public:
    enum class Kind { Normal, Reversed };
    GraphEdgeItem(const QPolygonF& route, Kind kind);

    // What a comparison found for the edge (none outside the compare view):
    // added solid and thick, removed dotted, a changed number of copies
    // dash-dotted, each in `color`; same edges as they are.
    enum class Change { None, Same, Changed, Added, Removed };
    void setChange(Change change, const QColor& color);
    Change change() const { return m_change; }

    void setDimmed(bool dimmed);
    void setHighlighted(bool on);
    const QPolygonF& route() const { return m_route; }

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    QPolygonF m_route;
    QRectF m_bounds;
    Kind m_kind;
    bool m_dimmed = false;
    bool m_highlighted = false;
    Change m_change = Change::None;
    QColor m_changeColor;
};
