#pragma once

#include <QStyledItemDelegate>

// Shows a cell's whole text, wrapped anywhere when a word is longer than the
// column (ids and CIDs have no spaces): nothing cut off or elided. Rows take
// their height from it when the view wraps text and resizes rows to contents.
class WrapAnywhereDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
};
