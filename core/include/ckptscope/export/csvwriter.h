#pragma once

#include "ckptscope/document/document.h"
#include "ckptscope/export/exporterror.h"
#include "ckptscope/stats/tensorstats.h"

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace ckptscope {

// RFC 4180: a field with a comma, quote, CR or LF is quoted, quotes doubled.
std::string csvField(std::string_view text);
// Fields joined by commas, ended by CRLF.
std::string csvLine(const std::vector<std::string>& fields);

// Rows × columns of a tensor's values: a 2-D tensor as it is, 1-D (or a
// shape that does not match the stored values) as one column, N-D as
// (product of the leading dimensions) rows × the last dimension. Floats in
// the shortest text that reads back to the same float32 (double for F64)
// bits, integers exactly; nan, inf, -inf.
struct CsvGrid {
    uint64_t rows = 0, columns = 0;
};
CsvGrid csvGrid(const TensorEntry& tensor);
void writeTensorCsv(std::ostream& out, const Document& doc, size_t index,
                    const TaskControl& control = {});
// Text of `count` elements from `first`, in the same spelling.
std::vector<std::string> valueTexts(const Document& doc, size_t index, uint64_t first,
                                    uint64_t count);

// The statistics table: the fields of `stats --json` without the
// histogram; an empty cell for a missing value.
std::vector<std::string> statsCsvHeader();
std::vector<std::string> statsCsvRow(const std::string& name, const StatsResult& result);
// The row of a tensor without statistics (complex values): its name and
// count, every other cell empty.
std::vector<std::string> statsCsvRowWithout(const std::string& name, uint64_t count);

// Histogram bins: lo, hi, count per bin (then NaN/Inf apart as rows).
void writeHistogramCsv(std::ostream& out, const StatsResult& result);

} // namespace ckptscope
