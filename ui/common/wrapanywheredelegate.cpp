#include "common/wrapanywheredelegate.h"

#include <QApplication>
#include <QPainter>

#include <algorithm>

namespace {
constexpr int kFlags = Qt::TextWrapAnywhere | Qt::AlignLeft | Qt::AlignVCenter;
constexpr int kMargin = 3;
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
    const QRect area = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, widget);
    painter->save();
    painter->setFont(opt.font);
    painter->setPen(opt.palette.color(opt.state & QStyle::State_Selected ? QPalette::HighlightedText
                                                                         : QPalette::Text));
    painter->drawText(area.adjusted(kMargin, 0, -kMargin, 0), kFlags, text);
    painter->restore();
}

QSize WrapAnywhereDelegate::sizeHint(const QStyleOptionViewItem& option,
                                     const QModelIndex& index) const {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QSize base = QStyledItemDelegate::sizeHint(option, index);
    // The view passes the column's width when it wraps text.
    const int icon =
        opt.features & QStyleOptionViewItem::HasDecoration ? opt.decorationSize.width() + 4 : 0;
    const int width = std::max(20, option.rect.width() - icon - 2 * kMargin - 6);
    const QRect text = opt.fontMetrics.boundingRect(QRect(0, 0, width, 1 << 20), kFlags, opt.text);
    return QSize(base.width(), std::max(base.height(), text.height() + 6));
}
