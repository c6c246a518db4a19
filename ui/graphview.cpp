#include "graphview.h"

#include <QScrollBar>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

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

void GraphView::zoomBy(double factor) {
    const double next = std::clamp(zoom() * factor, 0.002, 8.0);
    const double f = next / zoom();
    scale(f, f);
    Q_EMIT viewportChanged();
}

void GraphView::fitAll() {
    if (!scene())
        return;
    fitInView(scene()->itemsBoundingRect().adjusted(-20, -20, 20, 20), Qt::KeepAspectRatio);
    if (zoom() > 1.0) { // a small graph stays at its natural size, centred
        resetTransform();
        centerOn(scene()->itemsBoundingRect().center());
    }
    // Very tall graphs would become unreadable: never fit below this zoom,
    // start at the top instead.
    if (zoom() < 0.05) {
        const double f = 0.05 / zoom();
        scale(f, f);
        centerOn(scene()->itemsBoundingRect().center().x(), scene()->itemsBoundingRect().top());
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

void GraphView::centerOnItem(const QGraphicsItem* item) {
    if (!item)
        return;
    if (zoom() < 0.6)
        zoomBy(0.8 / zoom());
    centerOn(item);
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
