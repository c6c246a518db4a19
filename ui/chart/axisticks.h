#pragma once

#include <QString>

#include <vector>

class QCategoryAxis;

// Axis ticks on round numbers: multiples of 1, 2 or 5 × 10^k, about
// `target` of them inside [lo, hi], labelled with just the digits that tell
// them apart ("0.12", "1.2e-07", "0"). Computed as k × step, never by
// repeated addition, so zero is exactly 0.
struct AxisTick {
    double value;
    QString label;
};

// A 1, 2 or 5 × 10^k step for about `target` ticks over `span` plotting
// units of `unit` each, in values (unit × plotting units).
double roundTickStep(double span, int target, double unit = 1);
// `unit` (a power of two): ticks placed over [lo, hi] in plotting units,
// labelled with value × unit — for ranges wider than a double holds.
std::vector<AxisTick> roundTicks(double lo, double hi, int target = 6, double unit = 1);
// The same for counts: whole-number steps, labels grouped ("1,200").
std::vector<AxisTick> roundCountTicks(double hi, int target = 5);

// Chart axes with those ticks (and their grid lines), each label on its
// value: over [lo, hi] for values, over [0, hi] for counts. Every chart of
// values (histograms, comparisons, runs) uses these.
QCategoryAxis* roundValueAxis(double lo, double hi, int target = 6, double unit = 1);

// The plotting unit for values in [lo, hi]: 1, or 2 when hi − lo passes the
// double range (F64 values near ±max), so a chart's span stays finite.
// Plot value / unit and label with roundValueAxis(lo / unit, hi / unit, …, unit).
double plotUnit(double lo, double hi);
// The axis around a histogram of one value v (a constant tensor) and its
// bar's edges: v ± 10 % of |v| (± 1 at zero), the bar a tenth of that;
// within the double range (v near ±max: the axis ends at v) and never empty
// (a denormal v: ± the least normal double).
struct SingleValueSpan {
    double lo, hi, barLo, barHi;
};
SingleValueSpan singleValueSpan(double v);
QCategoryAxis* roundCountAxis(double hi, int target = 5);
