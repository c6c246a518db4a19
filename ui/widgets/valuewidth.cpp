#include "widgets/valuewidth.h"

#include <QFontMetrics>
#include <QStyle>
#include <QWidget>

#include <algorithm>

using ckptscope::Dtype;

namespace valuewidth {

namespace {

struct Glyphs {
    int digit = 0, sign = 0, point = 0, e = 0, j = 0, margins = 0;
};

Glyphs glyphsOf(const QWidget* view) {
    const QFontMetrics fm(view->font());
    Glyphs g;
    for (char c = '0'; c <= '9'; ++c)
        g.digit = std::max(g.digit, fm.horizontalAdvance(QLatin1Char(c)));
    g.sign =
        std::max(fm.horizontalAdvance(QLatin1Char('-')), fm.horizontalAdvance(QLatin1Char('+')));
    g.point = fm.horizontalAdvance(QLatin1Char('.'));
    g.e = fm.horizontalAdvance(QLatin1Char('e'));
    g.j = fm.horizontalAdvance(QLatin1Char('j'));
    // The delegate's text margins, as QStyledItemDelegate lays a cell out.
    g.margins =
        2 * (view->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, view) + 1) + 6;
    return g;
}

// The shortest round-trip text of a floating-point value with `significant`
// digits and `exponent` exponent digits at most: scientific, or a fixed
// spelling no longer than it (std::to_chars takes the shorter).
int floatWidth(const Glyphs& g, int significant, int exponent) {
    const int scientific =
        g.sign + significant * g.digit + g.point + g.e + g.sign + exponent * g.digit;
    const int characters = 1 + significant + 1 + 1 + 1 + exponent;
    const int fixed = g.sign + g.point + (characters - 2) * g.digit;
    return std::max(scientific, fixed) + g.margins;
}

// A complex value (fmt::exactComplex): two parts, the second's sign the
// separator, and "j".
int complexWidth(const Glyphs& g, int significant, int exponent) {
    return 2 * floatWidth(g, significant, exponent) - g.margins + g.j;
}

} // namespace

int ofDtype(const QWidget* view, Dtype dtype) {
    const Glyphs g = glyphsOf(view);
    const int f32 = floatWidth(g, 9, 2);
    switch (dtype) {
    case Dtype::F64:
        return floatWidth(g, 17, 3);
    case Dtype::C64:
        return complexWidth(g, 9, 2);
    case Dtype::C128:
        return complexWidth(g, 17, 3);
    case Dtype::I64:
        return std::max(f32, g.sign + 19 * g.digit + g.margins);
    case Dtype::U64:
        return std::max(f32, 20 * g.digit + g.margins);
    case Dtype::I32:
    case Dtype::U32:
        return std::max(f32, g.sign + 10 * g.digit + g.margins);
    default:
        return f32;
    }
}

int ofDouble(const QWidget* view) {
    return floatWidth(glyphsOf(view), 17, 3);
}

int ofComplexDouble(const QWidget* view) {
    return complexWidth(glyphsOf(view), 17, 3);
}

int ofIndex(const QWidget* view, unsigned long long largest) {
    const Glyphs g = glyphsOf(view);
    int digits = 1;
    for (; largest >= 10; largest /= 10)
        ++digits;
    return digits * g.digit + g.margins;
}

} // namespace valuewidth
