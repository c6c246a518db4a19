#pragma once

#include <QColor>

// A perceptually uniform sequential colour map built in OKLab: lightness
// rises linearly from dark blue-violet through teal and green to yellow,
// so equal steps in value look like equal steps in colour and the map
// stays readable in grey scale. Chroma is reduced where sRGB cannot show
// a colour (never the lightness).
class ColorMap {
public:
    // t in [0, 1] (clamped).
    static QColor color(double t);
    // The OKLab lightness of color(t) as designed (tests check it is linear).
    static double lightness(double t);
    // The OKLab lightness of an sRGB colour.
    static double lightnessOf(const QColor& c);
};
