#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The one number formatter of the project: the CLI prints these strings and
// the GUI wraps them in QString (ui/common/sizeformat.h), so a value reads the same
// in a terminal, a table cell, a tooltip and a CSV file.
namespace ckptscope::fmt {

// Shown where a value does not exist (an empty tensor's mean, say).
inline constexpr std::string_view kMissing = "–";

// 1536 → "1.5 KiB"; exact bytes below 1 KiB.
std::string bytes(uint64_t n);
// 1234567 → "1,234,567" (not locale-dependent: the same in every window
// and every script).
std::string grouped(uint64_t n);
// 1 → "1 tensor", 10000 → "10,000 tensors": the count grouped, the noun
// agreeing with it (the one plural rule of the CLI and the GUI).
std::string counted(uint64_t n, std::string_view singular, std::string_view plural);
// "[2, 3]"; "[]" for an empty shape.
std::string shape(const std::vector<uint64_t>& dims);

// Display mode: 7 significant digits, enough to tell most f32 values apart
// at a glance ("0.1", "-3.402823e+38", "nan", "inf", "-inf").
std::string display(double v);
std::string display(std::optional<double> v);
// A computed figure (a mean, an L2 norm, a max |b − a|) in display mode;
// one that passed the double range is "overflows double", never "inf": the
// figure is finite, only too large to hold.
std::string figure(double v);
std::string figure(std::optional<double> v); // "-" when empty, as display
// Exact mode: the shortest text that reads back (strtof) to the same
// float32 bits — for CSV, copies and tooltips. NaN is "nan" (its payload is
// not kept), infinities "inf" and "-inf", negative zero "-0".
std::string exact(float v);
// The same for a double (statistics computed in double).
std::string exact(double v);
// A complex value as Python writes one, without the parentheses, each part
// exact as above (a float32 pair when `f32Parts`): "1.5-2.25j", "-0+0j",
// "nan+infj". Python's complex() and NumPy's loadtxt(dtype=complex) read it
// back.
std::string exactComplex(double re, double im, bool f32Parts);
// Exact mode for a column of a table: every value in one notation —
// scientific ("5e-04", "9.666666666666667e-04") when a finite non-zero one
// lies below 1e-4 or at 1e16 and beyond in magnitude, else fixed
// ("0.0005", "0.0009666666666666667") — each with the fewest digits that
// read back, so a column never mixes "5e-04" with "0.00097".
std::vector<std::string> exactColumn(const std::vector<double>& values);

} // namespace ckptscope::fmt
