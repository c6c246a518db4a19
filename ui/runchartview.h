#pragma once

#include "ckptscope/runseries.h"

#include <QWidget>

class QChart;
class QChartView;

// One tensor over a run's steps: mean with a ±std band, min and max on top;
// L2 norm and the NaN/Inf count below. The x axis is the step, or the
// checkpoint's position when some checkpoint has no step.
class RunChartView : public QWidget {
    Q_OBJECT
public:
    explicit RunChartView(QWidget* parent = nullptr);
    // Nothing drawn (and a note) when series is null.
    void show(const ckptscope::Run* run, const ckptscope::TensorSeries* series);

    QChart* valueChart() const;
    QChart* normChart() const;

private:
    QChartView* m_values;
    QChartView* m_norms;
};
