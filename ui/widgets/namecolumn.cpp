#include "widgets/namecolumn.h"

#include "common/eventhook.h"

#include <QHeaderView>
#include <QTreeView>

#include <algorithm>
#include <utility>

void prepareNameColumn(QTreeView* tree) {
    tree->setTextElideMode(Qt::ElideMiddle);
    tree->header()->setResizeContentsPrecision(10000);
}

int namesWidth(const QTreeView* tree, int column) {
    const QAbstractItemView* view = tree; // sizeHintForColumn is public there
    return view->sizeHintForColumn(column);
}

int nameColumnWidth(const QTreeView* tree, int need) {
    const int cap =
        std::max(tree->viewport()->width() / 2, 80 * tree->fontMetrics().averageCharWidth());
    return std::min(need, cap);
}

void refitOnResize(QTreeView* tree, std::function<void()> fit) {
    onEvents(tree->viewport(), {QEvent::Resize}, std::move(fit));
}
