#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cli {

// 1536 → "1.5 KiB"; exact bytes below 1 KiB.
std::string humanBytes(uint64_t bytes);
// 1234567 → "1,234,567".
std::string groupedNumber(uint64_t n);
// "[2, 3]"; "[]" for a scalar.
std::string shapeText(const std::vector<uint64_t>& shape);
// Control characters spelled as escapes (\n, \t, \xNN) so a table row
// stays one line.
std::string printable(const std::string& s);
// At most maxChars code points, with "…" when cut (never inside a UTF-8 sequence).
std::string elided(const std::string& s, size_t maxChars);
// Shortest round-trip text of a double, "-" when empty.
std::string numberText(std::optional<double> v);

// A plain text table: columns padded to their widest cell, right-aligned
// where asked (numbers).
class TextTable {
public:
    explicit TextTable(std::vector<std::string> header, std::vector<bool> rightAligned = {});
    void addRow(std::vector<std::string> row);
    std::string render(const std::string& indent = "") const;

private:
    std::vector<std::vector<std::string>> m_rows;
    std::vector<bool> m_right;
};

} // namespace cli
