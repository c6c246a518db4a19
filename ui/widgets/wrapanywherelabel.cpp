#include "widgets/wrapanywherelabel.h"

#include <QAbstractTextDocumentLayout>
#include <QAction>
#include <QClipboard>
#include <QGuiApplication>
#include <QPainter>
#include <QTextDocument>

#include <algorithm>
#include <cmath>

WrapAnywhereLabel::WrapAnywhereLabel(QWidget* parent) : QLabel(parent) {
    setWordWrap(true);
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
    setContextMenuPolicy(Qt::ActionsContextMenu);
    auto* copy = new QAction(tr("&Copy"), this);
    connect(copy, &QAction::triggered, this,
            [this] { QGuiApplication::clipboard()->setText(plainText()); });
    addAction(copy);
}

void WrapAnywhereLabel::fill(QTextDocument& doc) const {
    doc.setDefaultFont(font());
    doc.setDocumentMargin(0);
    QTextOption option;
    option.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    doc.setDefaultTextOption(option);
    const bool rich = textFormat() == Qt::RichText ||
                      (textFormat() == Qt::AutoText && Qt::mightBeRichText(text()));
    if (rich)
        doc.setHtml(text());
    else
        doc.setPlainText(text());
}

QString WrapAnywhereLabel::plainText() const {
    QTextDocument doc;
    fill(doc);
    return doc.toPlainText();
}

int WrapAnywhereLabel::heightForWidth(int width) const {
    const QMargins m = contentsMargins();
    QTextDocument doc;
    fill(doc);
    doc.setTextWidth(std::max(1, width - m.left() - m.right()));
    return int(std::ceil(doc.size().height())) + m.top() + m.bottom();
}

QSize WrapAnywhereLabel::sizeHint() const {
    // As wide as the text up to 80 characters; wider text wraps.
    QTextDocument doc;
    fill(doc);
    const QMargins m = contentsMargins();
    const int ideal = int(std::ceil(doc.idealWidth())) + m.left() + m.right();
    const int width = std::min(ideal, 80 * fontMetrics().averageCharWidth());
    return {width, heightForWidth(width)};
}

QSize WrapAnywhereLabel::minimumSizeHint() const {
    const int width = 4 * fontMetrics().averageCharWidth();
    return {width, fontMetrics().height()};
}

void WrapAnywhereLabel::paintEvent(QPaintEvent*) {
    QTextDocument doc;
    fill(doc);
    const QRect area = contentsRect();
    doc.setTextWidth(area.width());
    QPainter painter(this);
    painter.translate(area.topLeft());
    QAbstractTextDocumentLayout::PaintContext context;
    context.palette = palette();
    context.palette.setColor(QPalette::Text, palette().color(foregroundRole()));
    context.clip = QRectF(0, 0, area.width(), area.height());
    doc.documentLayout()->draw(&painter, context);
}
