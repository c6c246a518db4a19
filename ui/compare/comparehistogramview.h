#pragma once

#include "ckptscope/stats/tensorstats.h"

#include <QChartView>

// The value histograms of A and B on the same bins, overlaid as two step
// outlines of distinct colour and dash with a legend "A", "B" (the window
// names the files: a legend of file names would be cut short beside it).
class CompareHistogramView : public QChartView {
    Q_OBJECT
public:
    explicit CompareHistogramView(QWidget* parent = nullptr);

    // Both histograms must have the same lo, hi and bin count (either may
    // be empty: that side has no finite value, or no such tensor).
    void setHistograms(const ckptscope::Histogram& a, const ckptscope::Histogram& b);
    void clear();
    const ckptscope::Histogram& histogramA() const { return m_a; }
    const ckptscope::Histogram& histogramB() const { return m_b; }

private:
    void rebuild();

    ckptscope::Histogram m_a, m_b;
};
