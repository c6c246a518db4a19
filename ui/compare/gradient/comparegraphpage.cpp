#include "compare/gradient/comparegraphpage.h"
#include "widgets/wrapanywherelabel.h"

#include "common/plaintext.h"
#include "compare/comparetensormodel.h"
#include "compare/gradient/comparechanges.h"
#include "compare/gradient/comparenodemodel.h"
#include "graph/graphpage.h"
#include "graph/graphscene.h"
#include "graph/graphview.h"
#include "widgets/wrapanywheredelegate.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScopeGuard>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

using namespace ckptscope;

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

// GraphScene::Change, for nodes and edges alike.
template <typename Change> Change changeOf(DiffStatus s) {
    switch (s) {
    case DiffStatus::Changed:
    case DiffStatus::ShapeChanged:
    case DiffStatus::DtypeChanged:
        return Change::Changed;
    case DiffStatus::Added:
        return Change::Added;
    case DiffStatus::Removed:
        return Change::Removed;
    case DiffStatus::Same:
    case DiffStatus::Tied:
        break;
    }
    return Change::Same;
}

// Status icon and word, with how the drawing shows it (not by colour alone).
QWidget* legend() {
    auto* w = new QWidget;
    auto* row = new QHBoxLayout(w);
    row->setContentsMargins(4, 0, 4, 0);
    const std::pair<DiffStatus, QString> entries[] = {
        {DiffStatus::Added, QObject::tr("added: + badge, solid outline")},
        {DiffStatus::Removed, QObject::tr("removed: − badge, dashed outline, hatched")},
        {DiffStatus::Changed, QObject::tr("changed: ~ badge, double outline")},
        {DiffStatus::Same, QObject::tr("same: faded")},
    };
    for (const auto& [status, text] : entries) {
        auto* icon = new QLabel;
        icon->setPixmap(CompareTensorModel::statusIcon(status).pixmap(16, 16));
        row->addWidget(icon);
        auto* label = new QLabel(text);
        label->setObjectName(QStringLiteral("legend-") + q(diffStatusName(status)));
        row->addWidget(label);
        row->addSpacing(10);
    }
    auto* edges = new QLabel(QObject::tr("Edges: added solid and thick, removed dotted, number "
                                         "of copies changed dash-dotted"));
    row->addWidget(edges);
    row->addStretch(1);
    return w;
}

} // namespace

CompareGraphPage::CompareGraphPage(QStandardItemModel* changes, QWidget* parent)
    : QWidget(parent), m_changes(changes), m_nodeModel(new CompareNodeModel(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(legend());
    auto* split = new QSplitter;
    auto* side = new QSplitter(Qt::Vertical);
    m_list = new QTreeView;
    m_list->setModel(m_changes);
    m_list->setUniformRowHeights(true);
    m_list->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Ids are shown whole; the list scrolls sideways (each item has its
    // status icon, so the status column may be out of sight).
    m_list->setTextElideMode(Qt::ElideNone);
    side->addWidget(m_list);
    auto* nodeBox = new QWidget;
    auto* nodeLayout = new QVBoxLayout(nodeBox);
    nodeLayout->setContentsMargins(0, 0, 0, 0);
    m_nodeTitle = new WrapAnywhereLabel;
    m_nodeTitle->setTextFormat(Qt::PlainText); // ids from the files
    nodeLayout->addWidget(m_nodeTitle);
    m_nodeView = new QTableView;
    m_nodeView->setModel(m_nodeModel);
    m_nodeView->verticalHeader()->hide();
    // Ids and CIDs are long and have no spaces: wrapped anywhere, never cut.
    m_nodeView->setItemDelegate(new WrapAnywhereDelegate(m_nodeView));
    m_nodeView->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_nodeView->horizontalHeader()->setSectionResizeMode(CompareNodeModel::Field,
                                                         QHeaderView::ResizeToContents);
    m_nodeView->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_nodeView->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel); // rows taller than it
    m_nodeView->setWordWrap(true);
    nodeLayout->addWidget(m_nodeView, 1);
    side->addWidget(nodeBox);
    side->setSizes({280, 440});
    split->addWidget(side);
    m_graph = new GraphPage;
    split->addWidget(m_graph);
    split->setStretchFactor(1, 1);
    split->setSizes({380, 900});
    layout->addWidget(split, 1);

    connect(m_list->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (!m_syncing)
                    showChange(current);
            });
    connect(m_graph, &GraphPage::nodeSelected, this, &CompareGraphPage::showNode);
    connect(m_graph, &GraphPage::layoutFinished, this, [this] {
        applyStatuses();
        // The same files compared again: the view as it was, put back once
        // the scroll bars have settled to the new drawing (they would move
        // it once more). A new comparison opens on its first change (in key
        // order), in view but not selected; a re-layout (orientation) keeps
        // what was shown.
        if (const std::optional<KeptView> kept = std::exchange(m_kept, std::nullopt)) {
            QTimer::singleShot(0, this, [this, k = *kept, u = m_union] {
                if (m_union != u)
                    return; // compared again meanwhile
                if (restoreView(k))
                    m_openOnChange = false;
                openOnFirstChange();
                Q_EMIT graphShown();
            });
            return;
        }
        openOnFirstChange();
        Q_EMIT graphShown();
    });
    showNode(-1);
}

CompareGraphPage::~CompareGraphPage() = default;

bool CompareGraphPage::isBusy() const {
    return m_task.isRunning() || m_graph->isLayingOut();
}

QString CompareGraphPage::nodeTitle() const {
    return m_nodeTitle->text();
}

void CompareGraphPage::setResult(std::shared_ptr<const CompareResult> result) {
    // Nothing of the previous comparison stays while the new union is built;
    // where the user was is kept to be put back (a pending one stays).
    if (!m_kept)
        m_kept = currentView();
    if (!result || !result->gradient)
        m_kept.reset();
    m_task.cancel();
    m_result = result && result->gradient ? std::move(result) : nullptr;
    m_union.reset();
    m_graph->setGraph(nullptr);
    m_list->expandAll();
    for (int c = 0; c < m_changes->columnCount(); ++c)
        m_list->resizeColumnToContents(c);
    showNode(-1);
    if (!m_result)
        return;
    m_openOnChange = true;
    const auto r = m_result;
    m_task.start([this, r](BackgroundTask::Run& run) {
        auto u = std::make_shared<const UnionGraph>(
            UnionGraph::build(*r->a->gradient(), *r->b->gradient(), *r->gradient));
        run.finish([this, u, r] {
            m_union = u;
            QStringList notes;
            if (r->gradient->structureMatching)
                notes << tr("Fewer than half of the node ids recur: nodes were matched by op and "
                            "position, and are drawn under B's ids.");
            m_graph->setGraph(std::shared_ptr<const GradientCheckpoint>(u, &u->checkpoint()),
                              notes);
        });
    });
}

std::optional<CompareGraphPage::KeptView> CompareGraphPage::currentView() const {
    const GraphIndex* index = m_graph->index();
    GraphScene* scene = m_graph->scene();
    GraphView* view = m_graph->view();
    if (!m_union || !index || !scene->layout() || scene->nodeCount() == 0)
        return std::nullopt;
    KeptView kept;
    if (const int s = m_graph->selectedNode(); s >= 0)
        kept.selected = index->id(s);
    // The anchor: the node nearest the middle of the view.
    const QPointF middle = view->mapToScene(view->viewport()->rect().center());
    int nearest = -1;
    double best = 0;
    for (int i = 0; i < scene->nodeCount(); ++i) {
        const QPointF d = scene->nodeRect(i).center() - middle;
        const double dist = d.x() * d.x() + d.y() * d.y();
        if (nearest < 0 || dist < best) {
            nearest = i;
            best = dist;
        }
    }
    if (nearest < 0)
        return std::nullopt;
    kept.anchor = index->id(nearest);
    kept.anchorAt = view->mapFromScene(scene->nodeRect(nearest).center());
    kept.zoom = view->zoom();
    return kept;
}

void CompareGraphPage::openOnFirstChange() {
    if (!std::exchange(m_openOnChange, false) || m_graph->selectedNode() >= 0 || !m_union)
        return;
    for (const UnionNode& n : m_union->nodes())
        if (n.status != DiffStatus::Same) {
            m_graph->view()->centerOnRect(
                m_graph->scene()->nodeRect(m_graph->index()->indexOf(n.key)));
            return;
        }
}

bool CompareGraphPage::restoreView(const KeptView& kept) {
    const GraphIndex* index = m_graph->index();
    if (!index)
        return false;
    const int selected = kept.selected.empty() ? -1 : index->indexOf(kept.selected);
    if (selected >= 0)
        m_graph->selectNode(selected, false);
    const int anchor = index->indexOf(kept.anchor);
    if (anchor < 0)
        return selected >= 0;
    m_graph->view()->placeRect(m_graph->scene()->nodeRect(anchor), kept.anchorAt, kept.zoom);
    return true;
}

void CompareGraphPage::applyStatuses() {
    const GraphIndex* index = m_graph->index();
    GraphScene* scene = m_graph->scene();
    if (!m_union || !index || !scene->layout())
        return;
    for (int i = 0; i < scene->nodeCount(); ++i) {
        const UnionNode* n = m_union->node(index->id(i));
        if (!n)
            continue;
        scene->setNodeChange(i, changeOf<GraphScene::Change>(n->status),
                             CompareTensorModel::statusColor(n->status));
        const ComputationNode* node = m_union->checkpoint().graph.getNode(n->key);
        QString tip = (node ? q(node->op) : QString()) + QLatin1Char('\n') + q(n->key) +
                      QLatin1Char('\n') + CompareTensorModel::statusText(n->status);
        if (n->keyA && *n->keyA != n->key)
            tip += tr("\nin A: %1").arg(q(*n->keyA));
        scene->setNodeToolTip(i, plainToolTip(tip));
    }
    const auto& edges = scene->layout()->edges;
    for (int e = 0; e < scene->edgeCount(); ++e) {
        const LayoutEdge& le = edges[size_t(e)];
        const UnionEdge* ue = m_union->edge(index->id(int(le.from)), index->id(int(le.to)));
        if (ue)
            scene->setEdgeChange(e, changeOf<GraphScene::Change>(ue->status),
                                 CompareTensorModel::statusColor(ue->status));
    }
}

void CompareGraphPage::selectKey(const std::string& key) {
    const GraphIndex* index = m_graph->index();
    const int node = index ? index->indexOf(key) : -1;
    if (node >= 0)
        m_graph->selectNode(node); // centres it, and echoes back through nodeSelected
}

void CompareGraphPage::showChange(const QModelIndex& current) {
    if (!m_union || !current.isValid())
        return;
    const QModelIndex first = current.siblingAtColumn(0);
    const QVariant kind = first.data(ChangeKindRole);
    if (!kind.isValid())
        return; // a group row
    const size_t i = size_t(first.data(ChangeIndexRole).toULongLong());
    const GradientDiff& d = *m_result->gradient;
    m_graph->scene()->highlight({});
    m_syncing = true; // the list keeps this row, whatever node gets selected
    const auto done = qScopeGuard([this] { m_syncing = false; });
    switch (ChangeKind(kind.toInt())) {
    case ChangeKind::Node:
        if (const UnionNode* n = m_union->nodeOfDiff(i))
            selectKey(n->key);
        break;
    case ChangeKind::EdgeAdded:
    case ChangeKind::EdgeRemoved: {
        // The diff names edge ends by A's ids (B-only nodes by their own).
        const auto& list =
            ChangeKind(kind.toInt()) == ChangeKind::EdgeAdded ? d.edgesAdded : d.edgesRemoved;
        if (i >= list.size())
            break;
        auto key = [this](const std::string& id) {
            return m_union->keyOfA(id).value_or(m_union->keyOfB(id).value_or(id));
        };
        const GraphIndex* index = m_graph->index();
        const int p = index ? index->indexOf(key(list[i].first)) : -1;
        const int c = index ? index->indexOf(key(list[i].second)) : -1;
        if (p >= 0 && c >= 0)
            m_graph->scene()->highlight({c}, p); // the edge lit, its producer selected
        if (p >= 0)
            m_graph->selectNode(p);
        break;
    }
    case ChangeKind::Field:
    case ChangeKind::Blob:
        break;
    }
}

void CompareGraphPage::showNode(int node) {
    const GraphIndex* index = m_graph->index();
    const UnionNode* n = m_union && index && node >= 0 && node < index->size()
                             ? m_union->node(index->id(node))
                             : nullptr;
    if (!n) {
        m_nodeModel->clear();
        m_nodeTitle->setText(m_result ? tr("Select a node or a change to compare its fields.")
                                      : QString());
        return;
    }
    const GradientCheckpoint* a = m_result->a->gradient();
    const GradientCheckpoint* b = m_result->b->gradient();
    m_nodeModel->setNodes(n->keyA ? a->graph.getNode(*n->keyA) : nullptr,
                          n->keyB ? b->graph.getNode(*n->keyB) : nullptr);
    QString title = tr("%1 — %2").arg(q(n->key), CompareTensorModel::statusText(n->status));
    if (n->keyA && *n->keyA != n->key)
        title += tr(" (in A: %1)").arg(q(*n->keyA));
    m_nodeTitle->setText(title);
    if (m_syncing)
        return; // selected from the list
    // The drawing's selection shown in the list too (or none, for a node
    // that did not change).
    QModelIndex row;
    for (int g = 0; n->diffIndex && g < m_changes->rowCount() && !row.isValid(); ++g) {
        const QModelIndex group = m_changes->index(g, 0);
        for (int r = 0; r < m_changes->rowCount(group); ++r) {
            const QModelIndex child = m_changes->index(r, 0, group);
            if (child.data(ChangeKindRole).toInt() == int(ChangeKind::Node) &&
                child.data(ChangeIndexRole).toULongLong() == *n->diffIndex) {
                row = child;
                break;
            }
        }
    }
    m_syncing = true;
    if (row.isValid()) {
        m_list->setCurrentIndex(row);
        m_list->scrollTo(row);
    } else {
        m_list->selectionModel()->clearCurrentIndex();
        m_list->clearSelection();
    }
    m_syncing = false;
}
