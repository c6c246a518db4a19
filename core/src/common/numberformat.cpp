#include "ckptscope/common/numberformat.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace ckptscope::fmt {

std::string bytes(uint64_t n) {
    static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (n < 1024)
        return std::to_string(n) + " B";
    double v = double(n) / 1024;
    int u = 0;
    // Compared after rounding to one decimal, so 1048575 reads "1.0 MiB",
    // not "1024.0 KiB".
    while (v >= 1023.95 && u < 5) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return buf;
}

std::string grouped(uint64_t n) {
    const std::string digits = std::to_string(n);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i != 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

std::string counted(uint64_t n, std::string_view singular, std::string_view plural) {
    return grouped(n) + ' ' + std::string(n == 1 ? singular : plural);
}

std::string shape(const std::vector<uint64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i)
        s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + "]";
}

// NaN and the infinities spelled the same in both modes (to_chars would
// print "-nan" for a NaN with the sign bit set).
static const char* nonFinite(double v) {
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v < 0 ? "-inf" : "inf";
    return nullptr;
}

std::string display(double v) {
    if (const char* s = nonFinite(v))
        return s;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.7g", v);
    return buf;
}

std::string figure(double v) {
    return std::isfinite(v) ? display(v) : std::string("overflows double");
}

std::string figure(std::optional<double> v) {
    return v ? figure(*v) : std::string(kMissing);
}

std::string display(std::optional<double> v) {
    return v ? display(*v) : std::string(kMissing);
}

template <typename T> static std::string shortest(T v) {
    if (const char* s = nonFinite(double(v)))
        return s;
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string exact(float v) {
    return shortest(v);
}

std::string exact(double v) {
    return shortest(v);
}

std::string exactComplex(double re, double im, bool f32Parts) {
    const auto part = [f32Parts](double v) { return f32Parts ? exact(float(v)) : exact(v); };
    // The imaginary part's sign as its own: -0 and NaN with the sign bit set
    // included, as Python's repr.
    return part(re) + (std::signbit(im) ? "-" : "+") + part(std::fabs(im)) + "j";
}

std::vector<std::string> exactColumn(const std::vector<double>& values) {
    const bool scientific = std::any_of(values.begin(), values.end(), [](double v) {
        return std::isfinite(v) && v != 0 && (std::fabs(v) < 1e-4 || std::fabs(v) >= 1e16);
    });
    std::vector<std::string> out;
    out.reserve(values.size());
    for (double v : values) {
        if (const char* s = nonFinite(v)) {
            out.emplace_back(s);
            continue;
        }
        char buf[64]; // fixed: below 1e16, at most 4 zeros after the point, 17 digits
        const auto r =
            std::to_chars(buf, buf + sizeof buf, v,
                          scientific ? std::chars_format::scientific : std::chars_format::fixed);
        out.emplace_back(buf, r.ptr);
    }
    return out;
}

} // namespace ckptscope::fmt
