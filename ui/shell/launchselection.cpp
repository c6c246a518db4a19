#include "shell/launchselection.h"

#include "browser/mainwindow.h"
#include "compare/comparewindow.h"
#include "graph/graphpage.h"

#include <QTabWidget>

#include <cstdio>

namespace {

template <typename Window> void applyAndReport(Window* window, const LaunchSelection& request) {
    for (const QString& problem : request.applyTo(window))
        std::fprintf(stderr, "ckptscope: %s\n", qPrintable(problem));
}

} // namespace

QString LaunchSelection::showTab(QTabWidget* tabs) const {
    QStringList titles;
    int found = -1;
    for (int i = 0; i < tabs->count(); ++i) {
        if (!tabs->isTabVisible(i))
            continue;
        const QString title = tabs->tabText(i).remove(QLatin1Char('&'));
        titles << title;
        if (found < 0 && title.compare(tab, Qt::CaseInsensitive) == 0)
            found = i;
    }
    if (found >= 0) {
        tabs->setCurrentIndex(found);
        return {};
    }
    return QStringLiteral("no tab '%1' for this file (tabs: %2)")
        .arg(tab, titles.join(QStringLiteral(", ")));
}

QStringList LaunchSelection::applyTo(MainWindow* window) const {
    QStringList problems;
    if (!select.isEmpty() && !window->selectTensor(select)) {
        // Gradient checkpoints have no tensors: the name may be a node id.
        GraphPage* graph = window->graphPage();
        const int node = graph->index() ? graph->index()->indexOf(select.toStdString()) : -1;
        if (node >= 0)
            graph->selectNode(node);
        else
            problems << QStringLiteral("no tensor or graph node named '%1'").arg(select);
    }
    if (!tab.isEmpty())
        if (const QString problem = showTab(window->tabs()); !problem.isEmpty())
            problems << problem;
    return problems;
}

QStringList LaunchSelection::applyTo(CompareWindow* window) const {
    QStringList problems;
    if (!select.isEmpty()) {
        const CompareResult* result = window->result();
        int found = -1;
        if (result && result->tensors) {
            const auto& tensors = result->tensors->tensors;
            const std::string name = select.toStdString();
            for (size_t i = 0; i < tensors.size() && found < 0; ++i)
                if (tensors[i].name == name || tensors[i].nameB == name) // B's, when mapped
                    found = int(i);
        }
        if (found >= 0)
            window->selectTensor(found);
        else
            problems << QStringLiteral("no tensor named '%1' in A or B").arg(select);
    }
    if (!tab.isEmpty())
        if (const QString problem = showTab(window->tabs()); !problem.isEmpty())
            problems << problem;
    return problems;
}

void LaunchSelection::applyOnLoad(MainWindow* window) const {
    if (select.isEmpty() && tab.isEmpty())
        return;
    // Once, after the next load; a node id is looked up in the graph's
    // index, which is made after the load. What could not be applied goes
    // to stderr.
    QObject::connect(
        window, &MainWindow::documentLoaded, window,
        [window, request = *this] {
            window->graphPage()->whenIndexed(
                window, [window, request] { applyAndReport(window, request); });
        },
        Qt::SingleShotConnection);
}

void LaunchSelection::applyOnLoad(CompareWindow* window) const {
    if (!select.isEmpty() || !tab.isEmpty())
        QObject::connect(
            window, &CompareWindow::comparisonFinished, window,
            [window, request = *this] { applyAndReport(window, request); },
            Qt::SingleShotConnection);
}
