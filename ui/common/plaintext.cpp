#include "common/plaintext.h"

#include "ckptscope/common/printable.h"

#include <QTextDocument>

#include <algorithm>

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

QString shownText(const std::string& text) {
    return QString::fromStdString(ckptscope::printable(text));
}

namespace {

// Whether printable() would change the text (most names: no conversion for
// them, a tree asks per row).
bool needsEscape(const QString& text, bool keepLines) {
    return std::any_of(text.begin(), text.end(), [keepLines](QChar c) {
        const char16_t u = c.unicode();
        if (keepLines && (u == '\n' || u == '\t'))
            return false;
        return u < 0x20 || u == '\\' || (u >= 0x7F && u <= 0x9F) || u == 0x061C ||
               (u >= 0x200B && u <= 0x200F) || (u >= 0x2028 && u <= 0x202E) ||
               (u >= 0x2060 && u <= 0x2069) || u == 0xFEFF;
    });
}

} // namespace

QString shownText(const QString& text) {
    return needsEscape(text, false) ? shownText(text.toStdString()) : text;
}

QString shownLines(const QString& text) {
    return needsEscape(text, true)
               ? QString::fromStdString(ckptscope::printable(text.toStdString(), true))
               : text;
}
