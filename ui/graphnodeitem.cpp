#include "graphnodeitem.h"

#include "plaintext.h"

#include <QPainter>
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

QRectF GraphNodeItem::boundingRect() const {
    // Room for the thick loss/selection outline.
    return QRectF(-m_size.width() / 2 - 3, -m_size.height() / 2 - 3, m_size.width() + 6,
                  m_size.height() + 6);
}

void GraphNodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    const QRectF box(-m_size.width() / 2, -m_size.height() / 2, m_size.width(), m_size.height());
    QColor fill = opFamilyColor(m_family);
    if (m_mark == Mark::Dimmed)
        fill.setAlpha(60);
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
    if (lod < 0.5)
        return;
    painter->setPen(m_mark == Mark::Dimmed ? QColor(0, 0, 0, 90) : QColor(Qt::black));
    painter->drawText(box, Qt::AlignCenter, m_label);
}
