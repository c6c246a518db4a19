#pragma once

#include <QObject>
#include <QString>

#include <functional>
#include <vector>

class QChartView;

// Hover for a chart over a run's checkpoints: the mouse over the plot area
// shows the text of the checkpoint nearest on the x axis, and of every other
// at the same x (two checkpoints saved at one step). Installed on the
// view's viewport; it also answers the viewport's tooltip event, which the
// graphics scene would otherwise answer by hiding the text (no item has a
// tooltip of its own).
class ChartHover : public QObject {
    Q_OBJECT
public:
    ChartHover(QChartView* view, std::function<const std::vector<double>&()> xs,
               std::function<QString(size_t)> text);

    // The checkpoint nearest to a viewport point, or -1 outside the plot.
    int nearest(const QPoint& viewportPos) const;
    // What the hover shows at a viewport point (empty outside the plot).
    QString text(const QPoint& viewportPos) const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QChartView* m_view;
    QObject* m_viewport; // compared by address: the view may be half destroyed

    std::function<const std::vector<double>&()> m_xs;
    std::function<QString(size_t)> m_text;
};
