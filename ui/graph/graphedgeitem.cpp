#include "graph/graphedgeitem.h"

#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QtMath>

GraphEdgeItem::GraphEdgeItem(const QPolygonF& route, Kind kind) : m_route(route), m_kind(kind) {
    m_bounds = route.boundingRect().adjusted(-6, -6, 6, 6);
    setZValue(0);
    setAcceptedMouseButtons(Qt::NoButton);
}

void GraphEdgeItem::setChange(Change change, const QColor& color) {
    m_change = change;
    m_changeColor = color;
    setZValue(change == Change::None || change == Change::Same ? 0 : 0.25); // over the rest
    update();
}

void GraphEdgeItem::setDimmed(bool dimmed) {
    if (dimmed != m_dimmed) {
        m_dimmed = dimmed;
        update();
    }
}

void GraphEdgeItem::setHighlighted(bool on) {
    if (on != m_highlighted) {
        m_highlighted = on;
        setZValue(on ? 0.5 : 0);
        update();
    }
}

QRectF GraphEdgeItem::boundingRect() const {
    return m_bounds;
}

void GraphEdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    if (m_route.size() < 2)
        return;
    const qreal lod = option->levelOfDetailFromTransform(painter->worldTransform());
    QColor color = option->palette.color(QPalette::Text);
    // Thousands of edges on a few pixels would paint the nodes over: fainter
    // the further out.
    color.setAlpha(m_dimmed ? 35 : lod < 0.1 ? 60 : 150);
    if (m_kind == Kind::Reversed)
        color = QColor(220, 40, 40, m_dimmed ? 60 : 220);
    const bool changed =
        m_change == Change::Added || m_change == Change::Removed || m_change == Change::Changed;
    if (changed) {
        color = m_changeColor;
        color.setAlpha(m_dimmed ? 60 : 230);
    }
    if (m_highlighted)
        color = QColor(230, 170, 0);
    // Zoomed far out, antialiasing thousands of sub-pixel polylines is most of
    // a frame and shows nothing. The view does not save painter state between
    // items (DontSavePainterState), so set the hint either way.
    painter->setRenderHint(QPainter::Antialiasing, lod >= 0.1);
    QPen pen(color, m_highlighted || changed ? 2.5 : 1.2);
    pen.setCosmetic(lod < 0.5); // thin hairlines when zoomed out: cheap and legible
    if (m_kind == Kind::Reversed)
        pen.setStyle(Qt::DashLine);
    if (m_change == Change::Removed)
        pen.setStyle(Qt::DotLine);
    else if (m_change == Change::Changed)
        pen.setStyle(Qt::DashDotLine);
    else if (m_change == Change::Added)
        pen.setStyle(Qt::SolidLine);
    painter->setPen(pen);
    painter->drawPolyline(m_route);
    if (lod < 0.4)
        return;
    // Arrow head at the target along the last segment.
    const QPointF tip = m_route.last();
    const QPointF from = m_route[m_route.size() - 2];
    const qreal angle = std::atan2(tip.y() - from.y(), tip.x() - from.x());
    const qreal size = 7;
    const QPointF left =
        tip - QPointF(std::cos(angle - 0.45) * size, std::sin(angle - 0.45) * size);
    const QPointF right =
        tip - QPointF(std::cos(angle + 0.45) * size, std::sin(angle + 0.45) * size);
    painter->setBrush(color);
    painter->setPen(Qt::NoPen);
    painter->drawPolygon(QPolygonF({tip, left, right}));
}
