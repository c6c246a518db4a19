// The compare window's widths: the tensor tree as wide as its columns, the
// statistics and values tables whole, measured again when the font changes.
#include "compare/comparewindow.h"

#include "compare/comparehistogramview.h"
#include "compare/comparestatsmodel.h"
#include "compare/comparetensormodel.h"
#include "compare/comparevaluesmodel.h"
#include "tensor/histogramview.h"
#include "widgets/namecolumn.h"
#include "widgets/rowheight.h"
#include "widgets/valuewidth.h"

#include <QEvent>
#include <QHeaderView>
#include <QScrollBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>

#include <algorithm>

using namespace ckptscope;

void CompareWindow::fitNameColumn() {
    m_namesWidth = namesWidth(m_tensorView, CompareTensorModel::Name);
    capNameColumn();
}

void CompareWindow::capNameColumn() {
    m_tensorView->setColumnWidth(CompareTensorModel::Name,
                                 nameColumnWidth(m_tensorView, m_namesWidth));
}

// The tree's width with every column as wide as it is now (a hidden one
// counts 0), its frame and its scroll bar.
int CompareWindow::treeWidth() const {
    int width =
        2 * m_tensorView->frameWidth() + m_tensorView->verticalScrollBar()->sizeHint().width();
    for (int c = 0; c < CompareTensorModel::ColumnCount; ++c)
        width += m_tensorView->columnWidth(c);
    return width;
}

// The tree as wide as its columns, so no number is cut at its right edge
// ("2,30" for 2,304), as far as `detailWidth` for the detail side allows
// (narrower, it scrolls sideways); narrower only where the detail side has
// less than that (a tree the user widened stays so, to a column's edge).
void CompareWindow::fitTreeWidth(int detailWidth) {
    const int wanted = treeWidth();
    const QList<int> sizes = m_split->sizes();
    const int total = sizes.value(0) + sizes.value(1);
    const int room = total - std::max(detailWidth, m_tabs->minimumWidth());
    if (total <= 0 || room <= 0) // not laid out yet
        return;
    const int fitted = std::min(wanted, room);
    int tree = fitted > sizes.value(0) || sizes.value(0) > room ? fitted : sizes.value(0);
    if (tree < wanted) {
        // Narrower than its columns: it ends at a column's edge, so no
        // figure is cut at the right ("65,53" for 65,536); the rest of the
        // room goes to the detail side, and the tree scrolls sideways.
        const QHeaderView* header = m_tensorView->header();
        const QScrollBar* bar = m_tensorView->verticalScrollBar();
        int edge =
            2 * m_tensorView->frameWidth() + (bar->isVisible() ? bar->sizeHint().width() : 0);
        for (int v = 0; v < header->count(); ++v) {
            const int c = header->logicalIndex(v);
            if (header->isSectionHidden(c))
                continue;
            if (edge + header->sectionSize(c) > tree)
                break;
            edge += header->sectionSize(c);
        }
        tree = edge;
    }
    if (tree != sizes.value(0))
        m_split->setSizes({tree, total - tree});
}

// Every statistic whole. Its figure columns share the width but never go
// below their widest text (narrower, the table scrolls sideways). Once, the
// table is given its whole height; once shown, the detail side the width to
// show it whole (kept for later comparisons in this window), as far as the
// tree keeps its figures in view. After that the user's sizes stand.
void CompareWindow::fitStats() {
    if (m_statsModel->rowCount() == 0)
        return;
    QHeaderView* header = m_statsView->horizontalHeader();
    const QAbstractItemView* view = m_statsView; // sizeHintForColumn is public there
    int figure = m_figureLeast;
    for (int c : {CompareStatsModel::SideA, CompareStatsModel::SideB, CompareStatsModel::Delta})
        figure = std::max({figure, view->sizeHintForColumn(c), header->sectionSizeHint(c)});
    header->setMinimumSectionSize(figure);

    const int table = header->sizeHint().height() + 2 * m_statsView->frameWidth() +
                      m_statsView->verticalHeader()->length() + 4;
    if (!m_statsHeightFitted) {
        m_statsHeightFitted = true;
        const QList<int> heights = m_detailSplit->sizes();
        int height = 0;
        for (int h : heights)
            height += h;
        const int rest = std::max(0, height - table);
        if (height > 0 && rest >= m_overlay->minimumHeight() + m_delta->minimumHeight())
            m_detailSplit->setSizes({table, rest / 2, rest - rest / 2});
    }
    const bool tall = m_detailSplit->sizes().value(0) >= table;

    if (m_statsWidth > 0 || !m_statsView->isVisible())
        return;
    // The tab page's margins and frames around the table, as laid out now,
    // and its vertical scroll bar where the height runs short.
    const int around = m_tabs->width() - m_statsView->width() + 2 * m_statsView->frameWidth() +
                       (tall ? 0 : m_statsView->verticalScrollBar()->sizeHint().width());
    const int label = std::max(header->sectionSize(CompareStatsModel::Label),
                               view->sizeHintForColumn(CompareStatsModel::Label));
    const int wanted = around + label + 3 * figure;
    // The tree keeps in view at least its columns up to the relative L2
    // change, which it is sorted by (the figures beyond scroll).
    int treeLeast = treeWidth();
    for (int c = CompareTensorModel::RelL2 + 1; c < CompareTensorModel::ColumnCount; ++c)
        treeLeast -= m_tensorView->columnWidth(c);
    const QList<int> sizes = m_split->sizes();
    m_statsWidth = std::min(wanted, sizes.value(0) + sizes.value(1) - treeLeast);
    fitTreeWidth(m_statsWidth);
}

// Each column as wide as its widest possible value (the dtype's, not the
// values read: no column jumps as the table scrolls); none cut, in the font
// of the moment.
void CompareWindow::fitValuesColumns() {
    auto* view = qobject_cast<QTableView*>(m_valuesPage);
    if (!view)
        return;
    const auto width = [view](std::optional<Dtype> dtype) {
        return valuewidth::ofDtype(view, dtype ? *dtype : Dtype::F32);
    };
    const auto complex = [](std::optional<Dtype> dtype) { return dtype && isComplex(*dtype); };
    const bool pairs = complex(m_valuesModel->dtypeA()) && complex(m_valuesModel->dtypeB());
    const int widths[] = {
        valuewidth::ofIndex(view, uint64_t(std::max(1, m_valuesModel->rowCount()) - 1)),
        width(m_valuesModel->dtypeA()), width(m_valuesModel->dtypeB()),
        // A difference of two 64-bit integers has up to 20 digits; of two
        // complex values, two doubles.
        pairs ? valuewidth::ofComplexDouble(view)
              : std::max(valuewidth::ofDouble(view), width(Dtype::U64))};
    for (int c = 0; c < CompareValuesModel::ColumnCount; ++c)
        view->setColumnWidth(c, std::max(widths[c], view->horizontalHeader()->sectionSizeHint(c)));
    fitValuesWidth();
}

void CompareWindow::changeEvent(QEvent* event) {
    QMainWindow::changeEvent(event);
    if (event->type() != QEvent::FontChange && event->type() != QEvent::StyleChange)
        return;
    // Another font: every figure's column measured again.
    fitValuesColumns();
    if (m_result && m_result->tensors)
        fitTreeColumns();
    fitStats();
}

void CompareWindow::fitTreeColumns() {
    // Names, shapes and counts in full, however long ("[1024, 1024]", "1,048,576").
    for (int c = 0; c < CompareTensorModel::ColumnCount; ++c)
        m_tensorView->resizeColumnToContents(c);
    fitNameColumn();
}

void CompareWindow::fitValuesWidth() {
    auto* view = qobject_cast<QTableView*>(m_valuesPage);
    if (!view || m_tabs->currentWidget() != view || !view->isVisible())
        return;
    // The page's margins, frame and scroll bar as laid out now, and the columns.
    int width = m_tabs->width() - view->viewport()->width();
    for (int c = 0; c < CompareValuesModel::ColumnCount; ++c)
        width += view->columnWidth(c);
    fitTreeWidth(std::max(m_statsWidth, width));
}
