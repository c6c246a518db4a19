#include "common/plaintext.h"
#include "common/sizeformat.h"

#include "ckptscope/common/printable.h"

#include <QCoreApplication>
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

QString shownExcerpt(const std::string& text, qsizetype keep) {
    // Characters as UTF-8 counts them (a byte that is not UTF-8 is one, and
    // shows as \xNN as shownText writes it); cut at one's end.
    size_t cut = text.size(), characters = 0;
    for (size_t i = 0; i < text.size(); ++characters) {
        if (qsizetype(characters) == keep)
            cut = i;
        i += std::max<size_t>(1, ckptscope::utf8Length(text, i));
    }
    if (qsizetype(characters) <= keep)
        return shownText(text);
    return QCoreApplication::translate("plaintext", "%1… (%2 characters)")
        .arg(shownText(text.substr(0, cut)), groupedNumber(characters));
}

namespace {

// printable() of the text; most names need nothing, and are returned
// without a conversion (a tree asks per row).
QString shown(const QString& text, bool keepLines) {
    const bool plain = std::none_of(text.begin(), text.end(), [keepLines](QChar c) {
        return ckptscope::escapedByPrintable(c.unicode(), keepLines);
    });
    return plain ? text
                 : QString::fromStdString(ckptscope::printable(text.toStdString(), keepLines));
}

} // namespace

QString shownText(const QString& text) {
    return shown(text, false);
}

QString shownLines(const QString& text) {
    return shown(text, true);
}
