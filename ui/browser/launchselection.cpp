#include "browser/launchselection.h"

#include "browser/mainwindow.h"
#include "graph/graphpage.h"

#include <QTabWidget>

#include <cstdio>

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
    if (!tab.isEmpty()) {
        QTabWidget* tabs = window->tabs();
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
        if (found >= 0)
            tabs->setCurrentIndex(found);
        else
            problems << QStringLiteral("no tab '%1' for this file (tabs: %2)")
                            .arg(tab, titles.join(QStringLiteral(", ")));
    }
    return problems;
}

void LaunchSelection::applyOnLoad(MainWindow* window) const {
    if (select.isEmpty() && tab.isEmpty())
        return;
    const LaunchSelection request = *this;
    QObject::connect(
        window, &MainWindow::documentLoaded, window,
        [window, request] {
            for (const QString& problem : request.applyTo(window))
                std::fprintf(stderr, "ckptscope: %s\n", qPrintable(problem));
        },
        Qt::SingleShotConnection);
}
