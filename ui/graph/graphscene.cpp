#include "graph/graphscene.h"

#include "common/plaintext.h"

#include <QFontMetrics>
#include <QGraphicsSceneMouseEvent>
#include <QGuiApplication>

#include <string_view>
#include <unordered_map>

using namespace ckptscope;

GraphScene::GraphScene(QObject* parent) : QGraphicsScene(parent) {
    setItemIndexMethod(QGraphicsScene::NoIndex); // one item; the canvas has its own grid
}

namespace {
// Label widths by op: a graph has a handful of distinct ops, and measuring
// text (shaping) 100k times was most of the layout's input.
class LabelWidths {
public:
    explicit LabelWidths(const QFontMetrics& fm) : m_fm(fm) {}
    double operator()(const std::string& op) {
        const auto [it, fresh] = m_widths.try_emplace(op, 0.0);
        if (fresh)
            it->second = double(m_fm.horizontalAdvance(QString::fromStdString(op)) + 20);
        return it->second;
    }

private:
    const QFontMetrics& m_fm;
    std::unordered_map<std::string_view, double> m_widths; // views of the graph's ops
};
double nodeHeight(const QFontMetrics& fm) {
    return double(fm.height() + 14);
}
} // namespace

GraphLayoutInput GraphScene::layoutInput(const ComputationGraphStore& graph) {
    const QFontMetrics fm(QGuiApplication::font());
    LabelWidths widthOf(fm);
    return layoutInputFromGraph(
        graph, [&widthOf](const ComputationNode& n) { return widthOf(n.op); }, nodeHeight(fm));
}

LayoutInput GraphScene::layoutInput(const GraphIndex& index,
                                    std::vector<std::pair<uint32_t, uint32_t>> edges) {
    const QFontMetrics fm(QGuiApplication::font());
    LayoutInput input;
    input.edges = std::move(edges);
    input.widths.reserve(size_t(index.size()));
    LabelWidths widthOf(fm);
    const std::string none;
    for (int i = 0; i < index.size(); ++i) {
        const ComputationNode* node = index.node(i);
        input.widths.push_back(widthOf(node ? node->op : none));
    }
    input.heights.assign(size_t(index.size()), nodeHeight(fm));
    return input;
}

void GraphScene::clearGraph() {
    clear(); // deletes the canvas and the groups
    m_canvas = nullptr;
    m_groupLayer = nullptr;
    m_collapsed.reset();
    m_looks.reset();
    m_groupInfo.clear();
    setSceneRect(QRectF());
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

GraphCanvas::Drawing GraphScene::looks() const {
    // An index made without its graph finds nodes by id.
    auto nodeOf = [index = m_index, checkpoint = m_checkpoint](int i) {
        return index->hasGraph() ? index->node(i) : checkpoint->graph.getNode(index->id(i));
    };
    const ComputationNode* loss = m_checkpoint->lossNode();
    const size_t n = m_layout->nodes.size();
    std::vector<char> onCycle(n, 0);
    if (m_index->hasGraph()) { // the index's list ends with the nodes on cycles
        const std::vector<int>& order = m_index->listOrder();
        for (size_t r = m_index->orderedCount(); r < order.size(); ++r)
            if (order[r] >= 0 && size_t(order[r]) < n)
                onCycle[size_t(order[r])] = 1;
    } else {
        for (const std::string& id : m_checkpoint->graph.cycleNodes()) // node keys, like ids
            if (const int i = m_index->indexOf(id); i >= 0 && size_t(i) < n)
                onCycle[size_t(i)] = 1;
    }
    // A graph has a handful of distinct ops: each recognised once.
    std::unordered_map<std::string_view, OpFamily> familyOf;
    GraphCanvas::Drawing d;
    d.families.reserve(n);
    d.states.reserve(n);
    d.flags.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        const ComputationNode* node = nodeOf(int(i));
        OpFamily family = OpFamily::Other;
        if (node) {
            const auto [it, fresh] = familyOf.try_emplace(node->op, OpFamily::Other);
            if (fresh)
                it->second = opFamily(QString::fromStdString(node->op));
            family = it->second;
        }
        d.families.push_back(family);
        d.states.push_back(node && node->gradientCid ? GraphCanvas::State::BackwardDone
                           : node && node->outputCid ? GraphCanvas::State::ForwardDone
                                                     : GraphCanvas::State::Pending);
        d.flags.push_back(uint8_t((loss && node == loss ? GraphCanvas::Loss : 0) |
                                  (onCycle[i] ? GraphCanvas::Problem : 0)));
    }
    // Labels and tooltips are made when drawn, for the few nodes in view.
    d.label = [nodeOf](int i) {
        const ComputationNode* node = nodeOf(i);
        return node ? QString::fromStdString(node->op) : QString();
    };
    d.toolTip = [nodeOf, index = m_index](int i) {
        const ComputationNode* node = nodeOf(i);
        return plainToolTip((node ? QString::fromStdString(node->op) : QString()) +
                            QStringLiteral("\n") + QString::fromStdString(index->id(i)));
    };
    return d;
}

GraphCanvas::Drawing GraphScene::drawing() {
    // A grouped graph is drawn again at every expansion: what does not
    // depend on the positions is worked out once.
    if (m_collapsed && !m_looks)
        m_looks = std::make_unique<GraphCanvas::Drawing>(looks());
    GraphCanvas::Drawing d = m_looks ? *m_looks : looks();
    const size_t n = m_layout->nodes.size();
    d.boxes.reserve(n);
    for (const LayoutNode& ln : m_layout->nodes) {
        // Left-right layouts run with width and height swapped (see GraphPage).
        const QSizeF size = m_orientation == Orientation::TopDown ? QSizeF(ln.width, ln.height)
                                                                  : QSizeF(ln.height, ln.width);
        QRectF box(QPointF(), size);
        box.moveCenter(map(ln.x, ln.y));
        d.boxes.push_back(box);
    }
    d.edgeStart.reserve(m_layout->edges.size() + 1);
    d.reversed.reserve(m_layout->edges.size());
    d.edgeStart.push_back(0);
    for (const LayoutEdge& e : m_layout->edges) {
        for (const auto& [x, y] : e.points)
            d.points.push_back(map(x, y));
        d.edgeStart.push_back(uint32_t(d.points.size()));
        d.reversed.push_back(e.reversed ? 1 : 0);
    }
    d.bounds = QRectF(QPointF(0, 0), m_orientation == Orientation::TopDown
                                         ? QSizeF(m_layout->width, m_layout->height)
                                         : QSizeF(m_layout->height, m_layout->width));
    return d;
}

void GraphScene::build(std::shared_ptr<const GradientCheckpoint> checkpoint,
                       std::shared_ptr<const GraphIndex> index,
                       std::shared_ptr<const GraphLayout> layout, Orientation orientation) {
    clearGraph();
    m_checkpoint = std::move(checkpoint);
    m_index = std::move(index);
    m_layout = std::move(layout);
    m_orientation = orientation;
    addCanvas(nullptr);
}

void GraphScene::addCanvas(GraphCanvas* previous) {
    m_canvas = new GraphCanvas(drawing(), [this](int node) { selectNode(node); });
    if (previous)
        m_canvas->takeStateFrom(*previous);
    addItem(m_canvas);
    QRectF area = m_canvas->boundingRect();
    if (m_groupLayer) {
        area |= m_groupLayer->boundingRect();
        m_canvas->setOtherToolTip([this](QPointF pos) {
            const int g = m_groupLayer ? m_groupLayer->groupContaining(pos) : -1;
            return g >= 0 ? m_groupLayer->group(g).toolTip : QString();
        });
    }
    setSceneRect(area.adjusted(-30, -30, 30, 30));
}

void GraphScene::buildGrouped(std::shared_ptr<const GradientCheckpoint> checkpoint,
                              std::shared_ptr<const GraphIndex> index,
                              std::shared_ptr<const CollapsedLayout> collapsed,
                              std::vector<GroupInfo> groups, Orientation orientation) {
    clearGraph();
    m_checkpoint = std::move(checkpoint);
    m_index = std::move(index);
    m_collapsed = std::move(collapsed);
    m_groupInfo = std::move(groups);
    m_orientation = orientation;
    rebuildGroups();
}

void GraphScene::rebuildGroups() {
    if (!m_collapsed)
        return;
    const int selected = selectedNode();
    GraphCanvas* previous = m_canvas;
    if (previous)
        removeItem(previous);
    delete m_groupLayer;
    m_groupLayer = nullptr;
    CollapsedLayout::Drawing d = m_collapsed->compose();
    m_layout = std::make_shared<const GraphLayout>(std::move(d.layout));
    addGroupLayer(d);
    addCanvas(previous);
    delete previous;
    if (selected >= 0 && !nodeRect(selected).isEmpty())
        m_canvas->setSelected(selected);
    if (!m_highlighted.empty())
        highlight(std::vector<int>(m_highlighted), m_focus);
}

void GraphScene::addGroupLayer(const CollapsedLayout::Drawing& d) {
    const double title = CollapsedLayout::Options().title;
    std::vector<GraphGroupLayer::Group> groups;
    groups.reserve(d.groups.size());
    for (size_t g = 0; g < d.groups.size(); ++g) {
        const CollapsedLayout::Group& cg = d.groups[g];
        GraphGroupLayer::Group group;
        group.box =
            QRectF(QPointF(), m_orientation == Orientation::TopDown ? QSizeF(cg.width, cg.height)
                                                                    : QSizeF(cg.height, cg.width));
        group.box.moveCenter(map(cg.x, cg.y));
        group.title = m_orientation == Orientation::TopDown
                          ? QRectF(group.box.topLeft(), QSizeF(group.box.width(), title))
                          : QRectF(group.box.topLeft(), QSizeF(title, group.box.height()));
        group.expanded = cg.expanded;
        if (g < m_groupInfo.size()) {
            group.label = m_groupInfo[g].label;
            group.toolTip = m_groupInfo[g].toolTip;
            group.family = m_groupInfo[g].family;
        }
        groups.push_back(std::move(group));
    }
    std::vector<GraphGroupLayer::Bundle> bundles;
    bundles.reserve(d.bundles.size());
    for (const CollapsedLayout::Bundle& b : d.bundles) {
        GraphGroupLayer::Bundle bundle;
        for (const auto& [x, y] : b.points)
            bundle.route << map(x, y);
        bundle.count = b.count;
        bundle.fromNode = b.fromNode;
        bundle.toNode = b.toNode;
        bundle.fromGroup = b.fromGroup;
        bundle.toGroup = b.toGroup;
        bundles.push_back(std::move(bundle));
    }
    // Queued: the layer is replaced when a group expands, not during its
    // own event handler.
    m_groupLayer = new GraphGroupLayer(std::move(groups), std::move(bundles), [this](int g) {
        QMetaObject::invokeMethod(
            this, [this, g] { Q_EMIT groupActivated(g); }, Qt::QueuedConnection);
    });
    addItem(m_groupLayer);
}

void GraphScene::markGroups(const std::vector<char>& marked, bool any) {
    if (!m_groupLayer || !m_collapsed)
        return;
    if (!any) {
        m_groupLayer->setMarks({}, {});
        return;
    }
    // A collapsed group is marked when any of its nodes is; a bundle when
    // both its ends are.
    const NodeGrouping& grouping = m_collapsed->grouping();
    std::vector<char> groupMarked(grouping.groupCount(), 0);
    for (size_t v = 0; v < marked.size(); ++v)
        if (marked[v])
            groupMarked[grouping.groupOf[v]] = 1;
    using GroupMark = GraphGroupLayer::Mark;
    std::vector<GroupMark> groups(grouping.groupCount(), GroupMark::None);
    for (uint32_t g = 0; g < grouping.groupCount(); ++g)
        if (!m_collapsed->isExpanded(g))
            groups[g] = groupMarked[g] ? GroupMark::Highlighted : GroupMark::Dimmed;
    auto endMarked = [&](int node, uint32_t group) {
        return node >= 0 ? marked[size_t(node)] != 0 : groupMarked[group] != 0;
    };
    std::vector<GroupMark> bundles(size_t(m_groupLayer->bundleCount()), GroupMark::Dimmed);
    for (int b = 0; b < m_groupLayer->bundleCount(); ++b) {
        const GraphGroupLayer::Bundle& bundle = m_groupLayer->bundle(b);
        if (endMarked(bundle.fromNode, bundle.fromGroup) &&
            endMarked(bundle.toNode, bundle.toGroup))
            bundles[size_t(b)] = GroupMark::Highlighted;
    }
    m_groupLayer->setMarks(std::move(groups), std::move(bundles));
}

void GraphScene::mousePressEvent(QGraphicsSceneMouseEvent* event) {
    QGraphicsScene::mousePressEvent(event);
    // No node took it (empty space, inside the drawing or past its edge).
    if (!event->isAccepted() && event->button() == Qt::LeftButton)
        selectNode(-1);
}

void GraphScene::setNodeChange(int node, Change change, const QColor& color) {
    if (m_canvas)
        m_canvas->setNodeChange(node, change, color);
}

void GraphScene::setEdgeChange(int edge, Change change, const QColor& color) {
    if (m_canvas)
        m_canvas->setEdgeChange(edge, change, color);
}

void GraphScene::setNodeToolTip(int node, const QString& tip) {
    if (m_canvas)
        m_canvas->setToolTipOf(node, tip);
}

void GraphScene::selectNode(int index) {
    if (!m_canvas || index >= m_canvas->nodeCount())
        return;
    index = std::max(index, -1);
    if (index == m_canvas->selected())
        return;
    m_canvas->setSelected(index);
    Q_EMIT selectedNodeChanged(index);
}

void GraphScene::highlight(const std::vector<int>& nodes, int focus) {
    m_highlighted = nodes;
    m_focus = nodes.empty() ? -1 : focus;
    if (!m_canvas)
        return;
    const size_t count = size_t(m_canvas->nodeCount());
    std::vector<char> marked(count, 0);
    // The node list and inspector work before the drawing exists (during a
    // layout, or after a cancelled one): ignore nodes not drawn.
    for (int n : nodes)
        if (n >= 0 && size_t(n) < count)
            marked[size_t(n)] = 1;
    if (focus >= 0 && size_t(focus) < count)
        marked[size_t(focus)] = 2;
    const bool any = !nodes.empty();
    std::vector<Mark> marks(count, Mark::Dimmed);
    for (size_t i = 0; i < count; ++i)
        marks[i] = marked[i] == 1 ? Mark::Highlighted : marked[i] == 2 ? Mark::None : Mark::Dimmed;
    markGroups(marked, any);
    std::vector<uint8_t> edgesOn(m_layout->edges.size(), 0);
    for (size_t e = 0; e < edgesOn.size(); ++e) {
        const LayoutEdge& le = m_layout->edges[e];
        edgesOn[e] = marked[le.from] && marked[le.to] ? 1 : 0;
    }
    m_canvas->setMarks(std::move(marks), std::move(edgesOn), any);
}
