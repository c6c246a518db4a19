#include "shell/comparescreenshot.h"

#include "shell/screenshottaker.h"

#include "compare/comparewindow.h"
#include "compare/gradient/comparechanges.h"
#include "compare/gradient/comparegraphpage.h"

#include <QApplication>
#include <QStandardItemModel>
#include <QTimer>
#include <QTreeView>

#include <cstdio>

CompareScreenshot::CompareScreenshot(CompareWindow* window, QString output, QSize size)
    : QObject(window), m_window(window), m_output(std::move(output)) {
    if (size.isValid())
        window->resize(size);
    connect(window, &CompareWindow::comparisonFinished, this, [this] {
        if (!m_window->result()->gradient) {
            QTimer::singleShot(1500, this, &CompareScreenshot::capture); // tensor detail
            return;
        }
        connect(m_window->graphPage(), &CompareGraphPage::graphShown, this,
                &CompareScreenshot::whenSettled, Qt::SingleShotConnection);
    });
    connect(window, &CompareWindow::comparisonFailed, this, [](const QString& message) {
        std::fprintf(stderr, "screenshot: %s\n", qPrintable(message));
        QApplication::exit(1);
    });
}

void CompareScreenshot::whenSettled() {
    // A changed node (else any node change), selected from the list as a
    // user would: the drawing centred on it, its A and B fields shown.
    const QStandardItemModel* m = m_window->changesModel();
    const auto& nodes = m_window->result()->gradient->nodes;
    QModelIndex chosen;
    for (int g = 0; g < m->rowCount(); ++g) {
        const QStandardItem* group = m->item(g);
        for (int r = 0; r < group->rowCount(); ++r) {
            const QStandardItem* item = group->child(r, 0);
            if (item->data(ChangeKindRole).toInt() != int(ChangeKind::Node))
                continue;
            const size_t i = size_t(item->data(ChangeIndexRole).toULongLong());
            if (!chosen.isValid() ||
                (i < nodes.size() && nodes[i].status == ckptscope::DiffStatus::Changed))
                chosen = m->indexFromItem(item);
        }
    }
    if (chosen.isValid())
        m_window->graphPage()->changesView()->setCurrentIndex(chosen);
    QTimer::singleShot(300, this, &CompareScreenshot::capture);
}

void CompareScreenshot::capture() {
    writeScreenshotAndQuit(m_window, m_output);
}
