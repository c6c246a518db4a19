#pragma once

#include <string>
#include <vector>

// Terminal text helpers. Numbers, sizes and shapes come from the core
// formatter (ckptscope/numberformat.h), shared with the GUI.
namespace cli {

// Control characters spelled as escapes (\n, \t, \xNN) so a table row
// stays one line; a backslash as \\ (so "\n" in a name reads apart from a
// newline), and each byte of no valid UTF-8 character as \xNN (as --json
// cannot: it writes U+FFFD); C1 controls and bidirectional overrides as
// \u{XXXX}. Apply once: the result has backslashes.
std::string printable(const std::string& s);

// A plain text table: columns padded to their widest cell, right-aligned
// where asked (numbers). Every cell is made printable() as it is added, so a
// name holding a tab or a newline never breaks a row.
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
