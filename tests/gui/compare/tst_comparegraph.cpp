// The gradient side of the compare window: the union graph drawn with each
// node's and edge's status, the list of changes and the drawing selecting
// each other (a clicked change centred in the view), the node's A and B
// fields, the fields table and the optimizer-state comparison — models under
// QAbstractItemModelTester, figures against values computed here.
#include "testsupport.h"

#include "compare/comparehistogramview.h"
#include "compare/comparestatsmodel.h"
#include "compare/comparetensormodel.h"
#include "compare/comparewindow.h"
#include "compare/gradient/compareblobmodel.h"
#include "compare/gradient/comparefieldsmodel.h"
#include "compare/gradient/comparegraphpage.h"
#include "compare/gradient/comparenodemodel.h"
#include "compare/gradient/compareoptimizerpage.h"
#include "graph/graphpage.h"
#include "graph/graphscene.h"
#include "graph/graphview.h"
#include "tensor/histogramview.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QHeaderView>
#include <QPalette>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStyle>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <QTreeView>

#include <cmath>
#include <cstring>
#include <numeric>

using namespace ckptscope;
using testsupport::str;

namespace {

constexpr int kChain = 40;

std::string nodeId(int i) {
    return QStringLiteral("n%1").arg(i, 2, 10, QLatin1Char('0')).toStdString();
}

std::vector<uint8_t> floatBytes(const std::vector<float>& v) {
    std::vector<uint8_t> out(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
    return out;
}

// A chain n00 → … → n39 (long enough that the view must scroll to a node).
GradientCheckpoint chain() {
    GradientCheckpoint g;
    g.step = 1;
    g.timestamp = 100;
    for (int i = 0; i < kChain; ++i) {
        ComputationNode n(nodeId(i), i % 2 ? "relu" : "linear",
                          i ? std::vector<std::string>{"c" + std::to_string(i - 1)}
                            : std::vector<std::string>{});
        n.outputCid = "c" + std::to_string(i);
        g.graph.insertNode(n);
        if (i)
            g.graph.addEdge(nodeId(i - 1), nodeId(i));
    }
    return g;
}

struct Files {
    QTemporaryDir dir;
    QString a, b;
    std::vector<float> wA, wB;
};

// B: n05 changed, n20 removed (n19 → n21 instead), "extra" added after n30;
// optimizer blob m.w changed, m.odd the same, m.new added.
std::unique_ptr<Files> writeFiles() {
    auto f = std::make_unique<Files>();
    GradientCheckpoint a = chain();
    for (int i = 0; i < 300; ++i) {
        f->wA.push_back(float(i) * 0.5f);
        f->wB.push_back(i % 3 ? float(i) * 0.5f : float(i) * 0.5f + float(i % 7) - 2.0f);
    }
    a.setOptimizerState("m.w", floatBytes(f->wA));
    a.setOptimizerState("m.odd", {1, 2, 3});
    GradientCheckpoint b;
    b.step = 2;
    b.timestamp = 100;
    for (const auto& [k, n] : a.graph.nodes()) {
        if (k == "n20")
            continue;
        ComputationNode copy = n;
        if (k == "n05")
            copy.metadata["shape"] = "[4,4]";
        b.graph.insertNode(copy);
    }
    for (const Edge& e : a.graph.edges())
        if (e.first != "n20" && e.second != "n20")
            b.graph.addEdge(e.first, e.second);
    b.graph.addEdge("n19", "n21");
    b.graph.insertNode(ComputationNode("extra", "dropout", {"c30"}));
    b.graph.addEdge("n30", "extra");
    b.setOptimizerState("m.w", floatBytes(f->wB));
    b.setOptimizerState("m.odd", {1, 2, 3});
    b.setOptimizerState("m.new", floatBytes({1, 2}));
    f->a = f->dir.filePath(QStringLiteral("a.json"));
    f->b = f->dir.filePath(QStringLiteral("b.json"));
    a.save(str(f->a));
    b.save(str(f->b));
    return f;
}

DiffStatus expectedStatus(const std::string& key) {
    return key == "n05"     ? DiffStatus::Changed
           : key == "n20"   ? DiffStatus::Removed
           : key == "extra" ? DiffStatus::Added
                            : DiffStatus::Same;
}

GraphScene::Change asNodeChange(DiffStatus s) {
    return s == DiffStatus::Changed   ? GraphScene::Change::Changed
           : s == DiffStatus::Removed ? GraphScene::Change::Removed
           : s == DiffStatus::Added   ? GraphScene::Change::Added
                                      : GraphScene::Change::Same;
}

// The window compared and its union drawn (false on a timeout).
bool compared(CompareWindow& w, const Files& f) {
    QSignalSpy shown(w.graphPage(), &CompareGraphPage::graphShown);
    w.resize(1400, 900);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w))
        return false;
    w.compare(f.a, f.b);
    return QTest::qWaitFor([&] { return !shown.isEmpty(); }, 20000);
}

// The list row (first column) of a change by its item text.
QModelIndex changeRow(const QStandardItemModel* m, const QString& text) {
    for (int g = 0; g < m->rowCount(); ++g)
        for (int r = 0; r < m->item(g)->rowCount(); ++r)
            if (m->item(g)->child(r, 0)->text() == text)
                return m->indexFromItem(m->item(g)->child(r, 0));
    return {};
}

int nodeIndex(CompareWindow& w, const std::string& key) {
    return w.graphPage()->graphPage()->index()->indexOf(key);
}

// How far the node's centre is from where the view centres an item.
double offCentre(CompareWindow& w, int node) {
    GraphView* view = w.graphPage()->graphPage()->view();
    const QRectF box =
        view->mapFromScene(w.graphPage()->graphPage()->scene()->nodeRect(node)).boundingRect();
    const QPointF d = box.center() - view->targetPoint(box.size());
    return std::hypot(d.x(), d.y());
}

void click(QTreeView* view, const QModelIndex& index) {
    view->scrollTo(index);
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(index).center());
}

} // namespace

class TestCompareGraph : public QObject {
    Q_OBJECT
    std::unique_ptr<Files> m_files;

private Q_SLOTS:
    void initTestCase() { m_files = writeFiles(); }

    void unionGraphHasEveryNodeWithItsStatus() {
        CompareWindow w;
        QAbstractItemModelTester t1(w.changesModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(w.graphPage()->nodeModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(compared(w, *m_files));
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.graphPage()));
        GraphScene* scene = w.graphPage()->graphPage()->scene();
        // B's 40 nodes (one added, one gone) and A's removed n20.
        QCOMPARE(scene->nodeCount(), kChain + 1);
        const GraphIndex* index = w.graphPage()->graphPage()->index();
        int marked = 0;
        for (int i = 0; i < scene->nodeCount(); ++i) {
            const std::string& key = index->id(i);
            QCOMPARE(scene->nodeChange(i), asNodeChange(expectedStatus(key)));
            marked += expectedStatus(key) != DiffStatus::Same;
        }
        QCOMPARE(marked, 3);
        // Opened on the first change in key order, in view but not selected.
        QVERIFY2(offCentre(w, index->indexOf("extra")) < 3,
                 qPrintable(QString::number(offCentre(w, index->indexOf("extra")))));
        QCOMPARE(scene->selectedNode(), -1);
        // Edges: those of n20 removed, the bypass and the new one added.
        const auto& edges = scene->layout()->edges;
        QCOMPARE(scene->edgeCount(), int(edges.size()));
        int removed = 0, added = 0;
        for (int e = 0; e < scene->edgeCount(); ++e) {
            const std::string from = index->id(int(edges[size_t(e)].from));
            const std::string to = index->id(int(edges[size_t(e)].to));
            const bool gone = from == "n20" || to == "n20";
            const bool fresh = (from == "n19" && to == "n21") || to == "extra";
            const GraphScene::Change want = gone    ? GraphScene::Change::Removed
                                            : fresh ? GraphScene::Change::Added
                                                    : GraphScene::Change::Same;
            QCOMPARE(scene->edgeChange(e), want);
            removed += gone;
            added += fresh;
        }
        QCOMPARE(removed, 2);
        QCOMPARE(added, 2);
        QCOMPARE(scene->edgeCount(), (kChain - 1) + 2); // removed edges stay drawn
        // The legend names every status.
        for (const char* s : {"added", "removed", "changed", "same"})
            QVERIFY(
                w.graphPage()->findChild<QWidget*>(QStringLiteral("legend-") + QLatin1String(s)));
    }

    void clickingAChangeSelectsAndCentresItsNode() {
        CompareWindow w;
        QAbstractItemModelTester tester(w.graphPage()->nodeModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(compared(w, *m_files));
        GraphPage* graph = w.graphPage()->graphPage();
        QTreeView* list = w.graphPage()->changesView();
        for (const char* id : {"n20", "n05", "extra"}) {
            // Look elsewhere first, so the click has to move the view.
            graph->selectNode(nodeIndex(w, id == std::string("n05") ? "n39" : "n00"));
            const int node = nodeIndex(w, id);
            QVERIFY(offCentre(w, node) > 50);
            click(list, changeRow(w.changesModel(), QString::fromLatin1(id)));
            QCOMPARE(graph->scene()->selectedNode(), node);
            QVERIFY2(offCentre(w, node) < 3, qPrintable(QString::number(offCentre(w, node))));
            QVERIFY(w.graphPage()->nodeTitle().startsWith(QString::fromLatin1(id)));
        }
        // The changed node's fields, A beside B.
        click(list, changeRow(w.changesModel(), QStringLiteral("n05")));
        const CompareNodeModel* m = w.graphPage()->nodeModel();
        const int shape = m->rowOf(QStringLiteral("metadata.shape"));
        QVERIFY(shape >= 0);
        QVERIFY(!m->index(shape, CompareNodeModel::SideA).data().isValid());
        QCOMPARE(m->index(shape, CompareNodeModel::SideB).data().toString(),
                 QStringLiteral("[4,4]"));
        QCOMPARE(m->index(shape, 0).data(CompareNodeModel::StatusRole).toInt(),
                 int(DiffStatus::Added));
        const int op = m->rowOf(QStringLiteral("op"));
        QCOMPARE(m->index(op, CompareNodeModel::SideA).data().toString(), QStringLiteral("relu"));
        QCOMPARE(m->index(op, 0).data(CompareNodeModel::StatusRole).toInt(), int(DiffStatus::Same));
        // The removed node: A's fields only.
        click(list, changeRow(w.changesModel(), QStringLiteral("n20")));
        const int id = m->rowOf(QStringLiteral("id"));
        QCOMPARE(m->index(id, CompareNodeModel::SideA).data().toString(), QStringLiteral("n20"));
        QVERIFY(!m->index(id, CompareNodeModel::SideB).data().isValid());
        // An edge's change selects its producer and leaves the row selected.
        const QModelIndex edge = changeRow(w.changesModel(), QStringLiteral("n30 → extra"));
        click(list, edge);
        QCOMPARE(graph->scene()->selectedNode(), nodeIndex(w, "n30"));
        QCOMPARE(list->currentIndex().siblingAtColumn(0), edge);
    }

    void comparingAgainKeepsTheView() {
        CompareWindow w;
        QVERIFY(compared(w, *m_files));
        GraphPage* graph = w.graphPage()->graphPage();
        GraphView* view = graph->view();
        // The user selects n05, looks at n39 somewhere off centre, zoomed in.
        graph->selectNode(nodeIndex(w, "n05"));
        // (Nearest the middle, n39 is the node the view is kept by: a swap
        // lays the union out anew, and other nodes may move around it.)
        view->placeRect(graph->scene()->nodeRect(nodeIndex(w, "n39")),
                        QRectF(view->viewport()->rect()).center() + QPointF(9, -6), 1.7);
        // Where a node is drawn, from the middle of the view (scroll bars
        // that come and go move the middle, never the node away from it).
        auto where = [&](const char* id) {
            return view->mapFromScene(graph->scene()->nodeRect(nodeIndex(w, id)).center()) -
                   view->viewport()->rect().center();
        };
        const QPoint before = where("n39");
        const double zoom = view->zoom();
        for (int round = 0; round < 2; ++round) {
            // Reload, then swap: the union is rebuilt and laid out again.
            QSignalSpy shown(w.graphPage(), &CompareGraphPage::graphShown);
            round == 0 ? w.recompare() : w.swapSides();
            QVERIFY(QTest::qWaitFor([&] { return !shown.isEmpty(); }, 20000));
            QTest::qWait(50); // scroll bars settle
            QCOMPARE(graph->scene()->selectedNode(), nodeIndex(w, "n05"));
            QCOMPARE(view->zoom(), zoom);
            const QPoint after = where("n39");
            // Within a few pixels: the status row under the drawing changes
            // height as the layout ends, and the view's middle with it.
            QVERIFY2((after - before).manhattanLength() <= 12,
                     qPrintable(QStringLiteral("round %5: %1,%2 → %3,%4")
                                    .arg(before.x())
                                    .arg(before.y())
                                    .arg(after.x())
                                    .arg(after.y())
                                    .arg(round)));
            QVERIFY(w.graphPage()->nodeTitle().startsWith(QStringLiteral("n05")));
        }
    }

    void selectingANodeSelectsItsChange() {
        CompareWindow w;
        QVERIFY(compared(w, *m_files));
        GraphPage* graph = w.graphPage()->graphPage();
        QTreeView* list = w.graphPage()->changesView();
        graph->selectNode(nodeIndex(w, "extra"));
        QCOMPARE(list->currentIndex().siblingAtColumn(0).data().toString(),
                 QStringLiteral("extra"));
        // A node with no change: no change row stays selected.
        graph->selectNode(nodeIndex(w, "n10"));
        QVERIFY(!list->currentIndex().isValid());
        QVERIFY(w.graphPage()->nodeTitle().startsWith(QStringLiteral("n10")));
    }

    void fieldsAndOptimizerState() {
        CompareWindow w;
        QAbstractItemModelTester t1(w.fieldsModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        CompareOptimizerPage* opt = w.optimizerPage();
        QAbstractItemModelTester t2(opt->blobModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t3(opt->statsModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(compared(w, *m_files));
        const CompareFieldsModel* fields = w.fieldsModel();
        QCOMPARE(fields->rowCount(), 3);
        QCOMPARE(fields->index(0, CompareFieldsModel::Field).data().toString(),
                 QStringLiteral("step"));
        QCOMPARE(fields->index(0, CompareFieldsModel::SideA).data().toString(),
                 QStringLiteral("1"));
        QCOMPARE(fields->index(0, CompareFieldsModel::SideB).data().toString(),
                 QStringLiteral("2"));
        QCOMPARE(fields->index(0, CompareFieldsModel::Status).data().toString(),
                 CompareTensorModel::statusText(DiffStatus::Changed));
        QCOMPARE(fields->index(2, CompareFieldsModel::Status).data().toString(),
                 CompareTensorModel::statusText(DiffStatus::Same));

        // Blobs by name: m.new, m.odd, m.w.
        const CompareBlobModel* blobs = opt->blobModel();
        QCOMPARE(blobs->rowCount(), 3);
        auto cell = [&](int row, int col) { return blobs->index(row, col).data().toString(); };
        QCOMPARE(cell(0, CompareBlobModel::Name), QStringLiteral("m.new"));
        QCOMPARE(cell(0, CompareBlobModel::BytesA), QString());
        QCOMPARE(cell(0, CompareBlobModel::BytesB), QStringLiteral("8"));
        QCOMPARE(cell(1, CompareBlobModel::Status),
                 CompareTensorModel::statusText(DiffStatus::Same));
        QCOMPARE(cell(1, CompareBlobModel::DifferingBytes), QStringLiteral("0"));
        QCOMPARE(cell(1, CompareBlobModel::MaxAbsDiff), QString()); // 3 bytes: no f32
        // m.w against a direct count.
        const std::vector<uint8_t> a = floatBytes(m_files->wA), b = floatBytes(m_files->wB);
        uint64_t bytesDiffer = 0, valuesDiffer = 0;
        double maxAbs = 0;
        for (size_t i = 0; i < a.size(); ++i)
            bytesDiffer += a[i] != b[i];
        for (size_t i = 0; i < m_files->wA.size(); ++i) {
            const double d = double(m_files->wB[i]) - double(m_files->wA[i]);
            valuesDiffer += d != 0;
            maxAbs = std::max(maxAbs, std::abs(d));
        }
        QCOMPARE(cell(2, CompareBlobModel::BytesA), QString::fromStdString(fmt::grouped(a.size())));
        QCOMPARE(cell(2, CompareBlobModel::DifferingBytes),
                 QString::fromStdString(fmt::grouped(bytesDiffer)));
        QCOMPARE(cell(2, CompareBlobModel::DifferingValues),
                 QString::fromStdString(fmt::grouped(valuesDiffer)));
        QCOMPARE(cell(2, CompareBlobModel::MaxAbsDiff),
                 QString::fromStdString(fmt::display(maxAbs)));

        // The page opened on the first blob that differs (m.new); m.w's detail.
        QSignalSpy shown(opt, &CompareOptimizerPage::detailShown);
        opt->selectBlob(2);
        QVERIFY(QTest::qWaitFor([&] { return !shown.isEmpty() && shown.last().at(0).toInt() == 2; },
                                10000));
        QVERIFY(opt->title().startsWith(QStringLiteral("m.w")));
        const CompareStatsModel* stats = opt->statsModel();
        QString differing, values;
        for (int r = 0; r < stats->rowCount(); ++r) {
            const QString label = stats->index(r, CompareStatsModel::Label).data().toString();
            if (label == QStringLiteral("differing"))
                differing = stats->index(r, CompareStatsModel::Delta).data().toString();
            if (label == QStringLiteral("values"))
                values = stats->index(r, CompareStatsModel::SideA).data().toString();
        }
        QCOMPARE(differing, QString::fromStdString(fmt::grouped(valuesDiffer)));
        QCOMPARE(values, QStringLiteral("300"));
        const auto& delta = opt->deltaView()->histogram().counts;
        QCOMPARE(std::accumulate(delta.begin(), delta.end(), uint64_t(0)), uint64_t(300));
        const auto& overlayA = opt->overlayView()->histogramA().counts;
        const auto& overlayB = opt->overlayView()->histogramB().counts;
        QCOMPARE(std::accumulate(overlayA.begin(), overlayA.end(), uint64_t(0)), uint64_t(300));
        QCOMPARE(std::accumulate(overlayB.begin(), overlayB.end(), uint64_t(0)), uint64_t(300));
        QCOMPARE(opt->overlayView()->histogramA().lo, opt->overlayView()->histogramB().lo);
        // m.odd (3 bytes): bytewise only, nothing left of m.w on screen.
        opt->selectBlob(1);
        QVERIFY(opt->deltaView()->histogram().counts.empty());
        QVERIFY(opt->title().contains(QStringLiteral("bytewise")));
    }

    // Ids and CIDs have no spaces: the node's fields wrap anywhere, whole.
    void longFieldsWrapInsteadOfBeingCut() {
        CompareNodeModel model;
        ComputationNode a(std::string(150, 'x'), "matmul", {"cid"});
        ComputationNode b = a;
        b.op = "linear";
        model.setNodes(&a, &b);
        QTableView* view = nullptr;
        CompareWindow w;
        QVERIFY(compared(w, *m_files));
        for (QTableView* t : w.graphPage()->findChildren<QTableView*>())
            if (t->model() == w.graphPage()->nodeModel())
                view = t;
        QVERIFY(view);
        view->setModel(&model); // the page's view, delegate and settings
        view->resizeRowsToContents();
        const int line = view->fontMetrics().height();
        const int width = view->columnWidth(CompareNodeModel::SideA);
        const int needed = view->fontMetrics().horizontalAdvance(QString(150, QLatin1Char('x')));
        QVERIFY(needed > 2 * width); // the test means something: three lines at least
        QVERIFY2(view->rowHeight(model.rowOf(QStringLiteral("id"))) >= 3 * line,
                 qPrintable(QString::number(view->rowHeight(0))));
        QVERIFY(view->rowHeight(model.rowOf(QStringLiteral("op"))) < 2 * line);
        view->setModel(w.graphPage()->nodeModel());
    }

    void changeListShowsIdsWhole() {
        // B adds a node with a long id (a UUID and a path, as exporters write).
        const std::string longId =
            "6adc98ae-8899-4ad8-403a-8996bf9569ec/model.layers.11.attention.output.dense";
        GradientCheckpoint a = GradientCheckpoint::load(str(m_files->a));
        GradientCheckpoint b = a;
        b.graph.insertNode(ComputationNode(longId, "dropout", {"c30"}));
        b.graph.addEdge("n30", longId);
        const QString pa = m_files->dir.filePath(QStringLiteral("long-a.json"));
        const QString pb = m_files->dir.filePath(QStringLiteral("long-b.json"));
        a.save(str(pa));
        b.save(str(pb));
        CompareWindow w;
        w.resize(1200, 800);
        QSignalSpy first(&w, &CompareWindow::comparisonFinished);
        w.compare(pa, pb);
        QVERIFY(QTest::qWaitFor([&] { return !first.isEmpty(); }, 10000));
        QTreeView* list = w.graphPage()->changesView();
        QCOMPARE(list->textElideMode(), Qt::ElideNone);
        // Every row's item text fits its column: nothing is cut to "…".
        const QAbstractItemModel* m = list->model();
        int longest = 0;
        for (int top = 0; top < m->rowCount(); ++top) {
            const QModelIndex group = m->index(top, 0);
            for (int r = 0; r < m->rowCount(group); ++r) {
                const QModelIndex item = m->index(r, 0, group);
                // Its status icon beside it (the status column may be scrolled away).
                QVERIFY(!item.data(Qt::DecorationRole).value<QIcon>().isNull());
                const int needed = list->indentation() * 2 +
                                   list->style()->pixelMetric(QStyle::PM_SmallIconSize) +
                                   list->fontMetrics().horizontalAdvance(item.data().toString());
                QVERIFY2(list->columnWidth(0) >= needed, qPrintable(item.data().toString()));
                longest = std::max(longest, needed);
            }
        }
        QVERIFY(longest > 400); // the long id is there to be cut
    }

    // With CKPTSCOPE_TEST_SHOTS=DIR, saves the graph page in a light and a
    // dark palette there (to look at the status marks on both).
    void shotsInLightAndDarkPalettes() {
        const QString dir = qEnvironmentVariable("CKPTSCOPE_TEST_SHOTS");
        if (dir.isEmpty())
            QSKIP("CKPTSCOPE_TEST_SHOTS not set");
        QPalette dark;
        for (auto [role, color] : {std::pair{QPalette::Window, QColor(45, 45, 48)},
                                   {QPalette::Base, QColor(30, 30, 30)},
                                   {QPalette::Text, QColor(220, 220, 220)},
                                   {QPalette::WindowText, QColor(220, 220, 220)},
                                   {QPalette::Button, QColor(60, 60, 60)},
                                   {QPalette::ButtonText, QColor(220, 220, 220)}})
            dark.setColor(role, color);
        for (const auto& [name, palette] :
             {std::pair{QStringLiteral("light"), QApplication::palette()},
              {QStringLiteral("dark"), dark}}) {
            QApplication::setPalette(palette);
            CompareWindow w;
            QVERIFY(compared(w, *m_files));
            w.graphPage()->selectKey("n05");
            QTest::qWait(100);
            w.grab().save(dir + QStringLiteral("/comparegraph-") + name + QStringLiteral(".png"));
        }
    }

    void tensorComparisonLeavesNothingOfTheGraph() {
        CompareWindow w;
        QVERIFY(compared(w, *m_files));
        QVERIFY(w.tabs()->isTabVisible(w.tabs()->indexOf(w.graphPage())));
        QVERIFY(w.graphPage()->unionGraph());
        QStringList shown; // no empty tensor pages beside the gradient ones
        for (int i = 0; i < w.tabs()->count(); ++i)
            if (w.tabs()->isTabVisible(i))
                shown << w.tabs()->tabText(i);
        QCOMPARE(shown, (QStringList{QStringLiteral("Graph"), QStringLiteral("Fields"),
                                     QStringLiteral("Optimizer state")}));
        // Nor a tensor filter in the toolbar; the tolerances stay (they
        // apply to the optimizer state).
        // (The entry's action: a narrow window moves the widget itself into
        // the toolbar's overflow menu.)
        const auto toolVisible = [&w](const char* name) {
            const auto* bar = w.findChild<QToolBar*>(QStringLiteral("compareToolBar"));
            for (QAction* a : bar->actions())
                if (bar->widgetForAction(a) &&
                    bar->widgetForAction(a)->objectName() == QLatin1String(name))
                    return a->isVisible();
            return false;
        };
        QVERIFY(!toolVisible("tensorFilter"));
        QVERIFY(!toolVisible("differencesOnly"));
        QVERIFY(toolVisible("atol"));
        Checkpoint a, b;
        a.addTensor({"w", {2}, {1, 2}});
        b.addTensor({"w", {2}, {1, 3}});
        const QString pa = m_files->dir.filePath(QStringLiteral("a.oxck"));
        const QString pb = m_files->dir.filePath(QStringLiteral("b.oxck"));
        a.save(str(pa));
        b.save(str(pb));
        QSignalSpy done(&w, &CompareWindow::comparisonFinished);
        w.compare(pa, pb);
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 10000));
        for (QWidget* page :
             {static_cast<QWidget*>(w.graphPage()), static_cast<QWidget*>(w.optimizerPage())})
            QVERIFY(!w.tabs()->isTabVisible(w.tabs()->indexOf(page)));
        QVERIFY(w.tabs()->isTabVisible(w.tabs()->indexOf(w.metadataPage())));
        QVERIFY(toolVisible("tensorFilter"));
        QVERIFY(toolVisible("differencesOnly"));
        QVERIFY(!w.graphPage()->unionGraph());
        QCOMPARE(w.graphPage()->graphPage()->scene()->nodeCount(), 0);
        QCOMPARE(w.fieldsModel()->rowCount(), 0);
        QCOMPARE(w.optimizerPage()->blobModel()->rowCount(), 0);
    }
};

QTEST_MAIN(TestCompareGraph)
#include "tst_comparegraph.moc"
