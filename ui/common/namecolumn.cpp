#include "common/namecolumn.h"

#include <QEvent>
#include <QHeaderView>
#include <QTreeView>

#include <algorithm>
#include <utility>

namespace {

// The viewport's child: calls `fit` on each of its resizes.
class ResizeFollower : public QObject {
public:
    ResizeFollower(QWidget* viewport, std::function<void()> fit)
        : QObject(viewport), m_fit(std::move(fit)) {
        viewport->installEventFilter(this);
    }
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (watched == parent() && event->type() == QEvent::Resize)
            m_fit();
        return false;
    }

private:
    std::function<void()> m_fit;
};

} // namespace

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
    new ResizeFollower(tree->viewport(), std::move(fit));
}
