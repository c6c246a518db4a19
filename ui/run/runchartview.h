#pragma once

#include "ckptscope/run/optimizeroutliers.h"
#include "ckptscope/run/runseries.h"

#include <QWidget>

#include <vector>

class QChart;
class QChartView;
class QLineSeries;
class QScatterSeries;
class QGraphicsLineItem;
class QGraphicsRectItem;

// One tensor over a run's steps: mean with a ±std band, min and max on top;
// L2 norm and the NaN/Inf count below. The x axis is the step, or the
// checkpoint's position when some checkpoint has no step. Hovering shows
// the nearest checkpoint's step and exact values under a vertical marker;
// a click opens that checkpoint, the context menu also compares it with the
// one before.
class RunChartView : public QWidget {
    Q_OBJECT
public:
    explicit RunChartView(QWidget* parent = nullptr);
    // Nothing drawn (and a note) when series is null. Both must outlive the
    // next show() call.
    void show(const ckptscope::Run* run, const ckptscope::TensorSeries* series);

    QChart* valueChart() const;
    QChart* normChart() const;
    // update / weight over the steps with the run's median beside it: shown
    // when some checkpoint holds this tensor's optimizer state.
    QChartView* optimizerView() const { return m_optimizer; }
    QChartView* valueView() const { return m_values; }
    QChartView* normView() const { return m_norms; }
    // The checkpoint nearest to a point of either view's viewport, or -1.
    int checkpointAt(QChartView* view, const QPoint& viewportPos) const;
    // Marks checkpoint c (-1: none) and shows its values beside the marker;
    // returns that text.
    QString hover(int checkpoint);
    // The text shown beside the marker ("" when hidden).
    QString hoverLabel() const;
    int hovered() const { return m_hovered; }
    // What hovering shows for checkpoint c: step, file, exact statistics.
    QString describe(int checkpoint) const;

Q_SIGNALS:
    void openRequested(int checkpoint);
    void compareRequested(int checkpoint); // with the checkpoint before it

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct NormRanges {
        double xMin, xMax, l2Max, badMax;
    };
    // One tensor's series over the run, made by plotPoints and not yet on a
    // chart, with the ranges their axes need.
    struct Plot {
        QLineSeries *mean, *upper, *lower, *min, *max, *l2; // upper, lower: mean ± std
        QScatterSeries* bad;                                // the NaN/Inf count
        double lo = 0, hi = 0; // the values' range, the ±std band included
        NormRanges ranges{};   // x padded for the markers at either end
    };
    // A point per checkpoint holding the tensor; each checkpoint's x in m_x.
    Plot plotPoints(const ckptscope::Run& run, const ckptscope::TensorSeries& series,
                    bool allSteps);
    // The value chart's axes, its mean ± std band and its lines.
    static void attachValues(QChart* values, const Plot& p, const QString& xTitle);
    // The norm chart's axes (L2 left, NaN/Inf count right) and its series.
    static void attachNorms(QChart* norms, QLineSeries* l2, QScatterSeries* bad,
                            const NormRanges& r, const QString& xTitle);

    // Fills the optimizer chart; false when the tensor has no update figure.
    bool showOptimizer(const QString& name, const QString& xTitle, double xMin, double xMax);

    QChartView* m_values;
    QChartView* m_norms;
    QChartView* m_optimizer;
    QGraphicsLineItem* m_valueMarker;
    QGraphicsLineItem* m_normMarker;
    QGraphicsLineItem* m_optimizerMarker;
    QGraphicsRectItem* m_label; // the hovered values, on the value chart
    const ckptscope::Run* m_run = nullptr;
    const ckptscope::TensorSeries* m_series = nullptr;
    std::vector<double> m_x; // per checkpoint
    ckptscope::UpdatesByTensor m_updates;
    int m_hovered = -1;
};
