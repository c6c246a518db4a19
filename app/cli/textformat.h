#pragma once

#include "ckptscope/common/printable.h"

#include <string>
#include <vector>

// Terminal text helpers. Numbers, sizes and shapes come from the core
// formatter (ckptscope/numberformat.h), shared with the GUI.
namespace cli {

// The core's escaping of a file's text (ckptscope/common/printable.h).
using ckptscope::printable;

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
