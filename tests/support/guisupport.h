#pragma once

#include <QAbstractItemDelegate>
#include <QAbstractItemView>
#include <QCategoryAxis>
#include <QHeaderView>
#include <QLabel>
#include <QString>
#include <QStyle>
#include <QStyleOptionViewItem>
#include <QTableView>
#include <QTextDocument>
#include <QTreeView>
#include <QValueAxis>
#include <QWidget>

#include <cmath>
#include <vector>

// What a widget shows for a text, the way Qt decides: rich text is parsed as
// HTML (entities decoded, tags dropped), plain text is shown as it is;
// Qt::AutoText guesses with Qt::mightBeRichText, as QLabel and QToolTip do.
namespace guisupport {

inline QString shownText(const QString& text, Qt::TextFormat format = Qt::AutoText) {
    const bool rich =
        format == Qt::RichText || (format == Qt::AutoText && Qt::mightBeRichText(text));
    if (!rich)
        return text;
    QTextDocument doc;
    doc.setHtml(text);
    return doc.toPlainText().replace(QChar(0x00a0), QLatin1Char(' '));
}

inline QString shownText(const QLabel* label) {
    return shownText(label->text(), label->textFormat());
}

// Every label's shown text under `root`, one entry each.
inline QStringList shownLabels(const QWidget* root) {
    QStringList out;
    for (const QLabel* l : root->findChildren<QLabel*>())
        out << shownText(l);
    return out;
}

struct Tick {
    double value;
    QString label;
    bool mayBeCut = false; // Qt may elide the label ("…") when it thinks space is short
};

// The ticks an axis draws, with their labels, whatever kind of value axis.
inline std::vector<Tick> ticksOf(QValueAxis* axis) {
    std::vector<Tick> out;
    auto label = [&](double v) {
        const QString f = axis->labelFormat();
        return f.endsWith(QLatin1Char('d')) ? QString::asprintf(qPrintable(f), int(v))
                                            : QString::asprintf(qPrintable(f), v);
    };
    if (auto* cat = qobject_cast<QCategoryAxis*>(axis)) {
        for (const QString& l : cat->categoriesLabels()) {
            const double v = cat->endValue(l);
            if (v >= axis->min() && v <= axis->max())
                out.push_back({v, l, cat->truncateLabels()});
        }
    } else if (axis->tickType() == QValueAxis::TicksDynamic) {
        const double step = axis->tickInterval();
        double v =
            axis->tickAnchor() - std::floor((axis->tickAnchor() - axis->min()) / step) * step;
        for (; v <= axis->max(); v += step)
            out.push_back({v, label(v)});
    } else {
        const int n = axis->tickCount();
        for (int i = 0; i < n; ++i) {
            const double v = axis->min() + i * (axis->max() - axis->min()) / (n - 1);
            out.push_back({v, label(v)});
        }
    }
    return out;
}

// Ticks a reader can use: evenly spaced by 1, 2 or 5 × 10^k, on multiples of
// that step, labelled with text that reads back to the tick's value.
inline QString roundnessProblem(const std::vector<Tick>& ticks) {
    if (ticks.size() < 3)
        return QStringLiteral("only %1 ticks").arg(ticks.size());
    const double step = ticks[1].value - ticks[0].value;
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    bool round = false;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        round = round || std::abs(mantissa - m) < 1e-6;
    if (!round)
        return QStringLiteral("step %1 is not 1, 2 or 5 x 10^k").arg(step);
    for (size_t i = 0; i < ticks.size(); ++i) {
        const Tick& t = ticks[i];
        if (t.mayBeCut)
            return QStringLiteral("label '%1' may be cut short").arg(t.label);
        const double k = t.value / step;
        if (std::abs(k - std::round(k)) > 1e-6)
            return QStringLiteral("tick %1 is not a multiple of %2").arg(t.value).arg(step);
        bool ok = false;
        const double read = QString(t.label).remove(QLatin1Char(',')).toDouble(&ok);
        if (!ok || std::abs(read - t.value) > step * 1e-6)
            return QStringLiteral("label '%1' for tick %2").arg(t.label).arg(t.value);
    }
    return {};
}

// The cells of `view` narrower than what their delegate needs to show their
// text whole (Qt would elide it with "…"), as "row R, column C: 'text' needs
// N px, has M": every row a tree shows (its branches as opened), every row
// of a table (up to `rowLimit`), every column not hidden. A cell's width is
// its column's (beside a tree's indentation), not what the viewport shows:
// a column scrolled out of view is not cut. In a table that wraps text, a
// narrower cell is whole when its row is as tall as the wrapped text.
inline QStringList cutCells(const QAbstractItemView* view, int rowLimit = 5000) {
    QStringList out;
    const QAbstractItemModel* model = view->model();
    const auto* tree = qobject_cast<const QTreeView*>(view);
    const auto* table = qobject_cast<const QTableView*>(view);
    const QHeaderView* header = tree ? tree->header() : table ? table->horizontalHeader() : nullptr;
    QStyleOptionViewItem option;
    option.initFrom(view);
    const int icon = view->style()->pixelMetric(QStyle::PM_SmallIconSize, nullptr, view);
    option.decorationSize = view->iconSize().isValid() ? view->iconSize() : QSize(icon, icon);
    std::vector<QModelIndex> rows;
    if (tree) {
        for (QModelIndex i = model->index(0, 0); i.isValid() && int(rows.size()) < rowLimit;
             i = tree->indexBelow(i))
            rows.push_back(i);
    } else {
        for (int r = 0; r < std::min(model->rowCount(), rowLimit); ++r)
            rows.push_back(model->index(r, 0));
    }
    for (const QModelIndex& row : rows)
        for (int c = 0; c < model->columnCount(row.parent()); ++c) {
            if (header ? header->isSectionHidden(c) : false)
                continue;
            const QModelIndex cell = row.siblingAtColumn(c);
            const QString text = cell.data(Qt::DisplayRole).toString();
            if (text.isEmpty())
                continue;
            const QAbstractItemDelegate* delegate = view->itemDelegateForIndex(cell);
            if (!delegate) // a header view
                continue;
            QStyleOptionViewItem cellOption = option;
            cellOption.rect = view->visualRect(cell);
            const bool wraps = table && table->wordWrap();
            if (wraps)
                cellOption.features |= QStyleOptionViewItem::WrapText;
            const QSize hint = delegate->sizeHint(cellOption, cell);
            const int need = hint.width();
            const int has = cellOption.rect.width();
            if (has < need && !(wraps && cellOption.rect.height() >= hint.height()))
                out << QStringLiteral("row %1, column %2: '%3' needs %4 px, has %5")
                           .arg(row.row())
                           .arg(c)
                           .arg(text)
                           .arg(need)
                           .arg(has);
        }
    return out;
}

} // namespace guisupport
