#include "textformat.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace cli {

namespace {

// The length of the valid UTF-8 sequence at s[i] (overlong forms,
// surrogates and code points past U+10FFFF are not), or 0.
size_t utf8Length(const std::string& s, size_t i) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t len = b < 0xC2 ? 0 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : b < 0xF5 ? 4 : 0;
    if (len == 0 || i + len > s.size())
        return 0;
    for (size_t k = 1; k < len; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
            return 0;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if ((b == 0xE0 && b1 < 0xA0) || (b == 0xED && b1 >= 0xA0) || (b == 0xF0 && b1 < 0x90) ||
        (b == 0xF4 && b1 >= 0x90))
        return 0;
    return len;
}

// The code point of the len-byte UTF-8 sequence at s[i].
uint32_t codePoint(const std::string& s, size_t i, size_t len) {
    const auto b = static_cast<unsigned char>(s[i]);
    uint32_t cp = len == 1 ? b : b & (0xFF >> (len + 1));
    for (size_t k = 1; k < len && i + k < s.size(); ++k)
        cp = cp << 6 | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    return cp;
}

} // namespace

std::string printable(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
        const auto u = static_cast<unsigned char>(s[i]);
        const size_t len = u < 0x80 ? 1 : utf8Length(s, i);
        if (len > 1) {
            const uint32_t cp = codePoint(s, i, len);
            // C1 controls and the bidirectional overrides and isolates, which
            // would reorder the rest of the line on a terminal.
            if (cp <= 0x9F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)) {
                char buf[16];
                std::snprintf(buf, sizeof buf, "\\u{%04x}", unsigned(cp));
                out += buf;
            } else {
                out.append(s, i, len);
            }
            i += len;
            continue;
        }
        if (s[i] == '\\')
            out += "\\\\";
        else if (s[i] == '\n')
            out += "\\n";
        else if (s[i] == '\t')
            out += "\\t";
        else if (s[i] == '\r')
            out += "\\r";
        else if (u < 0x20 || u >= 0x7f) { // a control byte, or a byte of no UTF-8 character
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", u);
            out += buf;
        } else
            out += s[i];
        ++i;
    }
    return out;
}

TextTable::TextTable(std::vector<std::string> header, std::vector<bool> rightAligned)
    : m_right(std::move(rightAligned)) {
    m_right.resize(header.size(), false);
    m_rows.push_back(std::move(header));
}

void TextTable::addRow(std::vector<std::string> row) {
    for (std::string& cell : row)
        cell = printable(cell);
    m_rows.push_back(std::move(row));
}

// Terminal columns of UTF-8 text: one per code point, two for East Asian
// wide characters (CJK, Hangul, full-width forms, emoji), so CJK names line up.
static size_t displayWidth(const std::string& s) {
    size_t width = 0;
    for (size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        const size_t len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        const uint32_t cp = codePoint(s, i, len);
        const bool wide = (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
                          (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
                          (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0x1F300 && cp <= 0x1FAFF) ||
                          (cp >= 0x20000 && cp <= 0x3FFFD);
        width += wide ? 2 : 1;
        i += len;
    }
    return width;
}

std::string TextTable::render(const std::string& indent) const {
    std::vector<size_t> width(m_right.size(), 0);
    for (const auto& row : m_rows)
        for (size_t c = 0; c < row.size() && c < width.size(); ++c)
            width[c] = std::max(width[c], displayWidth(row[c]));
    std::string out;
    for (const auto& row : m_rows) {
        std::string line = indent;
        for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
            const std::string pad(width[c] - displayWidth(row[c]), ' ');
            line += c ? "  " : "";
            line += m_right[c] ? pad + row[c] : row[c] + (c + 1 < row.size() ? pad : "");
        }
        out += line + "\n";
    }
    return out;
}

} // namespace cli
