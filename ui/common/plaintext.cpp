#include "common/plaintext.h"

#include <QTextDocument>

QString plainToolTip(const QString& text) {
    if (!Qt::mightBeRichText(text))
        return text;
    return QStringLiteral("<qt>%1</qt>").arg(plainToHtml(text));
}

QString plainToHtml(const QString& text) {
    // pre-wrap: runs of spaces stay as they are, long text still wraps.
    return QStringLiteral("<span style='white-space:pre-wrap'>%1</span>")
        .arg(text.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
}
