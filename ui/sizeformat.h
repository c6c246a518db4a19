#pragma once

#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

// Display text shared by the views: sizes in KiB/MiB/GiB, grouped counts,
// shapes, and numbers with enough digits to tell f32 values apart.
QString humanBytes(uint64_t bytes);
QString groupedNumber(uint64_t n);
QString shapeText(const std::vector<uint64_t>& shape);
QString numberText(std::optional<double> v);
