#pragma once

#include "common/backgroundtask.h"
#include "compare/compareresult.h"

#include "ckptscope/diff/uniongraph.h"

#include <QWidget>

#include <QPointF>

#include <memory>
#include <optional>
#include <string>

class CompareNodeModel;
class GraphPage;
class QLabel;
class QModelIndex;
class QStandardItemModel;
class QTableView;
class QTreeView;

// Two gradient checkpoints' graphs drawn as one: the union (every node of B
// and A's removed nodes) in the single-file graph page, each node and edge
// marked by status, with a legend; beside it the list of changes (the
// window's changes model) and the selected node's A and B fields. A click
// on a node's change selects and centres the node; selecting a node in the
// drawing selects its change. The union is built, and laid out, off the GUI
// thread.
class CompareGraphPage : public QWidget {
    Q_OBJECT
public:
    explicit CompareGraphPage(QStandardItemModel* changes, QWidget* parent = nullptr);
    ~CompareGraphPage() override;

    // A gradient comparison (anything else clears the page). The changes
    // model must already hold this result's changes.
    void setResult(std::shared_ptr<const CompareResult> result);
    // Selects the union node with this key everywhere and centres it.
    void selectKey(const std::string& key);

    const ckptscope::UnionGraph* unionGraph() const { return m_union.get(); }
    GraphPage* graphPage() const { return m_graph; }
    QTreeView* changesView() const { return m_list; }
    CompareNodeModel* nodeModel() const { return m_nodeModel; }
    QString nodeTitle() const;
    bool isBusy() const;

Q_SIGNALS:
    // The union is drawn with every status applied.
    void graphShown();

private:
    void applyStatuses();
    void showChange(const QModelIndex& index);
    void showNode(int node);

    std::shared_ptr<const CompareResult> m_result;
    std::shared_ptr<const ckptscope::UnionGraph> m_union;
    QStandardItemModel* m_changes;
    CompareNodeModel* m_nodeModel;
    QTreeView* m_list;
    QLabel* m_nodeTitle;
    QTableView* m_nodeView;
    GraphPage* m_graph;
    bool m_syncing = false; // a selection echoed between list and drawing
    bool m_openOnChange = false;
    // What the user looked at when the comparison was made again (reload,
    // a side changed on disk, swap, tolerances): the node selected, and the
    // node nearest the middle of the view with where it was and the zoom.
    // Put back, by key, once the new union is drawn.
    struct KeptView {
        std::string selected, anchor;
        QPointF anchorAt;
        double zoom = 1;
    };
    std::optional<KeptView> m_kept;
    std::optional<KeptView> currentView() const;
    bool restoreView(const KeptView& kept);
    void openOnFirstChange();
    BackgroundTask m_task{this};
};
