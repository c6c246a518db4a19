#include "textformat.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace cli {

std::string humanBytes(uint64_t bytes) {
    static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024)
        return std::to_string(bytes) + " B";
    double v = double(bytes) / 1024;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return buf;
}

std::string groupedNumber(uint64_t n) {
    const std::string digits = std::to_string(n);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i != 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

std::string shapeText(const std::vector<uint64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::string elided(const std::string& s, size_t maxChars) {
    size_t chars = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if ((s[i] & 0xC0) != 0x80 && chars++ == maxChars)
            return s.substr(0, i) + "…";
    }
    return s;
}

std::string numberText(std::optional<double> v) {
    if (!v)
        return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.7g", *v);
    return buf;
}

TextTable::TextTable(std::vector<std::string> header, std::vector<bool> rightAligned)
    : m_right(std::move(rightAligned)) {
    m_right.resize(header.size(), false);
    m_rows.push_back(std::move(header));
}

void TextTable::addRow(std::vector<std::string> row) { m_rows.push_back(std::move(row)); }

// Display width: count UTF-8 code points, not bytes (names may be CJK).
static size_t displayWidth(const std::string& s) {
    return size_t(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
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
