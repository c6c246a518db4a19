#include "chart/charthover.h"

#include <QChart>
#include <QChartView>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QStringList>
#include <QToolTip>

#include <cmath>

ChartHover::ChartHover(QChartView* view, std::function<const std::vector<double>&()> xs,
                       std::function<QString(size_t)> text)
    : QObject(view), m_view(view), m_viewport(view->viewport()), m_xs(std::move(xs)),
      m_text(std::move(text)) {
    view->viewport()->setMouseTracking(true);
    view->viewport()->installEventFilter(this);
}

int ChartHover::nearest(const QPoint& viewportPos) const {
    QChart* chart = m_view->chart();
    const std::vector<double>& xs = m_xs();
    if (chart->series().isEmpty() || xs.empty())
        return -1;
    const QPointF inChart = chart->mapFromScene(m_view->mapToScene(viewportPos));
    if (!chart->plotArea().contains(inChart))
        return -1;
    const double x = chart->mapToValue(inChart, chart->series().first()).x();
    size_t best = 0;
    for (size_t c = 1; c < xs.size(); ++c)
        if (std::fabs(xs[c] - x) < std::fabs(xs[best] - x))
            best = c;
    return int(best);
}

QString ChartHover::text(const QPoint& viewportPos) const {
    const int c = nearest(viewportPos);
    if (c < 0)
        return {};
    const std::vector<double>& xs = m_xs();
    QStringList texts;
    for (size_t i = 0; i < xs.size(); ++i)
        if (xs[i] == xs[size_t(c)])
            texts << m_text(i);
    return texts.join(QStringLiteral("\n\n"));
}

bool ChartHover::eventFilter(QObject* watched, QEvent* event) {
    // The viewport's last events (hide, destroy) come while the view itself
    // is being destroyed: nothing of it is called before the event is one
    // of ours.
    const QEvent::Type type = event->type();
    if (watched != m_viewport || (type != QEvent::MouseMove && type != QEvent::ToolTip))
        return false;
    QPoint pos, global;
    if (event->type() == QEvent::MouseMove) {
        const auto* e = static_cast<QMouseEvent*>(event);
        pos = e->position().toPoint();
        global = e->globalPosition().toPoint();
    } else if (event->type() == QEvent::ToolTip) {
        const auto* e = static_cast<QHelpEvent*>(event);
        pos = e->pos();
        global = e->globalPos();
    } else {
        return false;
    }
    const QString shown = text(pos);
    if (shown.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(global, shown, m_view);
    return event->type() == QEvent::ToolTip; // the scene would hide the text
}
