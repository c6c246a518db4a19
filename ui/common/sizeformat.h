#pragma once

#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

// QString wrappers over the core formatter (ckptscope/numberformat.h), so the
// views print numbers exactly as the CLI does: sizes in KiB/MiB/GiB, counts
// grouped by ',', shapes, floats with 7 significant digits.
QString humanBytes(uint64_t bytes);
QString groupedNumber(uint64_t n);
QString shapeText(const std::vector<uint64_t>& shape);
// A computed figure (fmt::figure: "overflows double" past the range);
// fmt::kMissing when there is no value.
QString numberText(std::optional<double> v);
// What is shown where a value does not exist (fmt::kMissing).
QString missingText();
