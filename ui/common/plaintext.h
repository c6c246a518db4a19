#pragma once

#include <QString>

#include <string>

// Text from a file (tensor names, metadata, op names, paths) shown exactly as
// it is. Qt guesses whether a tooltip is HTML (Qt::mightBeRichText), so a
// name like "<b>x</b>" would be drawn bold and "&quot;" decoded; this wraps
// such text as escaped HTML that reads back as the original, and leaves
// text Qt shows as plain untouched.
QString plainToolTip(const QString& text);

// `text` as HTML for a rich-text widget: escaped once, line breaks kept.
QString plainToHtml(const QString& text);

// A file's text as a label or cell shows it: the core's printable(), so a
// tab, a newline, a bidirectional override or a zero-width space reads as an
// escape (\t, \n, \u{202e}), as the CLI prints it, instead of breaking or
// reordering the line. For display only; the text itself stays in the model.
QString shownText(const std::string& text);
QString shownText(const QString& text);
// The same for a text that may be long (a pickle's call, its arguments):
// its first `keep` characters and how many it has in all, "os.system('yy…'
// … (65,551 characters)". A banner or a page laid out with a 64 KiB word
// takes seconds and reads no better; the whole text stays where it is (the
// Metadata tab, `ckptscope-cli scan --json`).
QString shownExcerpt(const std::string& text, qsizetype keep);
// The same with newlines and tabs kept, for text shown on several lines (a
// metadata value, a tooltip).
QString shownLines(const QString& text);
