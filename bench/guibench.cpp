// GUI timings of issue 5, measured offscreen in one process:
//   ckptscope-guibench MODEL.oxck GRAPH.json
// 1. start of main() → window on screen with the tensor tree populated;
// 2. selecting a 1M-value tensor → statistics done and the histogram painted;
// 3. frame time of panning/zooming a large graph (viewport repaints);
// 4. a collapsed graph: expanding one group, Expand All, and its frames.
// Issue 12, a run window instead:
//   ckptscope-guibench --run DIR
// start of main() → run read (from the summary cache when warm) and the
// first tensor's chart painted; then the process's peak RSS.
#include "browser/mainwindow.h"
#include "graph/graphindex.h"
#include "graph/graphpage.h"
#include "graph/graphview.h"
#include "run/runchartview.h"
#include "run/runwindow.h"
#include "tensor/histogramview.h"
#include "tensor/tensorpage.h"
#include "tensor/tensortreemodel.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTest>
#include <QTreeView>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

bool waitFor(const std::function<bool()>& done, int ms = 60000) {
    return QTest::qWaitFor(done, ms);
}

// Start to painted chart of a run window, and the peak RSS.
int runWindowBench(const QString& dir, const QElapsedTimer& sinceStart) {
    auto* window = new RunWindow;
    window->resize(1400, 900);
    window->show();
    QSignalSpy loaded(window, &RunWindow::runLoaded);
    window->openPaths({dir});
    if (!waitFor([&] { return !loaded.isEmpty(); }) || !window->run() ||
        window->run()->checkpoints.empty())
        return 1;
    window->chartView()->grab(); // painted, not just modelled
    std::printf("gui.run_start_to_chart_ms %.1f (%zu checkpoints, cache %llu hits, %llu misses)\n",
                double(sinceStart.nsecsElapsed()) / 1e6, window->run()->checkpoints.size(),
                static_cast<unsigned long long>(window->run()->cacheHits),
                static_cast<unsigned long long>(window->run()->cacheMisses));
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("gui.run_peak_rss_kib %ld\n", usage.ru_maxrss);
    delete window;
    return 0;
}

// Median frame of panning and zooming at several zooms, the whole graph on
// screen (Fit) first.
void panZoomFrames(GraphPage* gp, const char* what) {
    GraphView* view = gp->view();
    // Fit puts the whole graph on screen, every node and edge drawn (the
    // worst case; 0.002 does it for 10 899 nodes, not for 100 000).
    const double fit = view->fitZoom();
    for (double zoom : {fit, 0.002, 0.05, 0.3, 1.0}) {
        view->resetTransform();
        view->scale(zoom, zoom);
        view->centerOn(gp->scene()->itemsBoundingRect().center());
        view->viewport()->grab();
        std::vector<double> frames;
        for (int f = 0; f < 40; ++f) {
            QElapsedTimer t;
            t.start();
            if (f % 10 == 9)
                view->zoomBy(f % 20 == 9 ? 1.1 : 1 / 1.1);
            else
                view->verticalScrollBar()->setValue(view->verticalScrollBar()->value() + 60);
            view->viewport()->grab(); // a full repaint of what is visible
            frames.push_back(double(t.nsecsElapsed()) / 1e6);
        }
        const double ms = median(frames);
        if (zoom == fit)
            std::printf("gui.graph_frame_ms%s zoom=fit %.2f (%.0f fps, zoom %.5f)\n", what, ms,
                        1000.0 / ms, zoom);
        else
            std::printf("gui.graph_frame_ms%s zoom=%.3f %.2f (%.0f fps)\n", what, zoom, ms,
                        1000.0 / ms);
    }
}

// A collapsed graph: the largest groups expanded one at a time (placed,
// redrawn and painted at 1:1, then collapsed), then Expand All drawn whole
// (Fit: every node on screen), and its frames.
void expandBench(GraphPage* gp) {
    std::vector<std::pair<int, int>> sizes(size_t(gp->groupCount())); // (nodes, group)
    for (int g = 0; g < gp->groupCount(); ++g)
        sizes[size_t(g)].second = g;
    for (int i = 0; i < gp->index()->size(); ++i)
        ++sizes[size_t(gp->groupOf(i))].first;
    std::sort(sizes.rbegin(), sizes.rend());
    std::vector<double> ms;
    GraphView* view = gp->view();
    view->resetTransform();
    for (size_t k = 0; k < std::min<size_t>(7, sizes.size()); ++k) {
        QElapsedTimer t;
        t.start();
        gp->setGroupExpanded(sizes[k].second, true);
        const double placed = double(t.nsecsElapsed()) / 1e6;
        view->viewport()->grab();
        ms.push_back(double(t.nsecsElapsed()) / 1e6);
        if (qEnvironmentVariableIsSet("CKPTSCOPE_BENCH_VERBOSE"))
            std::printf("  group %d (%d nodes): placed and redrawn %.2f ms, painted %.2f ms\n",
                        sizes[k].second, sizes[k].first, placed, ms.back() - placed);
        gp->setGroupExpanded(sizes[k].second, false);
    }
    std::printf("gui.graph_expand_group_ms %.2f (median of the %zu largest groups, %d nodes and "
                "more; max %.2f)\n",
                median(ms), ms.size(), sizes[ms.size() - 1].first,
                *std::max_element(ms.begin(), ms.end()));
    QElapsedTimer t;
    t.start();
    gp->expandAll();
    view->fitAll();
    view->viewport()->grab();
    std::printf("gui.graph_expand_all_ms %.1f (expanded, fitted, every node painted)\n",
                double(t.nsecsElapsed()) / 1e6);
    panZoomFrames(gp, ".expanded");
}

int graphBench(const QString& graph) {
    auto* graphWindow = new MainWindow;
    graphWindow->resize(1400, 900);
    graphWindow->show();
    QSignalSpy graphLoaded(graphWindow, &MainWindow::documentLoaded);
    graphWindow->openFile(graph);
    if (!waitFor([&] { return !graphLoaded.isEmpty(); }))
        return 1;
    GraphPage* gp = graphWindow->graphPage();
    graphWindow->tabs()->setCurrentWidget(gp);
    if (!waitFor([&] { return gp->layout() != nullptr && !gp->isLayingOut(); }))
        return 1;
    std::printf("gui.graph_nodes %d (%d groups)\n", gp->index()->size(), gp->groupCount());
    panZoomFrames(gp, "");
    if (gp->isGrouped())
        expandBench(gp);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    QElapsedTimer sinceStart;
    sinceStart.start();
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true); // no saved layouts or recent files
    if (argc == 3 && qstrcmp(argv[1], "--run") == 0)
        return runWindowBench(QString::fromLocal8Bit(argv[2]), sinceStart);
    if (argc < 3) {
        std::fprintf(stderr, "usage: ckptscope-guibench MODEL.oxck GRAPH.json | --run DIR\n");
        return 2;
    }
    const QString model = QString::fromLocal8Bit(argv[1]);
    const QString graph = QString::fromLocal8Bit(argv[2]);

    // 1. Start to populated tree.
    auto* window = new MainWindow;
    window->resize(1400, 900);
    window->show();
    QSignalSpy loaded(window, &MainWindow::documentLoaded);
    window->openFile(model);
    if (!waitFor([&] { return !loaded.isEmpty() && window->tensorProxy()->rowCount() > 0; }))
        return 1;
    window->tensorTree()->viewport()->grab(); // painted, not just modelled
    const double startToTree = double(sinceStart.nsecsElapsed()) / 1e6;
    std::printf("gui.start_to_tree_ms %.1f\n", startToTree);

    // 2. Selection → histogram painted, over tensors of about 1M values.
    auto doc = window->document();
    std::vector<double> histogramMs;
    TensorPage* page = window->tensorPage();
    for (size_t i = 0; i < doc->tensors().size() && histogramMs.size() < 7; ++i) {
        if (doc->tensors()[i].dataLen < 1'000'000)
            continue;
        QSignalSpy ready(page, &TensorPage::statsReady);
        QElapsedTimer t;
        t.start();
        window->selectTensor(QString::fromStdString(doc->tensors()[i].name));
        if (!waitFor([&] { return !ready.isEmpty(); }))
            return 1;
        page->histogramView()->grab();
        histogramMs.push_back(double(t.nsecsElapsed()) / 1e6);
    }
    std::printf("gui.select_to_histogram_ms %.1f (median of %zu tensors of >= 1M values)\n",
                median(histogramMs), histogramMs.size());

    // 3. Pan and zoom a large graph; 4. expand its groups.
    return graphBench(graph);
}
