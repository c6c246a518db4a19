#include "textformat.h"

#include "ckptscope/common/printable.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace cli {

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
        // printable() text: valid UTF-8 (a stray byte counts as one column)
        const size_t len = std::max<size_t>(1, ckptscope::utf8Length(s, i));
        const uint32_t cp = ckptscope::codePoint(s, i, len);
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
