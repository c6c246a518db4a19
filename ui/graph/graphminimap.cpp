#include "graph/graphminimap.h"

#include "graph/graphview.h"

#include <QEvent>
#include <QGraphicsScene>
#include <QMouseEvent>
#include <QPainter>

GraphMinimap::GraphMinimap(GraphView* main) : QWidget(main), m_main(main) {
    setFixedSize(220, 160);
    setAttribute(Qt::WA_OpaquePaintEvent);
    connect(main, &GraphView::viewportChanged, this, qOverload<>(&QWidget::update));
    main->installEventFilter(this);
    main->viewport()->installEventFilter(this);
    main->setOverlay(this);
    place();
}

bool GraphMinimap::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Resize || event->type() == QEvent::Show ||
        event->type() == QEvent::Move)
        place();
    return QWidget::eventFilter(watched, event);
}

void GraphMinimap::place() {
    const QRect area = m_main->viewport()->geometry(); // in the view's coordinates
    move(area.right() - width() - 8, area.bottom() - height() - 8);
    raise();
}

void GraphMinimap::refit() {
    QGraphicsScene* scene = m_main->scene();
    m_pixmap = QPixmap();
    if (scene && !scene->items().isEmpty()) {
        m_source = scene->itemsBoundingRect();
        const QSizeF fitted = m_source.size().scaled(size() - QSize(8, 8), Qt::KeepAspectRatio);
        m_target = QRectF(QPointF((width() - fitted.width()) / 2, (height() - fitted.height()) / 2),
                          fitted);
        m_pixmap = QPixmap(fitted.toSize().expandedTo(QSize(1, 1)));
        m_pixmap.fill(palette().color(QPalette::Base));
        QPainter p(&m_pixmap);
        scene->render(&p, QRectF(QPointF(0, 0), m_pixmap.size()), m_source);
    }
    update();
}

QPointF GraphMinimap::toScene(QPointF pos) const {
    if (m_target.isEmpty())
        return {};
    return m_source.topLeft() +
           QPointF((pos.x() - m_target.left()) * m_source.width() / m_target.width(),
                   (pos.y() - m_target.top()) * m_source.height() / m_target.height());
}

QRectF GraphMinimap::toWidget(const QRectF& r) const {
    const double sx = m_target.width() / m_source.width(),
                 sy = m_target.height() / m_source.height();
    return QRectF(m_target.left() + (r.left() - m_source.left()) * sx,
                  m_target.top() + (r.top() - m_source.top()) * sy, r.width() * sx,
                  r.height() * sy);
}

void GraphMinimap::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    p.setPen(palette().color(QPalette::Mid));
    p.drawRect(rect().adjusted(0, 0, -1, -1));
    if (m_pixmap.isNull())
        return;
    p.drawPixmap(m_target.topLeft(), m_pixmap);
    const QRectF visible = m_main->mapToScene(m_main->viewport()->rect()).boundingRect();
    QColor fill = palette().color(QPalette::Highlight);
    p.setPen(QPen(fill, 1));
    fill.setAlpha(40);
    p.setBrush(fill);
    p.drawRect(toWidget(visible).intersected(rect().adjusted(1, 1, -2, -2)));
}

void GraphMinimap::mousePressEvent(QMouseEvent* event) {
    m_main->centerOn(toScene(event->position()));
}

void GraphMinimap::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton)
        m_main->centerOn(toScene(event->position()));
}
