#include "chart/colormap.h"

#include <QtMath>

#include <algorithm>
#include <array>
#include <cmath>

namespace {

constexpr double kLightLo = 0.27, kLightHi = 0.93;
constexpr double kHueLo = 285, kHueHi = 100; // degrees: violet → teal → yellow
constexpr double kChroma = 0.13;

using Rgb = std::array<double, 3>;

// OKLab to linear sRGB (Björn Ottosson's published matrices).
Rgb oklabToLinear(double L, double a, double b) {
    const double l_ = L + 0.3963377774 * a + 0.2158037573 * b;
    const double m_ = L - 0.1055613458 * a - 0.0638541728 * b;
    const double s_ = L - 0.0894841775 * a - 1.2914855480 * b;
    const double l = l_ * l_ * l_, m = m_ * m_ * m_, s = s_ * s_ * s_;
    return {4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s,
            -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s,
            -0.0041960863 * l - 0.7034186147 * m + 1.7076147010 * s};
}

double toLinear(double c) {
    return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}

double toGamma(double c) {
    c = std::clamp(c, 0.0, 1.0);
    return c <= 0.0031308 ? 12.92 * c : 1.055 * std::pow(c, 1 / 2.4) - 0.055;
}

bool inGamut(const Rgb& c) {
    return std::all_of(c.begin(), c.end(), [](double v) { return v >= -1e-6 && v <= 1 + 1e-6; });
}

QColor compute(double t) {
    const double L = ColorMap::lightness(t);
    const double h = qDegreesToRadians(kHueLo + (kHueHi - kHueLo) * t);
    // Halve the chroma until sRGB can show it, then creep back up.
    double lo = 0, hi = kChroma;
    for (int i = 0; i < 30; ++i) {
        const double c = (lo + hi) / 2;
        (inGamut(oklabToLinear(L, c * std::cos(h), c * std::sin(h))) ? lo : hi) = c;
    }
    if (inGamut(oklabToLinear(L, kChroma * std::cos(h), kChroma * std::sin(h))))
        lo = kChroma;
    const Rgb rgb = oklabToLinear(L, lo * std::cos(h), lo * std::sin(h));
    return QColor::fromRgbF(float(toGamma(rgb[0])), float(toGamma(rgb[1])), float(toGamma(rgb[2])));
}

} // namespace

double ColorMap::lightness(double t) {
    return kLightLo + (kLightHi - kLightLo) * std::clamp(t, 0.0, 1.0);
}

QColor ColorMap::color(double t) {
    static const std::array<QColor, 256> table = [] {
        std::array<QColor, 256> out;
        for (size_t i = 0; i < out.size(); ++i)
            out[i] = compute(double(i) / 255.0);
        return out;
    }();
    if (!(t >= 0))
        t = 0;
    return table[size_t(std::lround(std::min(t, 1.0) * 255.0))];
}

double ColorMap::lightnessOf(const QColor& c) {
    const double r = toLinear(c.redF()), g = toLinear(c.greenF()), b = toLinear(c.blueF());
    const double l = std::cbrt(0.4122214708 * r + 0.5363020719 * g + 0.0514459929 * b);
    const double m = std::cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
    const double s = std::cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
    return 0.2104542553 * l + 0.7936177850 * m - 0.0040720468 * s;
}
