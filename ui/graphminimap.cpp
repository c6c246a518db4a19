#include "graphminimap.h"

#include "graphview.h"

#include <QMouseEvent>

GraphMinimap::GraphMinimap(GraphView* main, QWidget* parent) : QGraphicsView(parent), m_main(main) {
    setScene(main->scene());
    setInteractive(false);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setRenderHint(QPainter::Antialiasing, false);
    setFixedSize(220, 160);
    setFrameShape(QFrame::Box);
    connect(main, &GraphView::viewportChanged, viewport(), qOverload<>(&QWidget::update));
}

void GraphMinimap::refit() {
    if (scene())
        fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
    viewport()->update();
}

void GraphMinimap::drawForeground(QPainter* painter, const QRectF&) {
    const QRectF visible = m_main->mapToScene(m_main->viewport()->rect()).boundingRect();
    QPen pen(palette().color(QPalette::Highlight), 0);
    pen.setCosmetic(true);
    painter->setPen(pen);
    QColor fill = palette().color(QPalette::Highlight);
    fill.setAlpha(40);
    painter->setBrush(fill);
    painter->drawRect(visible);
}

void GraphMinimap::mousePressEvent(QMouseEvent* event) {
    m_main->centerOn(mapToScene(event->position().toPoint()));
}

void GraphMinimap::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton)
        m_main->centerOn(mapToScene(event->position().toPoint()));
}

void GraphMinimap::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    refit();
}
