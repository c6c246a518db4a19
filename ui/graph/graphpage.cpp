#include "graph/graphpage.h"
#include "widgets/wrapanywherelabel.h"

#include "common/plaintext.h"
#include "common/sizeformat.h"
#include "graph/graphexport.h"
#include "graph/graphgrouping.h"
#include "graph/graphminimap.h"
#include "graph/graphview.h"
#include "graph/nodeinspector.h"
#include "graph/nodetablemodel.h"
#include "graph/opfamily.h"

#include "ckptscope/stats/tensorstats.h"

#include <QAction>
#include <QFileDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QSplitter>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

using namespace ckptscope;

GraphPage::GraphPage(QWidget* parent) : QWidget(parent), m_scene(new GraphScene(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QToolBar;
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    layout->addWidget(bar);
    m_warnings = new WrapAnywhereLabel;
    m_warnings->setTextFormat(Qt::RichText); // file text escaped once (plainToHtml)
    m_warnings->setVisible(false);
    layout->addWidget(m_warnings);

    auto* splitter = new QSplitter;
    m_view = new GraphView;
    m_view->setScene(m_scene);
    splitter->addWidget(m_view);
    m_inspector = new NodeInspector;
    splitter->addWidget(m_inspector);
    splitter->setStretchFactor(0, 4);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({1000, 340});
    layout->addWidget(splitter, 1);
    m_minimap = new GraphMinimap(m_view);
    layout->addLayout(buildStatusRow());
    fillToolBar(bar);
    connectViews();
}

QLayout* GraphPage::buildStatusRow() {
    auto* statusRow = new QHBoxLayout;
    m_status = new QLabel;
    m_status->setTextFormat(Qt::PlainText); // may quote ids from the file
    // Both labels wrap on a narrow window (1024 px with the Nodes panel)
    // rather than widen it: their one-line widths add up to about 1000 px.
    m_status->setWordWrap(true);
    statusRow->addWidget(m_status, 1);
    // Legend: op family colours, and what the outlines mean.
    QStringList legend;
    for (OpFamily f :
         {OpFamily::MatMul, OpFamily::Elementwise, OpFamily::Activation, OpFamily::Normalisation,
          OpFamily::Reduction, OpFamily::Loss, OpFamily::Other})
        // A word joiner after '/': "data/other" is never broken in two.
        legend << QStringLiteral("<span style='color:%1'>■</span>&nbsp;%2")
                      .arg(opFamilyColor(f).name(),
                           opFamilyName(f).replace(QLatin1Char('/'), QStringLiteral("/\u2060")));
    auto* legendLabel = new QLabel(legend.join(QStringLiteral("&nbsp;&nbsp;")));
    legendLabel->setTextFormat(Qt::RichText);
    legendLabel->setWordWrap(true);
    legendLabel->setToolTip(tr("Outline: solid = backward done, dashed = forward done, dotted = "
                               "pending; red = loss node; red dash-dot = on a cycle. Red dashed "
                               "edges were reversed to break a cycle."));
    statusRow->addWidget(legendLabel);
    m_progress = new QProgressBar;
    m_progress->setRange(0, 100);
    m_progress->setMaximumWidth(200);
    m_progress->setVisible(false);
    statusRow->addWidget(m_progress);
    m_cancelButton = new QToolButton;
    m_cancelButton->setText(tr("Cancel layout"));
    m_cancelButton->setVisible(false);
    statusRow->addWidget(m_cancelButton);
    return statusRow;
}

void GraphPage::fillToolBar(QToolBar* bar) {
    bar->addAction(tr("Fit"), this, [this] { m_view->fitAll(); })->setShortcut(Qt::Key_F);
    bar->addAction(tr("Zoom in"), this, [this] { m_view->zoomBy(1.25); })
        ->setShortcut(QKeySequence::ZoomIn);
    bar->addAction(tr("Zoom out"), this, [this] { m_view->zoomBy(0.8); })
        ->setShortcut(QKeySequence::ZoomOut);
    QAction* orient = bar->addAction(tr("Left → right"));
    orient->setCheckable(true);
    connect(orient, &QAction::toggled, this, [this](bool lr) {
        setOrientation(lr ? GraphScene::Orientation::LeftRight : GraphScene::Orientation::TopDown);
    });
    m_expandAll = bar->addAction(tr("Expand All"), this, &GraphPage::expandAll);
    m_collapseAll = bar->addAction(tr("Collapse All"), this, &GraphPage::collapseAll);
    m_expandAll->setEnabled(false);
    m_collapseAll->setEnabled(false);
    bar->addSeparator();
    bar->addAction(tr("Go to loss"), this, &GraphPage::goToLoss)->setShortcut(Qt::Key_L);
    bar->addAction(tr("Clear highlight"), this, [this] { m_scene->highlight({}); })
        ->setShortcut(Qt::Key_Escape);
    bar->addSeparator();
    m_search = new QLineEdit;
    m_search->setPlaceholderText(tr("Search op, id or CID prefix"));
    m_search->setClearButtonEnabled(true);
    m_search->setMaximumWidth(260);
    // Room to type in at any width: the buttons after it go to the bar's »
    // menu first.
    m_search->setMinimumWidth(m_search->fontMetrics().horizontalAdvance(QLatin1Char('x')) * 18);
    bar->addWidget(m_search);
    bar->addAction(tr("Previous"), this, [this] { findNext(-1); })
        ->setShortcut(QKeySequence::FindPrevious);
    bar->addAction(tr("Next"), this, [this] { findNext(1); })->setShortcut(QKeySequence::FindNext);
    m_searchStatus = new QLabel;
    m_searchStatus->setTextFormat(Qt::PlainText);
    bar->addWidget(m_searchStatus);
    bar->addSeparator();
    bar->addAction(tr("Export…"), this, [this] {
        QString filter;
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export Graph"), QStringLiteral("graph.svg"),
                                         tr("SVG (*.svg);;PNG (*.png)"), &filter);
        if (path.isEmpty())
            return;
        const QString error = exportTo(exportPath(path, filter));
        if (!error.isEmpty()) {
            QMessageBox box(QMessageBox::Warning, tr("Export failed"), error, QMessageBox::Ok,
                            this);
            box.setTextFormat(Qt::PlainText); // the path is the user's text
            box.exec();
        }
    });
}

void GraphPage::connectViews() {
    connect(m_search, &QLineEdit::returnPressed, this, [this] {
        if (m_matches.empty() || m_search->isModified()) {
            m_search->setModified(false);
            search(m_search->text());
        } else {
            findNext(1);
        }
    });
    connect(m_scene, &GraphScene::selectedNodeChanged, this, [this](int node) {
        if (node >= 0) {
            m_inspector->setNode(node);
            Q_EMIT nodeSelected(node);
        }
    });
    connect(m_scene, &GraphScene::groupActivated, this,
            [this](int g) { setGroupExpanded(g, !isGroupExpanded(g)); });
    connect(m_inspector, &NodeInspector::nodeRequested, this, [this](int n) { selectNode(n); });
    connect(m_inspector, &NodeInspector::provenanceRequested, this,
            &GraphPage::highlightProvenance);
    connect(m_inspector, &NodeInspector::consumersRequested, this, &GraphPage::highlightConsumers);
    connect(m_cancelButton, &QToolButton::clicked, this, [this] {
        m_layoutTask.cancel();
        endLayout(tr("Layout cancelled."));
    });
}

GraphPage::~GraphPage() {
    // The scene is our child and would die in ~QWidget, after this page has
    // stopped being a GraphPage; its clear() there may emit signals.
    // Cut that off and let it go first, while views and inspector still live.
    disconnect(m_scene, nullptr, this, nullptr);
    delete m_scene;
}

void GraphPage::setDocument(std::shared_ptr<const Document> document) {
    m_document = std::move(document);
    const GradientCheckpoint* g = m_document ? m_document->gradient() : nullptr;
    QStringList problems;
    if (g)
        for (const auto& w : m_document->warnings())
            problems << QString::fromStdString(w.message);
    // Share the document's lifetime instead of copying a large graph.
    setGraph(g ? std::shared_ptr<const GradientCheckpoint>(m_document, g) : nullptr, problems);
}

void GraphPage::setGraph(std::shared_ptr<const GradientCheckpoint> checkpoint,
                         const QStringList& warnings) {
    m_layoutTask.cancel(); // a layout still running belongs to the old graph
    m_layoutPending = false;
    m_kept.reset();
    m_progress->setVisible(false);
    m_cancelButton->setVisible(false);
    m_scene->clearGraph();
    m_view->setSceneRect(QRectF()); // centring may have grown it past the old drawing
    m_minimap->refit();
    m_layout.reset();
    m_collapsed.reset();
    m_expandAll->setEnabled(false);
    m_collapseAll->setEnabled(false);
    m_matches.clear();
    m_searchStatus->clear();
    m_indexTask.cancel(); // what it posts belongs to the old graph
    m_index.reset();
    m_edges.clear();
    m_checkpoint = std::move(checkpoint);
    if (!m_checkpoint) {
        m_inspector->setGraph(nullptr, nullptr);
        m_warnings->setVisible(false);
        Q_EMIT graphChanged(nullptr, nullptr);
        Q_EMIT indexed();
        return;
    }
    QStringList problems;
    for (const QString& w : warnings)
        problems << QStringLiteral("⚠ ") + plainToHtml(w);
    m_warnings->setText(problems.join(QStringLiteral("<br>")));
    m_warnings->setVisible(!problems.isEmpty());
    indexGraph();
    startLayout();
}

void GraphPage::setOrientation(GraphScene::Orientation orientation) {
    if (orientation == m_orientation)
        return;
    m_orientation = orientation;
    if (!m_checkpoint)
        return;
    // A pending restore (switched twice during one layout) still holds the
    // state: the scene is empty until the layout is drawn.
    if (!m_kept)
        m_kept = KeptView{m_inspector->node(), m_scene->highlighted(), m_scene->highlightFocus()};
    startLayout();
    // The node list and inspector work before the drawing exists.
    if (m_kept->node >= 0) {
        m_inspector->setNode(m_kept->node);
        Q_EMIT nodeSelected(m_kept->node);
    }
}

void GraphPage::indexGraph() {
    // Off the GUI thread: the window paints as soon as the file is read
    // (100k nodes take 0.1–0.2 s to index). The node list (told the graph
    // without an index: "indexing"), the inspector and the layout wait.
    m_inspector->setGraph(m_checkpoint, nullptr);
    Q_EMIT graphChanged(m_checkpoint, nullptr);
    m_status->setText(
        tr("Indexing %1 nodes…").arg(groupedNumber(uint64_t(m_checkpoint->graph.nodeCount()))));
    m_indexTask.start([checkpoint = m_checkpoint](
                          BackgroundTask::Run&) { return GraphIndex::ofGraph(checkpoint->graph); },
                      [this](GraphIndex::OfGraph made) {
                          m_index = std::move(made.index);
                          m_edges = std::move(made.edges); // for the layout, when it runs
                          m_inspector->setGraph(m_checkpoint, m_index);
                          Q_EMIT graphChanged(m_checkpoint, m_index);
                          startLayout();
                          Q_EMIT indexed();
                      },
                      {{}, [this](const QString& error) {
                           endLayout(error);
                           Q_EMIT indexed();
                       }});
}

void GraphPage::whenIndexed(QObject* context, std::function<void()> fn) {
    if (!isIndexing())
        fn();
    else
        connect(this, &GraphPage::indexed, context, std::move(fn), Qt::SingleShotConnection);
}

void GraphPage::startLayout() {
    if (!m_index)
        return; // indexGraph starts it once the index is made
    // A page nobody looks at costs nothing: the layout and the drawing wait
    // until the page is shown (showEvent).
    m_layoutPending = !isVisible();
    m_status->setText(tr("Laying out %1 nodes…").arg(groupedNumber(uint64_t(m_index->size()))));
    if (m_layoutPending)
        return;
    auto input = GraphScene::layoutInput(*m_index, m_edges); // font metrics: GUI thread
    if (m_orientation == GraphScene::Orientation::LeftRight)
        std::swap(input.widths, input.heights);
    m_progress->setValue(0);
    m_progress->setVisible(true);
    m_cancelButton->setVisible(true);
    if (m_index->size() > m_collapseAbove && m_index->hasGraph()) {
        startGroupedLayout(std::move(input));
        return;
    }

    m_layoutTask.start(
        [this, layoutInput = std::move(input)](BackgroundTask::Run& run) {
            LayoutOptions options;
            options.cancel = run.cancelFlag();
            options.progress = [&run](double p) { run.progress(p); };
            auto layout = std::make_shared<const GraphLayout>(layoutGraph(layoutInput, options));
            run.finish([this, layout] { showLayout(layout); });
        },
        {[this](double p) { m_progress->setValue(int(p * 100)); },
         [this](const QString& error) { endLayout(error); }});
}

void GraphPage::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (m_layoutPending && m_checkpoint)
        startLayout();
}

void GraphPage::endLayout(const QString& status) {
    m_progress->setVisible(false);
    m_cancelButton->setVisible(false);
    m_status->setText(status);
}

void GraphPage::showLayout(std::shared_ptr<const GraphLayout> layout) {
    m_layout = std::move(layout);
    m_collapsed.reset();
    m_expandAll->setEnabled(false);
    m_collapseAll->setEnabled(false);
    m_scene->build(m_checkpoint, m_index, m_layout, m_orientation);
    showDrawing();
    uint64_t reversed = 0;
    for (const auto& e : m_layout->edges)
        reversed += e.reversed;
    endLayout(tr("%1 nodes, %2 edges drawn, %3 crossings, %4 edges reversed to break cycles")
                  .arg(groupedNumber(uint64_t(m_index->size())),
                       groupedNumber(m_layout->edges.size()), groupedNumber(m_layout->crossings),
                       groupedNumber(reversed)));
    Q_EMIT layoutFinished();
}

void GraphPage::showDrawing() {
    m_view->showInitial();
    m_minimap->refit();
    if (m_kept && !m_kept->highlighted.empty())
        m_scene->highlight(m_kept->highlighted, m_kept->focus);
    // The node kept over an orientation switch, or one chosen in the list
    // (or by --select) while the layout ran: drawn selected, in view.
    const int chosen = m_kept ? m_kept->node : m_inspector->node();
    m_kept.reset();
    if (chosen >= 0)
        selectNode(chosen);
}

int GraphPage::selectedNode() const {
    return m_scene->selectedNode();
}

void GraphPage::selectNode(int node, bool center) {
    showNodeGroup(node);
    const QRectF box = m_scene->nodeRect(node);
    m_inspector->setNode(node);
    Q_EMIT nodeSelected(node);
    if (box.isEmpty())
        return;
    // Quietly: the inspector and the signal above have the news already.
    const QSignalBlocker quiet(m_scene);
    m_scene->selectNode(node);
    if (center)
        m_view->centerOnRect(box);
}

void GraphPage::highlightProvenance(int node) {
    showNodeGroup(node);
    if (node >= 0 && m_index)
        m_scene->highlight(m_index->ancestors(node), node);
}

void GraphPage::highlightConsumers(int node) {
    showNodeGroup(node);
    if (node >= 0 && m_index)
        m_scene->highlight(m_index->descendants(node), node);
}

void GraphPage::goToLoss() {
    if (isIndexing()) { // asked in the moment before the index arrives: done then
        m_searchStatus->setText(tr("indexing…"));
        whenIndexed(this, [this] { goToLoss(); });
        return;
    }
    if (!m_index)
        return; // no graph
    m_searchStatus->clear();
    const ComputationNode* loss = m_checkpoint->lossNode();
    if (!loss) {
        m_searchStatus->setText(tr("no loss node"));
        return;
    }
    for (int i = 0; i < m_index->size(); ++i) // by node, not by its "id" field
        if (m_index->node(i) == loss)
            selectNode(i);
}

int GraphPage::search(const QString& text) {
    m_matches.clear();
    m_match = -1;
    if (isIndexing()) { // "0 matches" would be untrue: searched when the index arrives
        m_searchStatus->setText(tr("indexing…"));
        whenIndexed(this, [this, text] { search(text); });
        return 0;
    }
    const std::string needle = text.trimmed().toStdString();
    if (!needle.empty() && m_index) {
        const QString lower = text.trimmed().toLower();
        auto startsWith = [&](const std::string& s) { return s.rfind(needle, 0) == 0; };
        // Walk in list (topological) order so next/previous follow the flow.
        for (const int n : m_index->listOrder()) {
            const ComputationNode* node = n >= 0 ? m_index->node(n) : nullptr;
            if (!node)
                continue;
            bool hit = QString::fromStdString(node->op).toLower().contains(lower) ||
                       startsWith(node->id) || (node->outputCid && startsWith(*node->outputCid)) ||
                       (node->gradientCid && startsWith(*node->gradientCid));
            for (const std::string& cid : node->inputCids)
                hit = hit || startsWith(cid);
            if (hit)
                m_matches.push_back(n);
        }
    }
    m_searchStatus->setText(text.isEmpty() ? QString()
                                           : tr("%n match(es)", nullptr, int(m_matches.size())));
    if (!m_matches.empty())
        findNext(1);
    return int(m_matches.size());
}

void GraphPage::findNext(int step) {
    if (m_matches.empty())
        return;
    const int n = int(m_matches.size());
    m_match = ((m_match + step) % n + n) % n;
    selectNode(m_matches[size_t(m_match)]);
    m_searchStatus->setText(tr("%1 of %2").arg(m_match + 1).arg(n));
}

QString GraphPage::exportTo(const QString& path) {
    return exportScene(m_scene, path);
}

void GraphPage::startGroupedLayout(LayoutInput input) {
    // Off the GUI thread: the ranks and the grouping (the boxes are placed
    // on it, once their labels are measured: a few hundred).
    m_layoutTask.start(
        [this, layoutInput = std::move(input), index = m_index, edges = m_edges,
         leftToRight = m_orientation ==
                       GraphScene::Orientation::LeftRight](BackgroundTask::Run& run) mutable {
            auto grouping = std::make_shared<GraphGrouping>(groupGraph(*index, edges));
            run.finish([this, grouping, leftToRight, in = std::move(layoutInput)]() mutable {
                GroupedLayout grouped =
                    groupedLayout(std::move(in), std::move(*grouping), leftToRight);
                showGrouped(std::move(grouped.layout), std::move(grouped.info));
            });
        },
        {[this](double p) { m_progress->setValue(int(p * 100)); },
         [this](const QString& error) { endLayout(error); }});
}

void GraphPage::showGrouped(std::shared_ptr<CollapsedLayout> layout,
                            std::vector<GraphScene::GroupInfo> info) {
    m_layout.reset();
    m_collapsed = std::move(layout);
    m_scene->buildGrouped(m_checkpoint, m_index, m_collapsed, std::move(info), m_orientation);
    m_expandAll->setEnabled(true);
    m_collapseAll->setEnabled(true);
    showDrawing();
    endLayout(groupStatus());
    Q_EMIT layoutFinished();
}

QString GraphPage::groupStatus() const {
    return tr("%1 nodes in %2 groups (%3 expanded); double-click a group to expand or collapse "
              "it")
        .arg(groupedNumber(uint64_t(m_index->size())), groupedNumber(groupCount()),
             groupedNumber(m_collapsed->expandedCount()));
}

int GraphPage::groupCount() const {
    return m_collapsed ? int(m_collapsed->grouping().groupCount()) : 0;
}

int GraphPage::groupOf(int node) const {
    if (!m_collapsed || node < 0 || size_t(node) >= m_collapsed->grouping().groupOf.size())
        return -1;
    return int(m_collapsed->grouping().groupOf[size_t(node)]);
}

bool GraphPage::isGroupExpanded(int group) const {
    return m_collapsed && group >= 0 && group < groupCount() &&
           m_collapsed->isExpanded(uint32_t(group));
}

void GraphPage::redrawGroups() {
    m_scene->rebuildGroups();
    m_view->setSceneRect(QRectF()); // the drawing's own area again
    m_minimap->refit();
    m_status->setText(groupStatus());
}

void GraphPage::setGroupExpanded(int group, bool expanded) {
    if (!m_collapsed || group < 0 || group >= groupCount() || isGroupExpanded(group) == expanded)
        return;
    // The group's corner stays where it is on screen.
    const QPointF at = m_view->mapFromScene(m_scene->groupRect(group).topLeft());
    const double zoom = m_view->zoom();
    m_collapsed->setExpanded(uint32_t(group), expanded);
    redrawGroups();
    m_view->placeRect(QRectF(m_scene->groupRect(group).topLeft(), QSizeF(1e-3, 1e-3)), at, zoom);
}

void GraphPage::showNodeGroup(int node) {
    const int group = groupOf(node);
    if (group < 0 || isGroupExpanded(group))
        return;
    m_collapsed->setExpanded(uint32_t(group), true);
    redrawGroups(); // the caller centres the node
}

void GraphPage::expandAll() {
    setAllExpanded(true);
}

void GraphPage::collapseAll() {
    setAllExpanded(false);
}

void GraphPage::setAllExpanded(bool expanded) {
    if (!m_collapsed)
        return;
    const int selected = m_inspector->node();
    m_collapsed->setAllExpanded(expanded);
    redrawGroups();
    m_view->showInitial();
    // The node selected stays selected and in view; collapsed, its group.
    if (selected < 0)
        return;
    if (expanded)
        selectNode(selected);
    else if (const int group = groupOf(selected); group >= 0)
        m_view->centerOnRect(m_scene->groupRect(group));
}
