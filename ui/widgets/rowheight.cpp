#include "widgets/rowheight.h"

#include "common/eventhook.h"

#include <QHeaderView>
#include <QTableView>

namespace rowheight {

void followFont(QTableView* view, int padding) {
    const auto apply = [view, padding] {
        view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + padding);
    };
    apply();
    onEvents(view, {QEvent::FontChange, QEvent::StyleChange}, apply);
}

} // namespace rowheight
