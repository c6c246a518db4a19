#include "common/rowheight.h"

#include <QEvent>
#include <QHeaderView>
#include <QTableView>

namespace {

// Lives as the view's child; sets the height again on each font change.
class RowHeightFollower : public QObject {
public:
    RowHeightFollower(QTableView* view, int padding)
        : QObject(view), m_view(view), m_padding(padding) {
        view->installEventFilter(this);
        apply();
    }

    bool eventFilter(QObject* watched, QEvent* event) override {
        if (watched == m_view &&
            (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange))
            apply();
        return false;
    }

private:
    void apply() {
        m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + m_padding);
    }

    QTableView* m_view;
    int m_padding;
};

} // namespace

namespace rowheight {

void followFont(QTableView* view, int padding) {
    new RowHeightFollower(view, padding);
}

} // namespace rowheight
