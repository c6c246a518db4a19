#include "widgets/wrapanywheredelegate.h"

#include <QApplication>
#include <QPainter>
#include <QTextLayout>
#include <QTreeView>

#include <algorithm>
#include <cmath>

namespace {

constexpr int kMargin = 3;

// Lays `text` out in lines of at most `width`, broken between words where a
// line has a space and anywhere in a word longer than the line ("value
// distributions" at a space, a CID anywhere); returns the height.
qreal layOut(QTextLayout& layout, const QString& text, const QFont& font, qreal width) {
    QString lines = text;
    lines.replace(QLatin1Char('\n'), QChar::LineSeparator); // a layout's line break
    layout.setText(lines);
    layout.setFont(font);
    QTextOption option;
    option.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    layout.setTextOption(option);
    qreal height = 0;
    layout.beginLayout();
    for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
        line.setLineWidth(std::max<qreal>(1, width));
        line.setPosition(QPointF(0, height));
        height += line.height();
    }
    layout.endLayout();
    return height;
}

} // namespace

void WrapAnywhereDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                                 const QModelIndex& index) const {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QString text = opt.text;
    opt.text.clear(); // background, selection and icon by the style; the text here
    const QWidget* widget = opt.widget;
    QStyle* style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);
    const QRect area = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, widget)
                           .adjusted(kMargin, 0, -kMargin, 0);
    QTextLayout layout;
    const qreal height = layOut(layout, text, opt.font, std::max(1, area.width()));
    painter->save();
    painter->setClipRect(area, Qt::IntersectClip); // never over the next row
    painter->setPen(opt.palette.color(opt.state & QStyle::State_Selected ? QPalette::HighlightedText
                                                                         : QPalette::Text));
    layout.draw(painter,
                QPointF(area.left(), area.top() + std::max(0.0, (area.height() - height) / 2)));
    painter->restore();
}

QSize WrapAnywhereDelegate::sizeHint(const QStyleOptionViewItem& option,
                                     const QModelIndex& index) const {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QSize base = QStyledItemDelegate::sizeHint(option, index);
    // A table passes the column's width when it wraps text; a tree does not
    // (not for a column past the first, where no indentation is taken).
    int column = option.rect.width();
    if (const auto* tree = qobject_cast<const QTreeView*>(opt.widget); tree && index.column() > 0)
        column = tree->columnWidth(index.column());
    const int icon =
        opt.features & QStyleOptionViewItem::HasDecoration ? opt.decorationSize.width() + 4 : 0;
    const int width = std::max(20, column - icon - 2 * kMargin - 6);
    QTextLayout layout;
    const qreal height = layOut(layout, opt.text, opt.font, width);
    return QSize(base.width(), std::max(base.height(), int(std::ceil(height)) + 6));
}
