#pragma once

#include "common/backgroundtask.h"
#include "graph/graphindex.h"
#include "graph/graphscene.h"

#include "ckptscope/document/document.h"

#include <QWidget>

#include <functional>
#include <memory>
#include <optional>

class GraphMinimap;
class QAction;
class GraphView;
class NodeInspector;
class QLabel;
class QLayout;
class QLineEdit;
class QProgressBar;
class QToolBar;
class QToolButton;

// The computation graph of a gradient checkpoint: layered drawing (laid out
// off the GUI thread), minimap, inspector, search, provenance/consumer
// highlighting and export. The main window lists the nodes in a dock of its
// own, kept in step through graphChanged/nodeSelected.
class GraphPage : public QWidget {
    Q_OBJECT
public:
    explicit GraphPage(QWidget* parent = nullptr);
    ~GraphPage() override;

    void setDocument(std::shared_ptr<const ckptscope::Document> document);
    // A graph of no document (the union of two compared graphs), with the
    // warnings to show above it.
    void setGraph(std::shared_ptr<const ckptscope::GradientCheckpoint> checkpoint,
                  const QStringList& warnings = {});
    // Also while a layout waits for the page to be shown, once it is, or
    // for the index.
    bool isLayingOut() const {
        return m_layoutTask.isRunning() || (m_layoutPending && isVisible()) ||
               (isIndexing() && isVisible());
    }
    // The graph is indexed off the GUI thread: until `indexed`, index() is
    // null and the node list says it is indexing.
    bool isIndexing() const { return m_indexTask.isRunning(); }
    // Runs fn now if the index is ready (or there is no graph), else once
    // it is (or has failed), while context lives.
    void whenIndexed(QObject* context, std::function<void()> fn);

    void selectNode(int node, bool center = true);
    int selectedNode() const;
    void highlightProvenance(int node);
    void highlightConsumers(int node);
    // Asked while the graph is being indexed, goToLoss and search wait for
    // the index and are done then (search returns 0 meanwhile).
    void goToLoss();
    // Search by op, id prefix or CID prefix; returns the number of matches
    // and selects the first (next/previous step through them).
    int search(const QString& text);
    void findNext(int step = 1);
    void setOrientation(GraphScene::Orientation orientation);
    QString exportTo(const QString& path);

    // Collapse by structure: a graph of more than threshold nodes opens as
    // groups (bands of ranks × op family), a box each; small graphs open
    // with every node drawn. Applies to the next layout.
    static constexpr int kCollapseAbove = 20000;
    void setCollapseThreshold(int nodes) { m_collapseAbove = nodes; }
    bool isGrouped() const { return m_collapsed != nullptr; }
    int groupCount() const;
    // The group of a node, -1 when the graph is not grouped.
    int groupOf(int node) const;
    bool isGroupExpanded(int group) const;
    // Places only that group's nodes and redraws; the view keeps the group
    // where it was.
    void setGroupExpanded(int group, bool expanded);
    void expandAll();
    void collapseAll();
    // View ▸ Expand All / Collapse All (enabled for a grouped graph).
    QList<QAction*> groupActions() const { return {m_expandAll, m_collapseAll}; }

    GraphScene* scene() const { return m_scene; }
    GraphView* view() const { return m_view; }
    GraphMinimap* minimap() const { return m_minimap; }
    NodeInspector* inspector() const { return m_inspector; }
    QLineEdit* searchEdit() const { return m_search; }
    const GraphIndex* index() const { return m_index.get(); }
    // Grouped: what is drawn (nodes of collapsed groups have no size).
    const ckptscope::GraphLayout* layout() const {
        return m_collapsed ? m_scene->layout() : m_layout.get();
    }

Q_SIGNALS:
    void layoutFinished();
    // A new graph (or none) is indexed; node numbers below refer to it.
    void graphChanged(std::shared_ptr<const ckptscope::GradientCheckpoint> checkpoint,
                      std::shared_ptr<const GraphIndex> index);
    void nodeSelected(int node);
    // The graph set last is indexed (after graphChanged with its index), or
    // indexing failed, or there is no graph: index() is final.
    void indexed();

protected:
    void showEvent(QShowEvent* event) override;

private:
    QLayout* buildStatusRow();
    void fillToolBar(QToolBar* bar);
    void connectViews();
    void indexGraph();
    void startLayout();
    void showLayout(std::shared_ptr<const ckptscope::GraphLayout> layout);
    void showDrawing(); // the view, minimap and selection once a drawing is built
    void endLayout(const QString& status);
    void startGroupedLayout(ckptscope::LayoutInput input);
    void showGrouped(std::shared_ptr<ckptscope::CollapsedLayout> layout,
                     std::vector<GraphScene::GroupInfo> info);
    void redrawGroups();
    void setAllExpanded(bool expanded);
    void showNodeGroup(int node); // expands the group a node is in
    QString groupStatus() const;

    std::shared_ptr<const ckptscope::Document> m_document;
    std::shared_ptr<const ckptscope::GradientCheckpoint> m_checkpoint;
    std::shared_ptr<const GraphIndex> m_index;
    std::shared_ptr<const ckptscope::GraphLayout> m_layout;
    std::shared_ptr<ckptscope::CollapsedLayout> m_collapsed; // grouped graphs only
    int m_collapseAbove = kCollapseAbove;
    std::vector<std::pair<uint32_t, uint32_t>> m_edges; // the index's, as layout input
    GraphScene::Orientation m_orientation = GraphScene::Orientation::TopDown;
    std::vector<int> m_matches;
    // What the user was looking at when the orientation changed: the same
    // node indices come back once the new layout is drawn.
    struct KeptView {
        int node = -1;
        std::vector<int> highlighted;
        int focus = -1;
    };
    std::optional<KeptView> m_kept;
    int m_match = -1;
    bool m_layoutPending = false; // set while the page is hidden

    GraphScene* m_scene;
    GraphView* m_view;
    GraphMinimap* m_minimap;
    NodeInspector* m_inspector;
    QLineEdit* m_search;
    QLabel* m_searchStatus;
    QLabel* m_warnings;
    QLabel* m_status;
    QProgressBar* m_progress;
    QToolButton* m_cancelButton;
    QAction* m_expandAll;
    QAction* m_collapseAll;
    BackgroundTask m_layoutTask{this}; // works on a copy of the layout input
    // Reads only the graph, which the job shares: closing need not wait.
    BackgroundTask m_indexTask{this, BackgroundTask::OnDestroy::Detach};
};
