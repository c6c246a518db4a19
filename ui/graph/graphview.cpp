#include "graph/graphview.h"

#include <QGraphicsItem>
#include <QScrollBar>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace {
constexpr double kMaxZoom = 8.0;
constexpr double kMinZoom = 0.002; // lower still only when Fit needs it
} // namespace

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent) {
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setRenderHint(QPainter::Antialiasing, true);
    // Minimal updates keep repaints to what moved; caching the background is
    // pointless for a plain one.
    setViewportUpdateMode(QGraphicsView::MinimalViewportUpdate);
    setOptimizationFlags(QGraphicsView::DontSavePainterState |
                         QGraphicsView::DontAdjustForAntialiasing);
}

double GraphView::fitZoom() const {
    if (!scene())
        return 1.0;
    // The scene's rectangle (the layout's box and a margin), not
    // itemsBoundingRect: this runs on every wheel step, and visiting 100k
    // items for it would be most of the step.
    const QRectF items = scene()->sceneRect();
    const QRect area = viewport()->rect();
    if (items.isEmpty() || area.isEmpty())
        return 1.0;
    return std::min(area.width() / items.width(), area.height() / items.height());
}

void GraphView::zoomBy(double factor) {
    const double lowest = std::min(kMinZoom, fitZoom() * 0.9); // a little past Fit
    const double next = std::clamp(zoom() * factor, lowest, kMaxZoom);
    const double f = next / zoom();
    scale(f, f);
    Q_EMIT viewportChanged();
}

void GraphView::fitAll() {
    if (!scene())
        return;
    setSceneRect(QRectF()); // back to the scene's own area (centerOnRect may have grown it)
    const QRectF items = scene()->itemsBoundingRect().adjusted(-20, -20, 20, 20);
    fitInView(items, Qt::KeepAspectRatio);
    if (zoom() > 1.0) { // a small graph stays at its natural size, centred
        resetTransform();
        centerOn(items.center());
    }
    Q_EMIT viewportChanged();
}

void GraphView::showInitial() {
    if (!scene())
        return;
    fitAll();
    if (zoom() >= 0.5)
        return;
    resetTransform();
    const QRectF items = scene()->itemsBoundingRect();
    const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
    centerOn(items.center().x(), items.top() + visible.height() / 2 - 20);
    Q_EMIT viewportChanged();
}

QRect GraphView::overlayRect() const {
    if (!m_overlay || !m_overlay->isVisible())
        return {};
    // The overlay is a child of the view, the viewport's sibling.
    return m_overlay->geometry().translated(-viewport()->pos()).intersected(viewport()->rect());
}

QPointF GraphView::targetPoint(QSizeF itemSize) const {
    const QRectF area = viewport()->rect();
    const QRect overlay = overlayRect();
    QRectF atCentre(QPointF(), itemSize);
    atCentre.moveCenter(area.center());
    const QRectF blocked = QRectF(overlay).adjusted(-8, -8, 8, 8);
    if (overlay.isEmpty() || !atCentre.intersects(blocked))
        return area.center();
    // The overlay sits in a corner: the larger free band beside or above it.
    const QRectF left(area.left(), area.top(), blocked.left() - area.left(), area.height());
    const QRectF above(area.left(), area.top(), area.width(), blocked.top() - area.top());
    const double leftArea = std::max(0.0, left.width()) * left.height();
    const double aboveArea = above.width() * std::max(0.0, above.height());
    return leftArea >= aboveArea ? left.center() : above.center();
}

void GraphView::centerOnRect(const QRectF& box) {
    if (box.isEmpty())
        return;
    if (zoom() < 0.6)
        zoomBy(0.8 / zoom());
    const QPointF target = targetPoint(box.size() * zoom());
    const QPointF middle = QRectF(viewport()->rect()).center();
    // The scene point to put in the middle of the viewport so that the item
    // lands on the target point.
    const QPointF centre = box.center() + (middle - target) / zoom();
    showCentre(centre);
}

void GraphView::placeRect(const QRectF& box, QPointF at, double zoom) {
    if (box.isEmpty() || !(zoom > 0))
        return;
    setTransform(QTransform::fromScale(zoom, zoom));
    const QPointF middle = QRectF(viewport()->rect()).center();
    showCentre(box.center() + (middle - at) / zoom);
}

void GraphView::showCentre(QPointF centre) {
    QRectF visible = mapToScene(viewport()->rect()).boundingRect();
    visible.moveCenter(centre);
    // Let the scroll bars reach it even past the edge of the drawing.
    setSceneRect(sceneRect().united(visible));
    centerOn(centre);
    Q_EMIT viewportChanged();
}

void GraphView::wheelEvent(QWheelEvent* event) {
    if (event->angleDelta().y() == 0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    zoomBy(std::pow(1.0015, event->angleDelta().y()));
    event->accept();
}

void GraphView::scrollContentsBy(int dx, int dy) {
    QGraphicsView::scrollContentsBy(dx, dy);
    Q_EMIT viewportChanged();
}

void GraphView::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    Q_EMIT viewportChanged();
}
