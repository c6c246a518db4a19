#pragma once

#include <QString>

// Text from a file (tensor names, metadata, op names, paths) shown exactly as
// it is. Qt guesses whether a tooltip is HTML (Qt::mightBeRichText), so a
// name like "<b>x</b>" would be drawn bold and "&quot;" decoded; this wraps
// such text as escaped HTML that reads back as the original, and leaves
// text Qt shows as plain untouched.
QString plainToolTip(const QString& text);

// `text` as HTML for a rich-text widget: escaped once, line breaks kept.
QString plainToHtml(const QString& text);
