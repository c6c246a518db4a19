#include "chart/axisticks.h"

#include "common/sizeformat.h"

#include <QCategoryAxis>

#include <algorithm>
#include <cmath>
#include <limits>

double roundTickStep(double span, int target, double unit) {
    if (!(span > 0) || !std::isfinite(span) || target < 1)
        return unit;
    const double raw = span / target * unit;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double m = raw / magnitude;
    return (m < 1.5 ? 1.0 : m < 3.0 ? 2.0 : m < 7.0 ? 5.0 : 10.0) * magnitude;
}

double plotUnit(double lo, double hi) {
    return std::isfinite(hi - lo) ? 1.0 : 2.0;
}

SingleValueSpan singleValueSpan(double v) {
    const double half =
        v != 0 ? std::max(std::abs(v) * 0.1, std::numeric_limits<double>::min()) : 1.0;
    SingleValueSpan s{v - half, v + half, v - half / 10, v + half / 10};
    if (!std::isfinite(s.hi)) // v near +max: the axis ends at it
        s = {v - 2 * half, v, v - half / 5, v};
    if (!std::isfinite(s.lo))
        s = {v, v + 2 * half, v, v + half / 5};
    return s;
}

std::vector<AxisTick> roundTicks(double lo, double hi, int target, double unit) {
    std::vector<AxisTick> ticks;
    const double step = roundTickStep(hi - lo, target, unit) / unit; // round in values
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo) || !std::isfinite(step) || step <= 0)
        return ticks;
    const double first = std::ceil(lo / step - 1e-9), last = std::floor(hi / step + 1e-9);
    if (last - first > 1000) // cannot happen for a round step; guard anyway
        return ticks;
    // Significant digits that separate neighbours: down to the step's digit.
    const double largest = std::max(std::abs(first * step), std::abs(last * step)) * unit;
    const int digits = largest > 0 ? std::max(1, int(std::floor(std::log10(largest))) -
                                                     int(std::floor(std::log10(step) + 1e-9)) + 1)
                                   : 1;
    // Plain decimals where they stay short ("1500", "0.12"), else exponents.
    const bool plain = step * unit >= 1e-5 && largest < 1e7;
    const int decimals = std::max(0, -int(std::floor(std::log10(step * unit) + 1e-9)));
    for (double k = first; k <= last; ++k) {
        const double v = k == 0 ? 0.0 : k * step; // never "-0"
        ticks.push_back({v, plain ? QString::number(v * unit, 'f', decimals)
                                  : QString::number(v * unit, 'g', std::min(digits, 17))});
    }
    return ticks;
}

std::vector<AxisTick> roundCountTicks(double hi, int target) {
    std::vector<AxisTick> ticks;
    if (!(hi > 0) || !std::isfinite(hi))
        return ticks;
    const double step = std::max(1.0, roundTickStep(hi, target));
    for (double k = 0; k * step <= hi && ticks.size() < 1000; ++k)
        ticks.push_back({k * step, groupedNumber(uint64_t(k * step))});
    return ticks;
}

static QCategoryAxis* categoryAxis(double lo, double hi, const std::vector<AxisTick>& ticks) {
    auto* axis = new QCategoryAxis;
    axis->setRange(lo, hi);
    // The start value carries no label of its own: keep it out of range so a
    // tick on lo itself is labelled too.
    axis->setStartValue(lo - (hi - lo) - 1);
    axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    // Qt elides a category label that it thinks lacks room ("…" for
    // "40,000" on a short chart); a tick label is shown whole.
    axis->setTruncateLabels(false);
    for (const AxisTick& t : ticks)
        axis->append(t.label, t.value);
    return axis;
}

QCategoryAxis* roundValueAxis(double lo, double hi, int target, double unit) {
    return categoryAxis(lo, hi, roundTicks(lo, hi, target, unit));
}

QCategoryAxis* roundCountAxis(double hi, int target) {
    return categoryAxis(0, hi, roundCountTicks(hi, target));
}
