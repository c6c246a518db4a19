#pragma once

#include <QLabel>
#include <QString>
#include <QTextDocument>
#include <QWidget>

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

} // namespace guisupport
