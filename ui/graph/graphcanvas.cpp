#include "graph/graphcanvas.h"

#include <QGraphicsScene>
#include <QGraphicsSceneHoverEvent>
#include <QGraphicsSceneMouseEvent>
#include <QGraphicsView>
#include <QPainter>
#include <QPainterPath>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace {
constexpr double kBadge = 15;
constexpr double kMargin = kBadge / 2 + 5; // badges and thick outlines reach past a box

// One flag per device pixel, for thinning a far view: at the zoom that fits
// 100 000 nodes, most of them land on a pixel already painted. Off (every
// point new) for devices too large to mask, such as a large export.
class PixelMask {
public:
    PixelMask(const QPainter* painter, bool on) : m_t(painter->worldTransform()) {
        const QPaintDevice* device = painter->device();
        if (on && device && qint64(device->width()) * device->height() <= 16'000'000) {
            m_w = device->width();
            m_h = device->height();
            m_bits.assign(size_t(m_w) * size_t(m_h), 0);
        }
    }
    QPoint pixel(QPointF p) const {
        const QPointF d = m_t.map(p);
        return QPoint(int(std::floor(d.x())), int(std::floor(d.y())));
    }
    // True the first time a pixel is asked for (and outside the device).
    bool on() const { return !m_bits.empty(); }
    bool claim(QPoint px) {
        if (m_bits.empty() || px.x() < 0 || px.y() < 0 || px.x() >= m_w || px.y() >= m_h)
            return true;
        uint8_t& bit = m_bits[size_t(px.y()) * size_t(m_w) + size_t(px.x())];
        return !std::exchange(bit, uint8_t(1));
    }

private:
    QTransform m_t;
    int m_w = 0, m_h = 0;
    std::vector<uint8_t> m_bits;
};

bool isChange(GraphCanvas::Change c) {
    return c == GraphCanvas::Change::Changed || c == GraphCanvas::Change::Added ||
           c == GraphCanvas::Change::Removed;
}
} // namespace

GraphCanvas::GraphCanvas(Drawing drawing, std::function<void(int)> clicked)
    : m_d(std::move(drawing)), m_clicked(std::move(clicked)) {
    setFlag(ItemUsesExtendedStyleOption); // exposedRect: draw only what is asked for
    setAcceptHoverEvents(true);
    std::vector<GraphGrid::Entry> entries;
    entries.reserve(m_d.boxes.size());
    for (size_t i = 0; i < m_d.boxes.size(); ++i)
        if (!m_d.boxes[i].isEmpty()) { // nodes of collapsed groups are not drawn
            entries.push_back({uint32_t(i), m_d.boxes[i]});
            m_shownNodes.push_back(int(i));
        }
    const QRectF area = m_d.bounds.adjusted(-kMargin, -kMargin, kMargin, kMargin);
    m_nodeGrid.build(area, entries, m_d.boxes.size());
    entries.clear();
    for (int e = 0; e < edgeCount(); ++e) {
        if (m_d.edgeStart[size_t(e) + 1] - m_d.edgeStart[size_t(e)] >= 2)
            m_shownEdges.push_back(e);
        for (uint32_t k = m_d.edgeStart[size_t(e)]; k + 1 < m_d.edgeStart[size_t(e) + 1]; ++k)
            entries.push_back({uint32_t(e), QRectF(m_d.points[k], m_d.points[k + 1]).normalized()});
    }
    m_partial = m_shownNodes.size() != m_d.boxes.size() ||
                m_shownEdges.size() != size_t(std::max(0, edgeCount()));
    if (!m_partial) { // all drawn: no lists needed
        m_shownNodes = {};
        m_shownEdges = {};
    }
    m_edgeGrid.build(area, entries, size_t(std::max(0, edgeCount())));
}

QRectF GraphCanvas::nodeBox(int node) const {
    return node >= 0 && node < nodeCount() ? m_d.boxes[size_t(node)] : QRectF();
}

QPolygonF GraphCanvas::edgeRoute(int edge) const {
    QPolygonF route;
    if (edge >= 0 && edge < edgeCount())
        for (uint32_t k = m_d.edgeStart[size_t(edge)]; k < m_d.edgeStart[size_t(edge) + 1]; ++k)
            route << m_d.points[k];
    return route;
}

int GraphCanvas::nodeAt(QPointF pos, double zoom) const {
    const double slack = 3 / (zoom > 0 ? zoom : 1.0);
    int found = -1;
    double best = 0;
    const QRectF around(pos - QPointF(slack, slack), QSizeF(2 * slack, 2 * slack));
    m_nodeGrid.forEachIn(around, [&](uint32_t n) {
        const QRectF& b = m_d.boxes[n];
        const double dx = std::max({b.left() - pos.x(), 0.0, pos.x() - b.right()});
        const double dy = std::max({b.top() - pos.y(), 0.0, pos.y() - b.bottom()});
        const double d = std::max(dx, dy);
        if (d <= slack && (found < 0 || d < best || (d == best && int(n) < found))) {
            found = int(n);
            best = d;
        }
    });
    return found;
}

void GraphCanvas::takeStateFrom(GraphCanvas& old) {
    if (old.nodeCount() != nodeCount() || old.edgeCount() != edgeCount())
        return;
    m_nodeChanges = std::move(old.m_nodeChanges);
    m_nodeColors = std::move(old.m_nodeColors);
    m_edgeChanges = std::move(old.m_edgeChanges);
    m_edgeColors = std::move(old.m_edgeColors);
    m_tips = std::move(old.m_tips);
}

void GraphCanvas::setSelected(int node) {
    m_selected = node;
    update();
}

void GraphCanvas::setMarks(std::vector<Mark> nodes, std::vector<uint8_t> edgesOn, bool any) {
    m_marks = any ? std::move(nodes) : std::vector<Mark>();
    m_edgeOn = any ? std::move(edgesOn) : std::vector<uint8_t>();
    update();
}

GraphCanvas::Mark GraphCanvas::mark(int node) const {
    return node >= 0 && size_t(node) < m_marks.size() ? m_marks[size_t(node)] : Mark::None;
}

void GraphCanvas::setNodeChange(int node, Change change, QColor color) {
    if (node < 0 || node >= nodeCount())
        return;
    m_nodeChanges.resize(m_d.boxes.size(), Change::None);
    m_nodeColors.resize(m_d.boxes.size(), 0);
    m_nodeChanges[size_t(node)] = change;
    m_nodeColors[size_t(node)] = color.rgba();
    update();
}

GraphCanvas::Change GraphCanvas::nodeChange(int node) const {
    return node >= 0 && size_t(node) < m_nodeChanges.size() ? m_nodeChanges[size_t(node)]
                                                            : Change::None;
}

void GraphCanvas::setEdgeChange(int edge, Change change, QColor color) {
    if (edge < 0 || edge >= edgeCount())
        return;
    m_edgeChanges.resize(size_t(edgeCount()), Change::None);
    m_edgeColors.resize(size_t(edgeCount()), 0);
    m_edgeChanges[size_t(edge)] = change;
    m_edgeColors[size_t(edge)] = color.rgba();
    update();
}

GraphCanvas::Change GraphCanvas::edgeChange(int edge) const {
    return edge >= 0 && size_t(edge) < m_edgeChanges.size() ? m_edgeChanges[size_t(edge)]
                                                            : Change::None;
}

QString GraphCanvas::toolTipOf(int node) const {
    if (node < 0 || node >= nodeCount())
        return {};
    const auto it = m_tips.constFind(node);
    return it != m_tips.constEnd() ? *it : m_d.toolTip ? m_d.toolTip(node) : QString();
}

QRectF GraphCanvas::boundingRect() const {
    return m_d.bounds.adjusted(-kMargin, -kMargin, kMargin, kMargin);
}

double GraphCanvas::viewZoom() const {
    const QList<QGraphicsView*> views = scene() ? scene()->views() : QList<QGraphicsView*>();
    return views.isEmpty() ? 1.0 : views.first()->transform().m11();
}

void GraphCanvas::hoverMoveEvent(QGraphicsSceneHoverEvent* event) {
    const int node = nodeAt(event->scenePos(), viewZoom());
    setToolTip(node < 0 && m_otherTip ? m_otherTip(event->scenePos()) : toolTipOf(node));
}

void GraphCanvas::mousePressEvent(QGraphicsSceneMouseEvent* event) {
    const int node = event->button() == Qt::LeftButton ? nodeAt(event->scenePos(), viewZoom()) : -1;
    if (node < 0) {
        event->ignore(); // the view pans instead (and the scene clears the selection)
        return;
    }
    if (m_clicked)
        m_clicked(node);
    event->accept();
}

void GraphCanvas::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    // Thinned on screen and in the minimap; an export or --render draws
    // every node (setDrawEveryNode).
    m_thin = !m_everyNode;
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    const QRectF exposed = option->exposedRect.isEmpty() ? boundingRect() : option->exposedRect;
    paintEdges(painter, option, exposed, lod);
    paintNodes(painter, option, exposed, lod);
}

QPen GraphCanvas::edgePen(const QStyleOptionGraphicsItem* option, int e, double lod) const {
    const bool highlighted = !m_edgeOn.empty() && m_edgeOn[size_t(e)];
    const bool dimmed = !m_edgeOn.empty() && !highlighted;
    const Change change = edgeChange(e);
    const bool reversed = m_d.reversed[size_t(e)] != 0;
    QColor color = option->palette.color(QPalette::Text);
    // Thousands of edges on a few pixels would paint the nodes over: fainter
    // the further out.
    color.setAlpha(dimmed ? 35 : lod < 0.1 ? 60 : 150);
    if (reversed)
        color = QColor(220, 40, 40, dimmed ? 60 : 220);
    if (isChange(change)) {
        color = QColor::fromRgba(m_edgeColors[size_t(e)]);
        color.setAlpha(dimmed ? 60 : 230);
    }
    if (highlighted)
        color = QColor(230, 170, 0);
    QPen pen(color, highlighted || isChange(change) ? 2.5 : 1.2);
    pen.setCosmetic(lod < 0.5); // thin hairlines when zoomed out: cheap and legible
    if (reversed)
        pen.setStyle(Qt::DashLine);
    if (change == Change::Removed)
        pen.setStyle(Qt::DotLine);
    else if (change == Change::Changed)
        pen.setStyle(Qt::DashDotLine);
    else if (change == Change::Added)
        pen.setStyle(Qt::SolidLine);
    return pen;
}

std::vector<int> GraphCanvas::itemsIn(const GraphGrid& grid, int count, const QRectF& rect,
                                      const std::vector<int>& shown) const {
    std::vector<int> items;
    if (rect.contains(boundingRect())) { // the whole graph: no grid, no sorting
        if (m_partial)                   // some not drawn (collapsed groups): those that are
            return shown;
        items.resize(size_t(std::max(0, count)));
        std::iota(items.begin(), items.end(), 0);
        return items;
    }
    grid.forEachIn(rect, [&](uint32_t i) { items.push_back(int(i)); });
    std::sort(items.begin(), items.end()); // the same order in every frame
    return items;
}

void GraphCanvas::paintEdges(QPainter* painter, const QStyleOptionGraphicsItem* option,
                             const QRectF& exposed, double lod) const {
    // Three layers, as the items' z order was: plain, changed, highlighted.
    std::vector<int> layers[3];
    for (const int e :
         itemsIn(m_edgeGrid, edgeCount(), exposed.adjusted(-8, -8, 8, 8), m_shownEdges)) {
        const bool on = !m_edgeOn.empty() && m_edgeOn[size_t(e)];
        layers[on ? 2 : isChange(edgeChange(e)) ? 1 : 0].push_back(e);
    }
    // Zoomed far out, antialiasing thousands of sub-pixel lines is most of a
    // frame and shows nothing.
    painter->setRenderHint(QPainter::Antialiasing, lod >= 0.1);
    for (const std::vector<int>& layer : layers) {
        if (lod < 0.4) { // no arrow heads: lines batched per pen
            paintLines(painter, option, layer, lod);
            continue;
        }
        for (const int e : layer) {
            const QPolygonF route = edgeRoute(e);
            if (route.size() < 2)
                continue;
            const QPen pen = edgePen(option, e, lod);
            painter->setPen(pen);
            painter->setBrush(Qt::NoBrush);
            painter->drawPolyline(route);
            // Arrow head at the target along the last segment.
            const QPointF tip = route.last();
            const QPointF from = route[route.size() - 2];
            const qreal angle = std::atan2(tip.y() - from.y(), tip.x() - from.x());
            const qreal size = 7;
            const QPointF left =
                tip - QPointF(std::cos(angle - 0.45) * size, std::sin(angle - 0.45) * size);
            const QPointF right =
                tip - QPointF(std::cos(angle + 0.45) * size, std::sin(angle + 0.45) * size);
            painter->setBrush(pen.color());
            painter->setPen(Qt::NoPen);
            painter->drawPolygon(QPolygonF({tip, left, right}));
        }
    }
}

void GraphCanvas::paintLines(QPainter* painter, const QStyleOptionGraphicsItem* option,
                             const std::vector<int>& edges, double lod) const {
    // Batches by what decides an edge's pen, so a pen is made per batch, not
    // per edge.
    std::vector<std::pair<QPen, QVector<QLineF>>> batches;
    std::unordered_map<uint64_t, size_t> batchOf;
    const PixelMask mask(painter, m_thin);
    std::unordered_set<uint64_t> drawn; // far out: one line per pair of end pixels
    auto key = [](QPoint v) {
        return uint64_t(uint32_t(v.x()) & 0xffff) << 16 | (uint32_t(v.y()) & 0xffff);
    };
    for (const int e : edges) {
        const uint32_t a = m_d.edgeStart[size_t(e)], b = m_d.edgeStart[size_t(e) + 1];
        if (b - a < 2)
            continue;
        const bool far = lod < 0.05;
        if (far) {
            // Bends are under a pixel: one straight segment, none within a
            // pixel (the node blocks cover it), one per pair of end pixels.
            const QPoint p = mask.pixel(m_d.points[a]), q = mask.pixel(m_d.points[b - 1]);
            if (mask.on() && (p == q || !drawn.insert(key(p) << 32 | key(q)).second))
                continue;
        }
        const Change change = edgeChange(e);
        const uint64_t style = uint64_t(isChange(change) ? m_edgeColors[size_t(e)] : 0) << 16 |
                               uint64_t(change) << 8 | uint64_t(m_d.reversed[size_t(e)]) << 2 |
                               uint64_t(m_edgeOn.empty() ? 0 : 1 + m_edgeOn[size_t(e)]);
        const auto [it, fresh] = batchOf.try_emplace(style, batches.size());
        if (fresh)
            batches.push_back({edgePen(option, e, lod), {}});
        QVector<QLineF>& lines = batches[it->second].second;
        if (far)
            lines << QLineF(m_d.points[a], m_d.points[b - 1]);
        else
            for (uint32_t k = a; k + 1 < b; ++k)
                lines << QLineF(m_d.points[k], m_d.points[k + 1]);
    }
    for (const auto& [pen, lines] : batches) {
        painter->setPen(pen);
        painter->drawLines(lines);
    }
}

QColor GraphCanvas::nodeFill(int n) const {
    QColor fill = opFamilyColor(m_d.families[size_t(n)]);
    const Change change = nodeChange(n);
    if (change == Change::Same || change == Change::Removed) // what changed stands out
        fill = QColor::fromHsvF(fill.hsvHueF(), fill.hsvSaturationF() * 0.35,
                                std::min(1.0, fill.valueF() * 1.05));
    if (mark(n) == Mark::Dimmed)
        fill.setAlpha(60);
    return fill;
}

void GraphCanvas::paintNodes(QPainter* painter, const QStyleOptionGraphicsItem* option,
                             const QRectF& exposed, double lod) const {
    // Far out a block grows to 2 pixels: look that much further.
    const double reach = kMargin + (lod > 0 ? 2 / lod : 0);
    const std::vector<int> visible = itemsIn(
        m_nodeGrid, nodeCount(), exposed.adjusted(-reach, -reach, reach, reach), m_shownNodes);
    if (lod < 0.25) { // far away: a plain block is all the eye can use
        paintBlocks(painter, visible, lod);
        return;
    }
    painter->setRenderHint(QPainter::Antialiasing, true);
    for (const int n : visible)
        paintBox(painter, option, n, lod);
}

void GraphCanvas::paintBlocks(QPainter* painter, const std::vector<int>& nodes, double lod) const {
    // Blocks batched per colour: a handful of fills for the whole graph.
    // Marked nodes (selected, highlighted) are drawn last and never thinned
    // away: they are what the user looks for.
    std::vector<std::pair<QRgb, QVector<QRectF>>> batches[2];
    std::unordered_map<QRgb, size_t> batchOf[2];
    PixelMask mask(painter, m_thin);
    for (const int n : nodes) {
        // At the zoom that fits thousands of nodes a block would be under a
        // pixel and vanish: keep it at least 2 pixels, so the whole graph
        // still shows its op families.
        QRectF block = m_d.boxes[size_t(n)];
        if (lod > 0 && (block.width() * lod < 2 || block.height() * lod < 2)) {
            const double side = 2 / lod;
            const QPointF centre = block.center();
            block.setSize(QSizeF(std::max(block.width(), side), std::max(block.height(), side)));
            block.moveCenter(centre);
        }
        QColor fill = nodeFill(n);
        if (isChange(nodeChange(n))) // from afar the status is what the eye looks for
            fill = QColor::fromRgba(m_nodeColors[size_t(n)]);
        const bool marked = n == m_selected || mark(n) == Mark::Highlighted;
        if (marked)
            fill = fill.lighter(140);
        else if (block.width() * lod <= 3 && block.height() * lod <= 3 &&
                 !mask.claim(mask.pixel(block.center())))
            continue; // a pixel already painted
        const auto [it, fresh] = batchOf[marked].try_emplace(fill.rgba(), batches[marked].size());
        if (fresh)
            batches[marked].push_back({fill.rgba(), {}});
        batches[marked][it->second].second << block;
    }
    painter->setRenderHint(QPainter::Antialiasing, false);
    painter->setPen(Qt::NoPen);
    for (const auto& layer : batches)
        for (const auto& [rgba, blocks] : layer) {
            painter->setBrush(QColor::fromRgba(rgba));
            painter->drawRects(blocks);
        }
}

void GraphCanvas::paintChange(QPainter* painter, int node, const QRectF& box) const {
    // Outline by status, then the badge: shape and glyph besides the colour.
    const Change change = nodeChange(node);
    const QColor color = QColor::fromRgba(m_nodeColors[size_t(node)]);
    QPen pen(color, 3);
    if (change == Change::Removed) {
        pen.setStyle(Qt::DashLine);
        painter->setBrush(QBrush(QColor(80, 80, 80, 110), Qt::BDiagPattern));
    } else {
        painter->setBrush(Qt::NoBrush);
    }
    painter->setPen(pen);
    painter->drawRoundedRect(box, 5, 5);
    if (change == Change::Changed) { // a double outline
        painter->setPen(QPen(color, 1.5));
        painter->setBrush(Qt::NoBrush);
        painter->drawRoundedRect(box.adjusted(4, 4, -4, -4), 3, 3);
    }
    const QRectF badge(box.right() - kBadge / 2, box.top() - kBadge / 2, kBadge, kBadge);
    painter->setPen(QPen(Qt::white, 1.5)); // a ring that parts it from any fill
    painter->setBrush(color);
    painter->drawEllipse(badge);
    painter->setPen(QPen(Qt::white, 2.2, Qt::SolidLine, Qt::RoundCap));
    const QPointF c = badge.center();
    const double r = kBadge * 0.28;
    if (change == Change::Changed) { // ~
        QPainterPath wave(c - QPointF(r, -1));
        wave.cubicTo(c + QPointF(-r / 2, -r - 1), c + QPointF(r / 2, r + 1), c + QPointF(r, -1));
        painter->setBrush(Qt::NoBrush);
        painter->drawPath(wave);
        return;
    }
    painter->drawLine(c - QPointF(r, 0), c + QPointF(r, 0)); // −
    if (change == Change::Added)
        painter->drawLine(c - QPointF(0, r), c + QPointF(0, r)); // +
}

void GraphCanvas::paintBox(QPainter* painter, const QStyleOptionGraphicsItem* option, int n,
                           double lod) const {
    const QRectF& box = m_d.boxes[size_t(n)];
    QColor fill = nodeFill(n);
    const Mark m = mark(n);
    const bool selected = n == m_selected;
    // Outline tells the state: solid dark = backward done, dashed = forward
    // only, dotted grey = pending.
    QPen pen;
    switch (m_d.states[size_t(n)]) {
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
    const uint8_t flags = m_d.flags[size_t(n)];
    if (flags & Problem)
        pen = QPen(QColor(220, 40, 40), 2.5, Qt::DashDotLine);
    if (flags & Loss)
        pen = QPen(QColor(220, 40, 40), 3.5);
    if (m == Mark::Highlighted)
        pen = QPen(QColor(255, 200, 0), 3.5);
    if (selected)
        pen = QPen(option->palette.color(QPalette::Highlight), 4);
    painter->setPen(pen);
    painter->setBrush(fill);
    painter->drawRoundedRect(box, 5, 5);
    if (isChange(nodeChange(n)))
        // Around the selection or highlight outline when there is one.
        paintChange(painter, n,
                    selected || m == Mark::Highlighted ? box.adjusted(-3, -3, 3, 3) : box);
    if (lod < 0.5 || !m_d.label)
        return;
    painter->setPen(m == Mark::Dimmed ? QColor(0, 0, 0, 90) : QColor(Qt::black));
    painter->drawText(box, Qt::AlignCenter, m_d.label(n));
}
