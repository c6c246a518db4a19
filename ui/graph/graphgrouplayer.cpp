#include "graph/graphgrouplayer.h"

#include <QGraphicsSceneMouseEvent>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>

namespace {
// The part of a line inside a rectangle (Liang–Barsky); false when none.
// A wide antialiased line 100 000 pixels long costs seconds to stroke even
// when a few pixels of it are on screen: only those are drawn.
bool clipLine(QLineF& line, const QRectF& r) {
    const QPointF d = line.p2() - line.p1();
    double t0 = 0, t1 = 1;
    const double p[4] = {-d.x(), d.x(), -d.y(), d.y()};
    const double q[4] = {line.x1() - r.left(), r.right() - line.x1(), line.y1() - r.top(),
                         r.bottom() - line.y1()};
    for (int i = 0; i < 4; ++i) {
        if (p[i] == 0) {
            if (q[i] < 0)
                return false;
            continue;
        }
        const double t = q[i] / p[i];
        if (p[i] < 0)
            t0 = std::max(t0, t);
        else
            t1 = std::min(t1, t);
    }
    if (t0 > t1)
        return false;
    line = QLineF(line.p1() + d * t0, line.p1() + d * t1);
    return true;
}

// Wider with the number of edges a bundle stands for, within reason.
double bundleWidth(uint32_t count) {
    return 1.2 + std::min(6.0, std::log2(double(std::max<uint32_t>(count, 1))));
}
} // namespace

GraphGroupLayer::GraphGroupLayer(std::vector<Group> groups, std::vector<Bundle> bundles,
                                 std::function<void(int)> activated)
    : m_groups(std::move(groups)), m_bundles(std::move(bundles)),
      m_activated(std::move(activated)) {
    setZValue(-1); // under the canvas: frames are the background of their nodes
    setFlag(ItemUsesExtendedStyleOption);
    for (const Group& g : m_groups)
        m_bounds |= g.box;
    for (const Bundle& b : m_bundles)
        m_bounds |= b.route.boundingRect();
    m_bounds.adjust(-10, -10, 10, 10);
}

int GraphGroupLayer::groupAt(QPointF pos) const {
    for (int g = 0; g < groupCount(); ++g) {
        const Group& group = m_groups[size_t(g)];
        if ((group.expanded ? group.title : group.box).contains(pos))
            return g;
    }
    return -1;
}

int GraphGroupLayer::groupContaining(QPointF pos) const {
    for (int g = 0; g < groupCount(); ++g)
        if (m_groups[size_t(g)].box.contains(pos))
            return g;
    return -1;
}

void GraphGroupLayer::setMarks(std::vector<Mark> groups, std::vector<Mark> bundles) {
    m_groupMarks = std::move(groups);
    m_bundleMarks = std::move(bundles);
    update();
}

GraphGroupLayer::Mark GraphGroupLayer::groupMark(int g) const {
    return g >= 0 && size_t(g) < m_groupMarks.size() ? m_groupMarks[size_t(g)] : Mark::None;
}

QRectF GraphGroupLayer::boundingRect() const {
    return m_bounds;
}

void GraphGroupLayer::mousePressEvent(QGraphicsSceneMouseEvent* event) {
    // Taken only on a box or title strip (so a double-click follows here);
    // elsewhere the view pans.
    if (event->button() != Qt::LeftButton || groupAt(event->scenePos()) < 0) {
        event->ignore();
        return;
    }
    event->accept();
}

void GraphGroupLayer::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) {
    const int g = event->button() == Qt::LeftButton ? groupAt(event->scenePos()) : -1;
    if (g < 0) {
        event->ignore();
        return;
    }
    if (m_activated)
        m_activated(g);
    event->accept();
}

void GraphGroupLayer::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    // Only what meets the exposed area (labels cost even off the device).
    const QRectF exposed = (option->exposedRect.isEmpty() ? boundingRect() : option->exposedRect)
                               .adjusted(-12, -12, 12, 12);
    // Frames first (backgrounds), then the bundles, then the collapsed boxes.
    for (int g = 0; g < groupCount(); ++g)
        if (m_groups[size_t(g)].expanded && m_groups[size_t(g)].box.intersects(exposed))
            paintGroup(painter, g, lod);
    paintBundles(painter, exposed, lod);
    for (int g = 0; g < groupCount(); ++g)
        if (!m_groups[size_t(g)].expanded && m_groups[size_t(g)].box.intersects(exposed))
            paintGroup(painter, g, lod);
}

void GraphGroupLayer::paintBundles(QPainter* painter, const QRectF& exposed, double lod) const {
    painter->setRenderHint(QPainter::Antialiasing, lod >= 0.1);
    QFont font = painter->font();
    font.setPointSizeF(font.pointSizeF() * 0.85);
    painter->setFont(font);
    for (int b = 0; b < bundleCount(); ++b) {
        const Bundle& bundle = m_bundles[size_t(b)];
        if (bundle.route.size() < 2 ||
            !bundle.route.boundingRect().adjusted(-1, -1, 1, 1).intersects(exposed))
            continue;
        const Mark mark = b < int(m_bundleMarks.size()) ? m_bundleMarks[size_t(b)] : Mark::None;
        QColor color = mark == Mark::Highlighted ? QColor(230, 170, 0) : QColor(60, 60, 60);
        color.setAlpha(mark == Mark::Dimmed ? 40 : 170);
        // Far out a hairline (wide lines would cover the boxes); close up
        // wider with the count.
        QPen pen(color, lod < 0.5 ? 1.0 : bundleWidth(bundle.count));
        pen.setCosmetic(lod < 0.5);
        painter->setPen(pen);
        for (int k = 0; k + 1 < bundle.route.size(); ++k) {
            QLineF line(bundle.route[k], bundle.route[k + 1]);
            if (clipLine(line, exposed))
                painter->drawLine(line);
        }
        if (lod < 0.4 || bundle.count < 2)
            continue;
        // The multiplicity beside the middle of the line.
        const QPointF mid = (bundle.route.first() + bundle.route.last()) / 2;
        painter->setPen(QColor(40, 40, 40, mark == Mark::Dimmed ? 90 : 255));
        painter->drawText(QRectF(mid + QPointF(4, -9), QSizeF(80, 18)),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          QStringLiteral("×%1").arg(bundle.count));
    }
}

void GraphGroupLayer::paintGroup(QPainter* painter, int g, double lod) const {
    const Group& group = m_groups[size_t(g)];
    const Mark mark = groupMark(g);
    QColor fill = opFamilyColor(group.family);
    painter->setRenderHint(QPainter::Antialiasing, lod >= 0.1);
    QPen pen(mark == Mark::Highlighted ? QColor(255, 200, 0) : QColor(50, 50, 50),
             mark == Mark::Highlighted ? 3.5 : 2);
    pen.setCosmetic(lod < 0.25);
    if (group.expanded) { // a pale frame, its title strip in the family colour
        // Solid and square: a frame can be 100 000 pixels tall, and dashing
        // or rounding it costs seconds even off screen.
        fill.setAlpha(mark == Mark::Dimmed ? 15 : 35);
        pen.setColor(mark == Mark::Highlighted ? pen.color() : QColor(110, 110, 110));
        painter->setPen(pen);
        painter->setBrush(fill);
        painter->drawRect(group.box);
        fill.setAlpha(mark == Mark::Dimmed ? 50 : 140);
        painter->setPen(Qt::NoPen);
        painter->setBrush(fill);
        painter->drawRect(group.title);
    } else {
        if (mark == Mark::Dimmed)
            fill.setAlpha(60);
        painter->setBrush(fill);
        if (lod < 0.25 && mark != Mark::Highlighted) { // far out: the colour is what shows
            painter->setPen(Qt::NoPen);
            painter->drawRect(group.box);
            return;
        }
        painter->setPen(pen);
        // A second box behind: a stack of nodes.
        painter->drawRoundedRect(group.box.translated(4, 4), 6, 6);
        painter->drawRoundedRect(group.box, 6, 6);
    }
    if (lod < 0.3)
        return;
    painter->setPen(mark == Mark::Dimmed ? QColor(0, 0, 0, 90) : QColor(Qt::black));
    if (group.expanded && group.title.height() > group.title.width()) {
        // Left to right: the strip runs down the frame's left side.
        painter->save();
        painter->translate(group.title.bottomLeft());
        painter->rotate(-90);
        painter->drawText(QRectF(6, 0, group.title.height() - 12, group.title.width()),
                          Qt::AlignLeft | Qt::AlignVCenter, group.label);
        painter->restore();
        return;
    }
    painter->drawText(group.expanded ? group.title.adjusted(6, 0, -6, 0) : group.box,
                      (group.expanded ? Qt::AlignLeft : Qt::AlignHCenter) | Qt::AlignVCenter,
                      group.label);
}
