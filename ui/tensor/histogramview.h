#pragma once

#include "ckptscope/stats/tensorstats.h"

#include <QChartView>

class QAreaSeries;
class QLineSeries;
class QLabel;

// Value histogram on a real-valued x axis (the finite range), drawn as a
// filled step outline so thousands of bins stay cheap; counts on a linear or
// log axis; hovering shows the bin's range and count.
class HistogramView : public QChartView {
    Q_OBJECT
public:
    explicit HistogramView(QWidget* parent = nullptr);

    void setHistogram(const ckptscope::Histogram& histogram);
    void clear();
    void setLogScale(bool on);
    bool logScale() const { return m_log; }
    const ckptscope::Histogram& histogram() const { return m_histogram; }
    // The tooltip text for the bin under a chart x value (tests, hover).
    QString binText(double x) const;

protected:
    void mouseMoveEvent(QMouseEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    void applyPalette();

    ckptscope::Histogram m_histogram;
    double m_unit = 1; // plotUnit of the drawn range: x on the chart is value / m_unit
    bool m_log = false;
};
