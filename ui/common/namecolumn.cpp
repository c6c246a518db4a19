#include "common/namecolumn.h"

#include <QTreeView>

#include <algorithm>

int nameColumnWidth(const QTreeView* tree, int column) {
    const QAbstractItemView* view = tree; // sizeHintForColumn is public there
    const int cap =
        std::max(tree->viewport()->width() / 2, 80 * tree->fontMetrics().averageCharWidth());
    return std::min(view->sizeHintForColumn(column), cap);
}

void elideNamesInTheMiddle(QTreeView* tree) {
    tree->setTextElideMode(Qt::ElideMiddle);
}
