#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ckptscope {

// Text from a file made readable as it is, for a terminal line or a label:
// control characters as escapes (\n, \t, \r, \xNN), a backslash as \\ (so
// "\n" in a name reads apart from a newline), each byte of no valid UTF-8
// character as \xNN, and characters that are invisible or reorder the text
// around them as \u{XXXX}: C1 controls, the bidirectional marks, overrides
// and isolates (Trojan Source), zero-width spaces and joiners, the line and
// paragraph separators and the byte order mark. Apply once: the result has
// backslashes. With keepLines, newlines and tabs stay as they are (a
// multi-line value shown on several lines: a chat template).
std::string printable(std::string_view s, bool keepLines = false);
// Whether printable() spells the code point as an escape (with keepLines,
// \n and \t are not): for a caller that checks text before converting it.
bool escapedByPrintable(uint32_t cp, bool keepLines = false);

// The length of the valid UTF-8 sequence at s[i] (1 for ASCII; 0 for an
// overlong form, a surrogate, a code point past U+10FFFF or a cut sequence).
size_t utf8Length(std::string_view s, size_t i);
// The code point of the len-byte UTF-8 sequence at s[i].
uint32_t codePoint(std::string_view s, size_t i, size_t len);

} // namespace ckptscope
