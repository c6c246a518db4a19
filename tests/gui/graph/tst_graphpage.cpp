#include "common/sizeformat.h"
#include "graph/graphexport.h"
#include "graph/graphindex.h"
#include "graph/graphminimap.h"
#include "graph/graphpage.h"
#include "graph/graphscene.h"
#include "graph/graphview.h"
#include "graph/nodeinspector.h"

#include "ckptscope/document/document.h"
#include "ckptscope/export/samplegenerator.h"

#include "guisupport.h"

#include <QAction>
#include <QFile>
#include <QGuiApplication>
#include <QImage>
#include <QLabel>
#include <QSignalSpy>
#include <QStyleHints>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <set>

using namespace ckptscope;

namespace {

std::shared_ptr<const Document> sample() {
    return Document::open(std::string(CKPTSCOPE_SOURCE_DIR) +
                          "/resources/samples/gradient_sample.json");
}

// Ancestors straight from the stored edges, independent of the GUI's index.
std::set<std::string> ancestorsOf(const ComputationGraphStore& g, const std::string& id) {
    std::set<std::string> seen;
    std::vector<std::string> stack{id};
    while (!stack.empty()) {
        const std::string n = stack.back();
        stack.pop_back();
        for (const auto& [from, to] : g.edges())
            if (to == n && g.getNode(from) && seen.insert(from).second)
                stack.push_back(from);
    }
    return seen;
}

// A generated transformer-like graph of exactly `nodes` nodes.
std::shared_ptr<const Document> generated(uint64_t nodes) {
    SyntheticGraphSpec spec;
    spec.nodeCount = nodes;
    const std::string json = makeSyntheticGradient(spec).toJson();
    return Document::open(std::make_shared<MemorySource>(
        std::vector<uint8_t>(json.begin(), json.end()), "generated.json"));
}

// The minimap's area in viewport coordinates.
QRect minimapInViewport(GraphPage& page) {
    const auto* map = page.findChild<GraphMinimap*>();
    if (!map || !map->isVisible())
        return {};
    return QRect(page.view()->viewport()->mapFrom(page.view(), map->geometry().topLeft()),
                 map->size());
}

QRectF itemInViewport(GraphPage& page, int node) {
    return page.view()->mapFromScene(page.scene()->nodeRect(node)).boundingRect();
}

// With CKPTSCOPE_TEST_SHOTS=DIR, saves what the widget shows as DIR/NAME.png
// (to look at the drawing under Xvfb).
void shot(QWidget& w, const char* name) {
    const QByteArray dir = qgetenv("CKPTSCOPE_TEST_SHOTS");
    if (!dir.isEmpty())
        w.grab().save(QString::fromLocal8Bit(dir + '/' + name + ".png"));
}

// The layout waits for the page to be shown: a page of its own is shown.
bool waitLayout(GraphPage& page) {
    QSignalSpy done(&page, &GraphPage::layoutFinished);
    if (!page.parentWidget() && !page.isVisible())
        page.show();
    return page.layout() || QTest::qWaitFor([&] { return !done.isEmpty(); }, 20000);
}

// A page shown (1200×800 unless told) with the document laid out (null on timeout).
std::unique_ptr<GraphPage> shownPage(std::shared_ptr<const Document> doc,
                                     QSize size = QSize(1200, 800)) {
    auto page = std::make_unique<GraphPage>();
    page->resize(size);
    page->show();
    if (!QTest::qWaitForWindowExposed(page.get()))
        return nullptr;
    page->setDocument(std::move(doc));
    return waitLayout(*page) ? std::move(page) : nullptr;
}

// As a user double-clicks: press and release, then the double-click (the
// scene delivers a double-click only to the item that took the press).
void doubleClick(QWidget* w, QPoint at) {
    QTest::mouseClick(w, Qt::LeftButton, {}, at);
    QTest::mouseDClick(w, Qt::LeftButton, {}, at);
}

// A graph past the collapse threshold, made once.
constexpr int kLarge = GraphPage::kCollapseAbove + 4000;
std::shared_ptr<const Document> largeGraph() {
    static const std::shared_ptr<const Document> doc = generated(uint64_t(kLarge));
    return doc;
}

} // namespace

class TestGraphPage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void layoutAppearsAndInspectorShowsTheNode() {
        GraphPage page;
        page.resize(1200, 800);
        page.show();
        auto doc = sample();
        page.setDocument(doc);
        QVERIFY(waitLayout(page));
        const auto& graph = doc->gradient()->graph;
        QCOMPARE(size_t(page.scene()->nodeCount()), graph.nodeCount());
        const ComputationNode* loss = doc->gradient()->lossNode();
        QVERIFY(loss);
        const ComputationNode* producer = graph.findProducer(loss->inputCids.at(0));
        QVERIFY(producer);
        page.selectNode(page.index()->indexOf(loss->id));
        const QString text = page.inspector()->text();
        QVERIFY(text.contains(QString::fromStdString(loss->id)));
        QVERIFY(text.contains(QString::fromStdString(loss->op)));
        QVERIFY(text.contains(QString::fromStdString(*loss->outputCid)));
        QVERIFY(
            text.contains(QString::fromStdString(producer->id))); // input linked to its producer
        QVERIFY(text.contains(QStringLiteral("this node computes the loss")));
        QCOMPARE(page.selectedNode(), page.index()->indexOf(loss->id));
    }

    void highlightingBeforeTheDrawingExistsIsHarmless() {
        GraphPage page;
        page.setDocument(sample()); // the node list is there, the layout is not yet
        QVERIFY(QTest::qWaitFor([&] { return !page.isIndexing(); }, 20000));
        page.highlightProvenance(page.index()->size() - 1);
        page.highlightConsumers(0);
        QVERIFY(waitLayout(page));
        QCOMPARE(page.scene()->nodeCount(), page.index()->size());
    }

    void provenanceMarksExactlyTheAncestors() {
        GraphPage page;
        auto doc = sample();
        page.setDocument(doc);
        QVERIFY(waitLayout(page));
        const auto& graph = doc->gradient()->graph;
        const ComputationNode* loss = doc->gradient()->lossNode();
        const int focus = page.index()->indexOf(loss->id);
        page.highlightProvenance(focus);
        const std::set<std::string> expected = ancestorsOf(graph, loss->id);
        QVERIFY(expected.size() > 10);
        std::set<std::string> marked;
        for (int i = 0; i < page.scene()->nodeCount(); ++i) {
            const auto mark = page.scene()->nodeMark(i);
            if (mark == GraphScene::Mark::Highlighted)
                marked.insert(page.index()->id(i));
            else if (i != focus)
                QCOMPARE(int(mark), int(GraphScene::Mark::Dimmed));
        }
        QCOMPARE(marked, expected);
        page.highlightConsumers(focus); // the loss consumes nothing further
        QVERIFY(page.scene()->highlighted().empty());
    }

    void searchFindsAndCentres() {
        GraphPage page;
        page.resize(1200, 800);
        page.show();
        auto doc = sample();
        page.setDocument(doc);
        QVERIFY(waitLayout(page));
        size_t gelus = 0;
        for (const auto& [id, n] : doc->gradient()->graph.nodes())
            gelus += n.op == "gelu";
        QCOMPARE(size_t(page.search(QStringLiteral("GELU"))), gelus);
        const int first = page.selectedNode();
        QCOMPARE(
            QString::fromStdString(doc->gradient()->graph.getNode(page.index()->id(first))->op),
            QStringLiteral("gelu"));
        // Centred as far as the scene's edges allow: in view, near the middle.
        const QRectF visible =
            page.view()->mapToScene(page.view()->viewport()->rect()).boundingRect();
        const QRectF item = page.scene()->nodeRect(first);
        QVERIFY2(visible.contains(item), "the match is in view");
        QVERIFY2(std::abs(item.center().y() - visible.center().y()) < visible.height() / 4,
                 "the match is near the middle");
        page.findNext(1);
        QVERIFY(page.selectedNode() != first);
        // An id prefix finds exactly that node.
        const std::string id = page.index()->id(3);
        QCOMPARE(page.search(QString::fromStdString(id.substr(0, 13))), 1);
        QCOMPARE(page.selectedNode(), 3);
    }

    void goToLossSelectsTheLossNode() {
        GraphPage page;
        auto doc = sample();
        page.setDocument(doc);
        QVERIFY(waitLayout(page));
        page.goToLoss();
        QCOMPARE(page.index()->id(page.selectedNode()), doc->gradient()->lossNode()->id);
    }

    // Pressed in the moment the graph is being indexed (a large file's first
    // 0.1–0.2 s), Go to loss and a search are done when the index arrives,
    // not dropped, and the search status never says "0 matches" meanwhile.
    void askedWhileIndexing() {
        GraphPage page;
        page.resize(1200, 800);
        page.show();
        auto doc = sample();
        page.setDocument(doc);
        QVERIFY(page.isIndexing()); // the index comes from a background task
        page.goToLoss();
        QVERIFY(waitLayout(page));
        QCOMPARE(page.index()->id(page.selectedNode()), doc->gradient()->lossNode()->id);

        page.setDocument(doc);
        QVERIFY(page.isIndexing());
        QCOMPARE(page.search(QStringLiteral("GELU")), 0);
        bool saysIndexing = false;
        for (const QLabel* label : page.findChildren<QLabel*>())
            saysIndexing = saysIndexing || label->text() == QStringLiteral("indexing…");
        QVERIFY(saysIndexing);
        QVERIFY(waitLayout(page));
        const int chosen = page.selectedNode();
        QVERIFY(chosen >= 0);
        QCOMPARE(
            QString::fromStdString(doc->gradient()->graph.getNode(page.index()->id(chosen))->op),
            QStringLiteral("gelu"));
    }

    void exportsSvgAndPng() {
        GraphPage page;
        page.setDocument(sample());
        QVERIFY(waitLayout(page));
        QTemporaryDir dir;
        const QString svg = dir.filePath(QStringLiteral("g.svg"));
        QCOMPARE(page.exportTo(svg), QString());
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY(text.startsWith("<?xml"));
        QVERIFY(text.contains("<svg"));
        QVERIFY(text.contains("</svg>"));
        QVERIFY(text.contains("cross_entropy")); // labels are in the drawing
        const QString png = dir.filePath(QStringLiteral("g.png"));
        QCOMPARE(page.exportTo(png), QString());
        const QImage image(png);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() > 100 && image.height() > 100);
        QVERIFY(!page.exportTo(dir.filePath(QStringLiteral("g.bmpx"))).isEmpty());
    }
    // A page laid out while its tab was hidden (a window restored from
    // settings) shows the minimap in the viewport's corner once shown.
    void minimapSitsInTheCornerWhenShownLater() {
        QTabWidget tabs;
        tabs.addTab(new QWidget, QStringLiteral("Overview"));
        auto* page = new GraphPage;
        tabs.addTab(page, QStringLiteral("Graph"));
        tabs.resize(1300, 900);
        tabs.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tabs));
        page->setDocument(generated(207));
        QVERIFY(QTest::qWaitFor([&] { return !page->isIndexing(); }, 20000));
        QTest::qWait(50);
        QVERIFY(!page->layout()); // nothing laid out for a hidden page
        QCOMPARE(page->scene()->nodeCount(), 0);
        QCOMPARE(page->index()->size(), 207); // the node list has what it needs
        tabs.setCurrentWidget(page);
        QVERIFY(waitLayout(*page));
        QTest::qWait(50);
        const QRect viewport = page->view()->viewport()->rect();
        const QRect map = minimapInViewport(*page);
        QVERIFY(!map.isEmpty());
        shot(tabs, "minimap-shown-later");
        QVERIFY2(viewport.contains(map), "the minimap lies inside the viewport");
        // Bottom-right corner, a small margin away from both edges.
        QVERIFY2(viewport.right() - map.right() <= 16 && viewport.right() - map.right() >= 0,
                 qPrintable(QStringLiteral("right gap %1").arg(viewport.right() - map.right())));
        QVERIFY2(viewport.bottom() - map.bottom() <= 16 && viewport.bottom() - map.bottom() >= 0,
                 qPrintable(QStringLiteral("bottom gap %1").arg(viewport.bottom() - map.bottom())));
        // And it follows a resize of the window.
        tabs.resize(1000, 700);
        QTest::qWait(50);
        const QRect after = minimapInViewport(*page);
        QVERIFY(page->view()->viewport()->rect().contains(after));
        QVERIFY(page->view()->viewport()->rect().right() - after.right() <= 16);
    }

    // Go to loss brings the loss node (last in the drawing) fully into view
    // and clear of the minimap, however close to the drawing's edge it is.
    void goToLossKeepsTheNodeClearOfTheMinimap_data() {
        QTest::addColumn<QSize>("size");
        QTest::newRow("wide") << QSize(1200, 800);
        QTest::newRow("narrow") << QSize(700, 600); // the minimap spans the middle
    }
    void goToLossKeepsTheNodeClearOfTheMinimap() {
        QFETCH(QSize, size);
        auto doc = generated(207);
        const auto shown = shownPage(doc, size);
        QVERIFY(shown);
        GraphPage& page = *shown;
        page.goToLoss();
        const int loss = page.selectedNode();
        QCOMPARE(page.index()->id(loss), doc->gradient()->lossNode()->id);
        const QRectF item = itemInViewport(page, loss);
        const QRect viewport = page.view()->viewport()->rect();
        QVERIFY2(QRectF(viewport).contains(item), "the loss node is wholly in view");
        const QRect map = minimapInViewport(page);
        QVERIFY(!map.isEmpty());
        QVERIFY2(!item.intersects(map), "the minimap does not cover the loss node");
        shot(page, "gotoloss207");
    }

    // Fit shows every node of a large graph, whatever zoom that takes; zoom
    // out stops there instead of jumping back in.
    void fitShowsTheWholeLargeGraph() {
        const auto shown = shownPage(generated(10000));
        QVERIFY(shown);
        GraphPage& page = *shown;
        QCOMPARE(page.scene()->nodeCount(), 10000);
        page.view()->fitAll();
        const QRectF visible =
            page.view()->mapToScene(page.view()->viewport()->rect()).boundingRect();
        QVERIFY2(visible.contains(page.scene()->itemsBoundingRect()),
                 qPrintable(QStringLiteral("zoom %1").arg(page.view()->zoom())));
        const double fitted = page.view()->zoom();
        page.view()->zoomBy(0.8);
        QVERIFY(page.view()->zoom() <= fitted);
        page.view()->zoomBy(1.25);
        QVERIFY(page.view()->zoom() > fitted * 0.99);
        page.view()->fitAll();
        shot(page, "fit10000");
    }

    // Switching top-down ↔ left-right keeps the selected node, the
    // inspector and the highlight.
    void orientationKeepsSelectionAndHighlight() {
        auto doc = sample();
        const auto shown = shownPage(doc);
        QVERIFY(shown);
        GraphPage& page = *shown;
        const int loss = page.index()->indexOf(doc->gradient()->lossNode()->id);
        page.selectNode(loss);
        page.highlightProvenance(loss);
        const std::vector<int> highlighted = page.scene()->highlighted();
        QVERIFY(!highlighted.empty());
        const QString inspected = page.inspector()->text();
        QSignalSpy done(&page, &GraphPage::layoutFinished);
        page.setOrientation(GraphScene::Orientation::LeftRight);
        QCOMPARE(page.inspector()->text(), inspected); // also while laying out
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 20000));
        QCOMPARE(page.scene()->orientation(), GraphScene::Orientation::LeftRight);
        QCOMPARE(page.selectedNode(), loss);
        QCOMPARE(page.inspector()->node(), loss);
        QCOMPARE(page.inspector()->text(), inspected);
        QCOMPARE(page.scene()->highlighted(), highlighted);
        QCOMPARE(int(page.scene()->nodeMark(highlighted.front())),
                 int(GraphScene::Mark::Highlighted));
        const QRectF item = itemInViewport(page, loss);
        QVERIFY2(QRectF(page.view()->viewport()->rect()).contains(item), "still in view");
        shot(page, "leftright-kept");
        done.clear();
        page.setOrientation(GraphScene::Orientation::TopDown);
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 20000));
        QCOMPARE(page.selectedNode(), loss);
        QCOMPARE(page.scene()->highlighted(), highlighted);
    }

    // The chosen filter supplies the extension of a bare name.
    void exportNameTakesTheFiltersExtension() {
        QCOMPARE(exportPath(QStringLiteral("/tmp/graph"), QStringLiteral("PNG (*.png)")),
                 QStringLiteral("/tmp/graph.png"));
        QCOMPARE(exportPath(QStringLiteral("/tmp/graph"), QStringLiteral("SVG (*.svg)")),
                 QStringLiteral("/tmp/graph.svg"));
        QCOMPARE(exportPath(QStringLiteral("/tmp/a.b/graph.v2"), QStringLiteral("PNG (*.png)")),
                 QStringLiteral("/tmp/a.b/graph.v2.png"));
        // A typed suffix wins over the filter.
        QCOMPARE(exportPath(QStringLiteral("/tmp/graph.svg"), QStringLiteral("PNG (*.png)")),
                 QStringLiteral("/tmp/graph.svg"));
        GraphPage page;
        page.setDocument(sample());
        QVERIFY(waitLayout(page));
        QTemporaryDir dir;
        const QString typed = dir.filePath(QStringLiteral("graph"));
        QCOMPARE(page.exportTo(exportPath(typed, QStringLiteral("PNG (*.png)"))), QString());
        QVERIFY(!QImage(typed + QStringLiteral(".png")).isNull());
    }

    // Picking goes through the canvas's grid: a click on a node selects it
    // (inspector and signal), hovering shows its tooltip, and a click on
    // empty space selects nothing (and pans instead).
    void clickAndHoverPickTheNodeUnderTheCursor() {
        auto shown = shownPage(generated(207));
        QVERIFY(shown);
        GraphPage& page = *shown;
        GraphView* view = page.view();
        const GraphScene* scene = page.scene();
        const QRect overlay = view->overlayRect();
        int target = -1;
        for (int i = 0; i < scene->nodeCount() && target < 0; ++i) {
            const QRectF box = view->mapFromScene(scene->nodeRect(i)).boundingRect();
            if (QRectF(view->viewport()->rect()).contains(box) && !box.intersects(overlay))
                target = i;
        }
        QVERIFY(target >= 0);
        const QPoint at = view->mapFromScene(scene->nodeRect(target).center());
        QCOMPARE(scene->nodeAt(view->mapToScene(at), view->zoom()), target);
        QSignalSpy selected(&page, &GraphPage::nodeSelected);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(page.selectedNode(), target);
        QCOMPARE(page.inspector()->node(), target);
        QVERIFY(!selected.isEmpty());
        QCOMPARE(selected.last().at(0).toInt(), target);
        QTest::mouseMove(view->viewport(), at);
        QTRY_COMPARE(scene->canvas()->toolTip(), scene->nodeToolTip(target));
        // A point 12 pixels clear of every box: no node there.
        QPoint empty(-1, -1);
        for (int y = 5; y < view->viewport()->height() && empty.x() < 0; y += 7)
            for (int x = 5; x < view->viewport()->width() && empty.x() < 0; x += 7) {
                const QRect clear(x - 12, y - 12, 24, 24);
                bool near = overlay.intersects(clear);
                for (int i = 0; i < scene->nodeCount() && !near; ++i)
                    near = view->mapFromScene(scene->nodeRect(i)).boundingRect().intersects(clear);
                if (!near)
                    empty = QPoint(x, y);
            }
        QVERIFY(empty.x() >= 0);
        QCOMPARE(scene->nodeAt(view->mapToScene(empty), view->zoom()), -1);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, empty);
        QCOMPARE(page.selectedNode(), -1);
        QCOMPARE(page.inspector()->node(), target); // the inspector keeps the last node
    }

    // Node tooltips, the inspector and warnings show the file's text as it is,
    // never as HTML.
    void fileTextShownExactly() {
        const std::string op = "<b>mat&mul</b>", id = "n<1>&quot;";
        ComputationGraphStore g;
        ComputationNode n(id, op, {"in<put>"});
        n.outputCid = "cid&amp;1";
        g.insertNode(std::move(n));
        const std::string json = GradientCheckpoint(std::move(g), 1).toJson();
        GraphPage page;
        page.setDocument(Document::open(std::make_shared<MemorySource>(
            std::vector<uint8_t>(json.begin(), json.end()), "odd.json")));
        QVERIFY(waitLayout(page));
        QCOMPARE(page.scene()->nodeCount(), 1);
        QCOMPARE(guisupport::shownText(page.scene()->nodeToolTip(0)),
                 QString::fromStdString(op + "\n" + id));
        page.selectNode(0);
        const QString text = page.inspector()->text();
        for (const std::string& s : {op, id, std::string("in<put>"), std::string("cid&amp;1")})
            QVERIFY2(text.contains(QString::fromStdString(s)), qPrintable(text));
    }

    // Collapse by structure: a graph past the threshold opens as a few
    // hundred group boxes, no node drawn; a small one as before.
    void largeGraphOpensCollapsed() {
        const auto shown = shownPage(largeGraph());
        QVERIFY(shown);
        GraphPage& page = *shown;
        const GraphScene* scene = page.scene();
        QVERIFY(page.isGrouped());
        QCOMPARE(page.index()->size(), kLarge);
        QVERIFY(page.groupCount() > 10);
        QVERIFY(page.groupCount() <= 400);
        QCOMPARE(scene->groupCount(), page.groupCount());
        std::vector<int> members(size_t(page.groupCount()), 0);
        std::vector<std::set<QString>> ops(size_t(page.groupCount()));
        for (int i = 0; i < kLarge; ++i) {
            QVERIFY(scene->nodeRect(i).isEmpty());
            QVERIFY(page.groupOf(i) >= 0 && page.groupOf(i) < page.groupCount());
            ++members[size_t(page.groupOf(i))];
            ops[size_t(page.groupOf(i))].insert(QString::fromStdString(page.index()->node(i)->op));
        }
        for (int g = 0; g < page.groupCount(); ++g) {
            QVERIFY(members[size_t(g)] > 0);
            QVERIFY(!scene->groupRect(g).isEmpty());
            // Labelled with its ops (one or two by name, else how many) and
            // its node count: a box never names one op for several.
            const QString label = scene->groupLayer()->group(g).label;
            const QString count =
                QStringLiteral(" ×") + groupedNumber(uint64_t(members[size_t(g)]));
            QVERIFY2(label.endsWith(count), qPrintable(label));
            const QString what = label.chopped(count.size());
            const auto& set = ops[size_t(g)];
            if (set.size() <= 2) {
                const QStringList named = what.split(QStringLiteral(" + "));
                QCOMPARE(std::set<QString>(named.begin(), named.end()), set);
            } else {
                QVERIFY2(what.endsWith(QStringLiteral(" (%1 ops)").arg(set.size())),
                         qPrintable(label));
            }
        }
        // Bundles stand for every edge between two groups, once.
        const auto& layout = *page.layout();
        uint64_t between = 0, drawn = 0;
        for (const LayoutEdge& e : layout.edges) {
            between += page.groupOf(int(e.from)) != page.groupOf(int(e.to));
            drawn += e.points.size() >= 2;
        }
        uint64_t bundled = 0;
        for (int b = 0; b < scene->groupLayer()->bundleCount(); ++b)
            bundled += scene->groupLayer()->bundle(b).count;
        QCOMPARE(drawn, uint64_t(0));
        QCOMPARE(bundled, between);
        page.view()->fitAll(); // Fit shows every box
        const QRectF visible =
            page.view()->mapToScene(page.view()->viewport()->rect()).boundingRect();
        for (int g = 0; g < page.groupCount(); ++g)
            QVERIFY(visible.contains(scene->groupRect(g)));
        shot(page, "collapsed");

        const auto small = shownPage(generated(300));
        QVERIFY(small);
        QVERIFY(!small->isGrouped());
        QCOMPARE(small->scene()->groupCount(), 0);
        for (int i = 0; i < 300; ++i)
            QVERIFY(!small->scene()->nodeRect(i).isEmpty());
    }

    void doubleClickExpandsAndCollapsesOneGroup() {
        const auto shown = shownPage(largeGraph());
        QVERIFY(shown);
        GraphPage& page = *shown;
        GraphView* view = page.view();
        const GraphScene* scene = page.scene();
        // The largest group of a band in the middle of the graph.
        int group = -1;
        for (int g = page.groupCount() / 2; g < page.groupCount() && group < 0; ++g)
            if (scene->groupLayer()->group(g).family == OpFamily::MatMul)
                group = g;
        QVERIFY(group >= 0);
        view->resetTransform();
        view->centerOn(scene->groupRect(group).center());
        const QPoint at = view->mapFromScene(scene->groupRect(group).center());
        doubleClick(view->viewport(), at);
        QTRY_VERIFY(page.isGroupExpanded(group));
        std::vector<int> inside;
        for (int i = 0; i < kLarge; ++i) {
            const bool drawn = !scene->nodeRect(i).isEmpty();
            QCOMPARE(drawn, page.groupOf(i) == group);
            if (drawn) {
                inside.push_back(i);
                QVERIFY(scene->groupRect(group).contains(scene->nodeRect(i)));
            }
        }
        QVERIFY(inside.size() > 1);
        // Its nodes are picked and selected by a click.
        const int node = inside[inside.size() / 2];
        view->centerOn(scene->nodeRect(node).center());
        const QPoint nodeAt = view->mapFromScene(scene->nodeRect(node).center());
        QCOMPARE(scene->nodeAt(view->mapToScene(nodeAt), view->zoom()), node);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, nodeAt);
        QCOMPARE(page.selectedNode(), node);
        // A double-click on the frame's title strip collapses it again.
        const QRectF title = scene->groupLayer()->group(group).title;
        view->centerOn(title.center());
        // (Past the double-click interval: the click above is not its first half.)
        QTest::qWait(QGuiApplication::styleHints()->mouseDoubleClickInterval() + 50);
        doubleClick(view->viewport(), view->mapFromScene(title.center()));
        QTRY_VERIFY(!page.isGroupExpanded(group));
        for (int i : inside)
            QVERIFY(scene->nodeRect(i).isEmpty());
    }

    void expandAllDrawsEveryNodeAndEdge() {
        const auto shown = shownPage(largeGraph());
        QVERIFY(shown);
        GraphPage& page = *shown;
        const GraphScene* scene = page.scene();
        QCOMPARE(page.groupActions().size(), 2);
        // A node selected far from the start stays selected and in view.
        const int chosen = int(page.index()->listOrder()[size_t(kLarge * 3 / 4)]);
        page.selectNode(chosen);
        page.groupActions().at(0)->trigger(); // View ▸ Expand All
        QCOMPARE(page.selectedNode(), chosen);
        QVERIFY(page.view()
                    ->mapToScene(page.view()->viewport()->rect())
                    .boundingRect()
                    .contains(scene->nodeRect(chosen)));
        for (int i = 0; i < kLarge; ++i)
            QVERIFY(!scene->nodeRect(i).isEmpty());
        QCOMPARE(size_t(scene->edgeCount()), page.layout()->edges.size());
        for (int e = 0; e < scene->edgeCount(); ++e)
            QVERIFY(scene->edgeRoute(e).size() >= 2);
        QCOMPARE(scene->groupLayer()->bundleCount(), 0);
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("all.png"));
        QCOMPARE(page.exportTo(png), QString());
        QVERIFY(!QImage(png).isNull());
        page.groupActions().at(1)->trigger(); // Collapse All
        for (int g = 0; g < page.groupCount(); ++g)
            QVERIFY(!page.isGroupExpanded(g));
        // Its group, now a box, in view.
        QVERIFY(page.view()
                    ->mapToScene(page.view()->viewport()->rect())
                    .boundingRect()
                    .intersects(scene->groupRect(page.groupOf(chosen))));
        for (int i = 0; i < kLarge; ++i)
            QVERIFY(scene->nodeRect(i).isEmpty());
        // Export draws what the view shows: the boxes.
        const QString svg = dir.filePath(QStringLiteral("boxes.svg"));
        QCOMPARE(page.exportTo(svg), QString());
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().contains(
            scene->groupLayer()->group(page.groupCount() / 2).label.toUtf8()));
    }

    void searchLossAndProvenanceExpandTheirGroups() {
        const auto shown = shownPage(largeGraph());
        QVERIFY(shown);
        GraphPage& page = *shown;
        const GraphScene* scene = page.scene();
        const GraphIndex& index = *page.index();
        const int target = int(index.listOrder()[size_t(kLarge / 3)]);
        QVERIFY(page.search(QString::fromStdString(index.id(target))) >= 1);
        QCOMPARE(page.selectedNode(), target);
        QVERIFY(page.isGroupExpanded(page.groupOf(target)));
        QVERIFY(!scene->nodeRect(target).isEmpty());
        const QRectF visible =
            page.view()->mapToScene(page.view()->viewport()->rect()).boundingRect();
        QVERIFY(visible.contains(scene->nodeRect(target)));

        page.goToLoss();
        const ComputationNode* loss = largeGraph()->gradient()->lossNode();
        QVERIFY(loss);
        QCOMPARE(index.node(page.selectedNode()), loss);
        QVERIFY(!scene->nodeRect(page.selectedNode()).isEmpty());

        // Provenance: the focus's group expanded, the collapsed groups that
        // hold an ancestor marked, the others dimmed.
        page.collapseAll();
        const int focus = int(index.listOrder()[size_t(kLarge / 2)]);
        page.highlightProvenance(focus);
        QVERIFY(page.isGroupExpanded(page.groupOf(focus)));
        std::vector<char> holds(size_t(page.groupCount()), 0);
        for (int a : index.ancestors(focus))
            holds[size_t(page.groupOf(a))] = 1;
        for (int g = 0; g < page.groupCount(); ++g)
            if (!page.isGroupExpanded(g))
                QCOMPARE(scene->groupLayer()->groupMark(g), holds[size_t(g)]
                                                                ? GraphGroupLayer::Mark::Highlighted
                                                                : GraphGroupLayer::Mark::Dimmed);
    }

    void leftToRightKeepsGroupsAroundTheirNodes() {
        const auto shown = shownPage(largeGraph());
        QVERIFY(shown);
        GraphPage& page = *shown;
        QSignalSpy done(&page, &GraphPage::layoutFinished);
        page.setOrientation(GraphScene::Orientation::LeftRight);
        QVERIFY(done.wait(20000));
        QVERIFY(page.isGrouped());
        const GraphScene* scene = page.scene();
        const int group = page.groupCount() / 2;
        page.setGroupExpanded(group, true);
        const GraphGroupLayer::Group& frame = scene->groupLayer()->group(group);
        QVERIFY(frame.expanded);
        QVERIFY(frame.title.height() > frame.title.width()); // down the left side
        int inside = 0;
        for (int i = 0; i < kLarge; ++i)
            if (page.groupOf(i) == group) {
                QVERIFY(frame.box.contains(scene->nodeRect(i)));
                QVERIFY(!frame.title.intersects(scene->nodeRect(i)));
                ++inside;
            }
        QVERIFY(inside > 0);
        page.view()->centerOn(frame.title.center());
        shot(page, "grouped-lr");
    }
};

QTEST_MAIN(TestGraphPage)
#include "tst_graphpage.moc"
