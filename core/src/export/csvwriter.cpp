#include "ckptscope/export/csvwriter.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/export/valuechunk.h"
#include "export/valuestream.h"

#include <algorithm>
#include <cmath>

namespace ckptscope {

std::string csvField(std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos)
        return std::string(text);
    std::string out = "\"";
    for (char c : text) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

std::string csvLine(const std::vector<std::string>& fields) {
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) {
        if (i)
            line += ',';
        line += csvField(fields[i]);
    }
    return line + "\r\n";
}

CsvGrid csvGrid(const TensorEntry& t) {
    const bool consistent = t.elementCount && *t.elementCount == t.dataLen && !t.shape.empty();
    if (!consistent || t.shape.size() == 1)
        return {t.dataLen, t.dataLen ? 1u : 0u};
    const uint64_t columns = t.shape.back();
    return {columns ? t.dataLen / columns : 0, columns};
}

std::vector<std::string> valueTexts(const Document& doc, size_t index, uint64_t first,
                                    uint64_t count) {
    const ValueChunk chunk(doc, index, first, count);
    std::vector<std::string> out(chunk.size());
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = chunk.text(i);
    return out;
}

void writeTensorCsv(std::ostream& out, const Document& doc, size_t index,
                    const TaskControl& control) {
    refuseMetaTensor(doc, index);
    const CsvGrid grid = csvGrid(doc.tensors().at(index));
    const uint64_t rowsPerChunk =
        std::max<uint64_t>(1, (uint64_t(1) << 16) / std::max<uint64_t>(grid.columns, 1));
    std::string text;
    for (uint64_t row = 0; row < grid.rows;) {
        control.throwIfCancelled();
        const uint64_t rows = std::min(rowsPerChunk, grid.rows - row);
        const std::vector<std::string> cells =
            valueTexts(doc, index, row * grid.columns, rows * grid.columns);
        text.clear();
        for (uint64_t r = 0; r < rows; ++r) {
            for (uint64_t c = 0; c < grid.columns; ++c) {
                if (c)
                    text += ',';
                text += cells[size_t(r * grid.columns + c)];
            }
            text += "\r\n";
        }
        out.write(text.data(), std::streamsize(text.size()));
        row += rows;
        control.report(row, grid.rows);
    }
    control.report(1, 1);
}

std::vector<std::string> statsCsvHeader() {
    return {"name",  "count", "finite", "nan",  "inf", "pos_inf", "neg_inf",
            "zeros", "min",   "max",    "mean", "std", "l2",      "finite_sum"};
}

std::vector<std::string> statsCsvRowWithout(const std::string& name, uint64_t count) {
    std::vector<std::string> row(statsCsvHeader().size());
    row[0] = name;
    row[1] = std::to_string(count);
    return row;
}

std::vector<std::string> statsCsvRow(const std::string& name, const StatsResult& r) {
    const TensorStats& s = r.stats;
    // A figure past the double range is null in --json: an empty cell here
    // too, never "inf" (stats names it on stderr: "l2: overflows double").
    auto opt = [](std::optional<double> v) {
        return v && std::isfinite(*v) ? fmt::exact(*v) : std::string();
    };
    return {name,
            std::to_string(s.count),
            std::to_string(s.finite),
            std::to_string(s.nan),
            std::to_string(s.posInf + s.negInf),
            std::to_string(s.posInf),
            std::to_string(s.negInf),
            std::to_string(s.zeros),
            s.intMin ? storedIntegerText(*s.intMin) : opt(s.min), // integers whole, as --json
            s.intMax ? storedIntegerText(*s.intMax) : opt(s.max),
            opt(s.mean),
            opt(s.std),
            opt(s.l2),
            opt(s.finiteSum)};
}

void writeHistogramCsv(std::ostream& out, const StatsResult& r) {
    const Histogram& h = r.histogram;
    out << csvLine({"bin", "lo", "hi", "count"});
    const size_t n = h.counts.size();
    for (size_t k = 0; k < n; ++k) {
        // The same edges binOf uses: lo + (hi - lo) × k / n.
        const double lo = k == 0 ? h.lo : h.lo + (h.hi - h.lo) * double(k) / double(n);
        const double hi = k + 1 == n ? h.hi : h.lo + (h.hi - h.lo) * double(k + 1) / double(n);
        out << csvLine(
            {std::to_string(k), fmt::exact(lo), fmt::exact(hi), std::to_string(h.counts[k])});
    }
    out << csvLine({"nan", "", "", std::to_string(r.stats.nan)});
    out << csvLine({"+inf", "", "", std::to_string(r.stats.posInf)});
    out << csvLine({"-inf", "", "", std::to_string(r.stats.negInf)});
}

} // namespace ckptscope
