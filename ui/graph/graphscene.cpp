#include "graph/graphscene.h"

#include "common/plaintext.h"
#include "graph/graphedgeitem.h"
#include "graph/graphnodeitem.h"

#include <QFontMetrics>
#include <QGuiApplication>

#include <unordered_set>

using namespace ckptscope;

GraphScene::GraphScene(QObject* parent) : QGraphicsScene(parent) {
    setItemIndexMethod(QGraphicsScene::BspTreeIndex);
}

GraphLayoutInput GraphScene::layoutInput(const ComputationGraphStore& graph) {
    const QFontMetrics fm(QGuiApplication::font());
    return layoutInputFromGraph(
        graph,
        [&fm](const ComputationNode& n) {
            return double(fm.horizontalAdvance(QString::fromStdString(n.op)) + 20);
        },
        double(fm.height() + 14));
}

void GraphScene::clearGraph() {
    clear(); // deletes the items
    setSceneRect(QRectF());
    m_nodes.clear();
    m_edges.clear();
    m_highlighted.clear();
    m_focus = -1;
    m_layout.reset();
    m_index.reset();
    m_checkpoint.reset();
}

QPointF GraphScene::map(double x, double y) const {
    // Left-right is the top-down drawing mirrored over the diagonal.
    return m_orientation == Orientation::TopDown ? QPointF(x, y) : QPointF(y, x);
}

void GraphScene::build(std::shared_ptr<const GradientCheckpoint> checkpoint,
                       std::shared_ptr<const GraphIndex> index,
                       std::shared_ptr<const GraphLayout> layout, Orientation orientation) {
    clearGraph();
    m_checkpoint = std::move(checkpoint);
    m_index = std::move(index);
    m_layout = std::move(layout);
    m_orientation = orientation;
    const ComputationGraphStore& graph = m_checkpoint->graph;
    const ComputationNode* loss = m_checkpoint->lossNode();
    const auto cycle = graph.cycleNodes(); // node keys, like m_index's ids
    const std::unordered_set<std::string> onCycle(cycle.begin(), cycle.end());

    m_nodes.reserve(m_layout->nodes.size());
    for (size_t i = 0; i < m_layout->nodes.size(); ++i) {
        const LayoutNode& ln = m_layout->nodes[i];
        const ComputationNode* node = graph.getNode(m_index->id(int(i)));
        const QString op = node ? QString::fromStdString(node->op) : QString();
        GraphNodeItem::State state = GraphNodeItem::State::Pending;
        if (node && node->gradientCid)
            state = GraphNodeItem::State::BackwardDone;
        else if (node && node->outputCid)
            state = GraphNodeItem::State::ForwardDone;
        // Left-right layouts run with width and height swapped (see GraphPage).
        const QSizeF size = m_orientation == Orientation::TopDown ? QSizeF(ln.width, ln.height)
                                                                  : QSizeF(ln.height, ln.width);
        auto* item = new GraphNodeItem(int(i), op, opFamily(op), state, size);
        item->setPos(map(ln.x, ln.y));
        item->setLoss(loss && node == loss);
        item->setProblem(onCycle.count(m_index->id(int(i))) > 0);
        item->setToolTip(
            plainToolTip(op + QStringLiteral("\n") + QString::fromStdString(m_index->id(int(i)))));
        addItem(item);
        m_nodes.push_back(item);
    }
    m_edges.reserve(m_layout->edges.size());
    for (const LayoutEdge& e : m_layout->edges) {
        QPolygonF route;
        route.reserve(qsizetype(e.points.size()));
        for (const auto& [x, y] : e.points)
            route << map(x, y);
        auto* item = new GraphEdgeItem(route, e.reversed ? GraphEdgeItem::Kind::Reversed
                                                         : GraphEdgeItem::Kind::Normal);
        addItem(item);
        m_edges.push_back(item);
    }
    const QRectF box(QPointF(0, 0), m_orientation == Orientation::TopDown
                                        ? QSizeF(m_layout->width, m_layout->height)
                                        : QSizeF(m_layout->height, m_layout->width));
    setSceneRect(box.adjusted(-40, -40, 40, 40));
}

GraphNodeItem* GraphScene::nodeItem(int index) const {
    return index >= 0 && size_t(index) < m_nodes.size() ? m_nodes[size_t(index)] : nullptr;
}

GraphEdgeItem* GraphScene::edgeItem(int e) const {
    return e >= 0 && size_t(e) < m_edges.size() ? m_edges[size_t(e)] : nullptr;
}

int GraphScene::selectedNode() const {
    for (QGraphicsItem* item : selectedItems())
        if (auto* node = dynamic_cast<GraphNodeItem*>(item))
            return node->index();
    return -1;
}

void GraphScene::selectNode(int index) {
    GraphNodeItem* item = nodeItem(index);
    if (!item || item->isSelected())
        return;
    clearSelection();
    item->setSelected(true);
}

void GraphScene::highlight(const std::vector<int>& nodes, int focus) {
    m_highlighted = nodes;
    m_focus = nodes.empty() ? -1 : focus;
    std::vector<char> marked(m_nodes.size(), 0);
    // The node list and inspector work before the drawing exists (during a
    // layout, or after a cancelled one): ignore nodes not drawn.
    for (int n : nodes)
        if (n >= 0 && size_t(n) < marked.size())
            marked[size_t(n)] = 1;
    if (focus >= 0 && size_t(focus) < marked.size())
        marked[size_t(focus)] = 2;
    const bool any = !nodes.empty();
    for (size_t i = 0; i < m_nodes.size(); ++i)
        m_nodes[i]->setMark(!any             ? GraphNodeItem::Mark::None
                            : marked[i] == 1 ? GraphNodeItem::Mark::Highlighted
                            : marked[i] == 2 ? GraphNodeItem::Mark::None
                                             : GraphNodeItem::Mark::Dimmed);
    for (size_t e = 0; e < m_edges.size(); ++e) {
        const LayoutEdge& le = m_layout->edges[e];
        const bool on = any && marked[le.from] && marked[le.to];
        m_edges[e]->setHighlighted(on);
        m_edges[e]->setDimmed(any && !on);
    }
}
