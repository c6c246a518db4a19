#include "graph/graphnodeitem.h"

#include "common/plaintext.h"

#include <QPainter>
#include <QPainterPath>
#include <QStyleOptionGraphicsItem>
#include <algorithm>

GraphNodeItem::GraphNodeItem(int index, const QString& label, OpFamily family, State state,
                             QSizeF size)
    : m_index(index), m_label(label), m_family(family), m_state(state), m_size(size) {
    setFlag(ItemIsSelectable);
    setToolTip(plainToolTip(label));
    setZValue(1);
}

void GraphNodeItem::setMark(Mark mark) {
    if (mark == m_mark)
        return;
    m_mark = mark;
    update();
}

void GraphNodeItem::setChange(Change change, const QColor& color) {
    if (change == m_change && color == m_changeColor)
        return;
    prepareGeometryChange(); // the badge reaches past the box
    m_change = change;
    m_changeColor = color;
    update();
}

QRectF GraphNodeItem::boundingRect() const {
    // Room for the thick loss/selection outline, and for a change badge
    // centred on the top-right corner.
    const double m = m_change == Change::None || m_change == Change::Same ? 3 : kBadge / 2 + 5;
    return QRectF(-m_size.width() / 2 - m, -m_size.height() / 2 - m, m_size.width() + 2 * m,
                  m_size.height() + 2 * m);
}

void GraphNodeItem::paintChange(QPainter* painter, const QRectF& box) const {
    // Outline by status, then the badge: shape and glyph besides the colour.
    QPen pen(m_changeColor, 3);
    if (m_change == Change::Removed) {
        pen.setStyle(Qt::DashLine);
        painter->setBrush(QBrush(QColor(80, 80, 80, 110), Qt::BDiagPattern));
    } else {
        painter->setBrush(Qt::NoBrush);
    }
    painter->setPen(pen);
    painter->drawRoundedRect(box, 5, 5);
    if (m_change == Change::Changed) { // a double outline
        painter->setPen(QPen(m_changeColor, 1.5));
        painter->setBrush(Qt::NoBrush);
        painter->drawRoundedRect(box.adjusted(4, 4, -4, -4), 3, 3);
    }
    const QRectF badge(box.right() - kBadge / 2, box.top() - kBadge / 2, kBadge, kBadge);
    painter->setPen(QPen(Qt::white, 1.5)); // a ring that parts it from any fill
    painter->setBrush(m_changeColor);
    painter->drawEllipse(badge);
    painter->setPen(QPen(Qt::white, 2.2, Qt::SolidLine, Qt::RoundCap));
    const QPointF c = badge.center();
    const double r = kBadge * 0.28;
    if (m_change == Change::Changed) { // ~
        QPainterPath wave(c - QPointF(r, -1));
        wave.cubicTo(c + QPointF(-r / 2, -r - 1), c + QPointF(r / 2, r + 1), c + QPointF(r, -1));
        painter->setBrush(Qt::NoBrush);
        painter->drawPath(wave);
        return;
    }
    painter->drawLine(c - QPointF(r, 0), c + QPointF(r, 0)); // −
    if (m_change == Change::Added)
        painter->drawLine(c - QPointF(0, r), c + QPointF(0, r)); // +
}

void GraphNodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    const QRectF box(-m_size.width() / 2, -m_size.height() / 2, m_size.width(), m_size.height());
    QColor fill = opFamilyColor(m_family);
    if (m_change == Change::Same || m_change == Change::Removed) // what changed stands out
        fill = QColor::fromHsvF(fill.hsvHueF(), fill.hsvSaturationF() * 0.35,
                                std::min(1.0, fill.valueF() * 1.05));
    if (m_mark == Mark::Dimmed)
        fill.setAlpha(60);
    const bool changed =
        m_change == Change::Changed || m_change == Change::Added || m_change == Change::Removed;
    const qreal lod = option->levelOfDetailFromTransform(painter->worldTransform());
    if (lod < 0.25) { // far away: a plain block is all the eye can use
        // At the zoom that fits thousands of nodes a block would be under a
        // pixel and vanish: keep it at least 2 pixels, so the whole graph
        // still shows its op families.
        QRectF block = box;
        if (lod > 0 && (box.width() * lod < 2 || box.height() * lod < 2)) {
            const double side = 2 / lod;
            block.setSize(QSizeF(std::max(box.width(), side), std::max(box.height(), side)));
            block.moveCenter(box.center());
        }
        if (changed) // from afar the status is what the eye looks for
            fill = m_changeColor;
        painter->fillRect(block,
                          isSelected() || m_mark == Mark::Highlighted ? fill.lighter(140) : fill);
        return;
    }
    // Outline tells the state: solid dark = backward done, dashed = forward
    // only, dotted grey = pending.
    QPen pen;
    switch (m_state) {
    case State::BackwardDone:
        pen = QPen(QColor(30, 30, 30), 2);
        break;
    case State::ForwardDone:
        pen = QPen(QColor(30, 30, 30), 1.5, Qt::DashLine);
        break;
    case State::Pending:
        pen = QPen(QColor(140, 140, 140), 1.5, Qt::DotLine);
        fill = fill.lighter(150);
        break;
    }
    if (m_problem)
        pen = QPen(QColor(220, 40, 40), 2.5, Qt::DashDotLine);
    if (m_loss)
        pen = QPen(QColor(220, 40, 40), 3.5);
    if (m_mark == Mark::Highlighted)
        pen = QPen(QColor(255, 200, 0), 3.5);
    if (isSelected())
        pen = QPen(option->palette.color(QPalette::Highlight), 4);
    painter->setPen(pen);
    painter->setBrush(fill);
    painter->drawRoundedRect(box, 5, 5);
    if (changed && !isSelected() && m_mark != Mark::Highlighted)
        paintChange(painter, box);
    else if (changed)
        paintChange(painter, box.adjusted(-3, -3, 3, 3)); // around the selection outline
    if (lod < 0.5)
        return;
    painter->setPen(m_mark == Mark::Dimmed ? QColor(0, 0, 0, 90) : QColor(Qt::black));
    painter->drawText(box, Qt::AlignCenter, m_label);
}
