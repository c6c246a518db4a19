#include "tensor/histogramview.h"

#include "chart/axisticks.h"
#include "common/sizeformat.h"

#include "ckptscope/common/saturating.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMouseEvent>
#include <QToolTip>

#include <algorithm>

HistogramView::HistogramView(QWidget* parent) : QChartView(parent) {
    setRenderHint(QPainter::Antialiasing, false);
    setMouseTracking(true);
    chart()->legend()->hide();
    chart()->setMargins(QMargins(4, 4, 4, 4));
    setMinimumHeight(180);
    applyPalette();
    rebuild();
}

void HistogramView::setHistogram(const ckptscope::Histogram& histogram) {
    m_histogram = histogram;
    rebuild();
}

void HistogramView::clear() {
    setHistogram({});
}

void HistogramView::setLogScale(bool on) {
    if (on == m_log)
        return;
    m_log = on;
    rebuild();
}

void HistogramView::rebuild() {
    QChart* c = chart();
    c->removeAllSeries();
    for (QAbstractAxis* axis : c->axes()) {
        c->removeAxis(axis); // gives up ownership: delete, or every redraw leaks
        delete axis;
    }
    const auto& counts = m_histogram.counts;
    if (counts.empty())
        return;
    // A log axis cannot show 0: empty bins sit on a floor below 1.
    const double floor = m_log ? 0.5 : 0.0;
    auto* upper = new QLineSeries;
    auto* lower = new QLineSeries;
    QList<QPointF> pts;
    pts.reserve(qsizetype(counts.size() * 2));
    uint64_t peak = 1;
    double lo = m_histogram.lo, hi = m_histogram.hi;
    m_unit = plotUnit(lo, hi);
    if (hi > lo) {
        for (size_t i = 0; i < counts.size(); ++i) {
            const double y = std::max(floor, double(counts[i]));
            pts << QPointF(m_histogram.edge(i) / m_unit, y)
                << QPointF(m_histogram.edge(i + 1) / m_unit, y);
            peak = std::max(peak, counts[i]);
        }
        lo /= m_unit;
        hi /= m_unit;
    } else { // one value (a constant tensor, a scalar): one bar centred on it
        const SingleValueSpan span = singleValueSpan(lo);
        lo = span.lo;
        hi = span.hi;
        uint64_t total = 0;
        for (uint64_t n : counts)
            total = ckptscope::saturatingAdd(total, n);
        peak = std::max<uint64_t>(1, total);
        const double y = std::max(floor, double(peak));
        pts << QPointF(lo, floor) << QPointF(span.barLo, floor) << QPointF(span.barLo, y)
            << QPointF(span.barHi, y) << QPointF(span.barHi, floor) << QPointF(hi, floor);
    }
    upper->replace(pts);
    lower->replace({QPointF(lo, floor), QPointF(hi, floor)});
    auto* area = new QAreaSeries(upper, lower);
    const QColor fill = palette().color(QPalette::Highlight);
    area->setBrush(fill);
    area->setPen(QPen(fill.darker(130), 1));
    c->addSeries(area);

    // Ticks on round numbers, labelled exactly (a category axis puts each
    // label on its value); the histogram still spans [lo, hi].
    QCategoryAxis* x = roundValueAxis(lo, hi, 6, m_unit);
    QAbstractAxis* y;
    if (m_log) {
        auto* logAxis = new QLogValueAxis;
        logAxis->setBase(10);
        logAxis->setRange(floor, double(peak) * 2);
        logAxis->setLabelFormat(QStringLiteral("%g"));
        y = logAxis;
    } else {
        y = roundCountAxis(double(peak) * 1.05);
    }
    y->setTitleText(tr("count"));
    for (QAbstractAxis* axis : {static_cast<QAbstractAxis*>(x), y}) {
        axis->setLabelsColor(palette().color(QPalette::Text));
        axis->setTitleBrush(palette().color(QPalette::Text));
        axis->setGridLineColor(palette().color(QPalette::Mid));
        axis->setLinePenColor(palette().color(QPalette::Mid));
    }
    c->addAxis(x, Qt::AlignBottom);
    c->addAxis(y, Qt::AlignLeft);
    area->attachAxis(x);
    area->attachAxis(y);
}

QString HistogramView::binText(double x) const {
    const auto& counts = m_histogram.counts;
    if (counts.empty() || x < m_histogram.lo || x > m_histogram.hi ||
        !(m_histogram.hi > m_histogram.lo))
        return {};
    const size_t bin = m_histogram.binOf(x);
    const bool last = bin + 1 == counts.size();
    return tr("[%1, %2%3\n%4 values")
        .arg(QString::number(m_histogram.edge(bin), 'g', 6),
             QString::number(m_histogram.edge(bin + 1), 'g', 6),
             last ? QStringLiteral("]") : QStringLiteral(")"), groupedNumber(counts[bin]));
}

void HistogramView::mouseMoveEvent(QMouseEvent* event) {
    QChartView::mouseMoveEvent(event);
    if (m_histogram.counts.empty() || chart()->series().isEmpty())
        return;
    const QPointF scene = mapToScene(event->position().toPoint());
    const QPointF value =
        chart()->mapToValue(chart()->mapFromScene(scene), chart()->series().first());
    const QString text = chart()->plotArea().contains(chart()->mapFromScene(scene))
                             ? binText(value.x() * m_unit)
                             : QString();
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void HistogramView::applyPalette() {
    // Follow the system palette (dark themes included) instead of a chart theme.
    chart()->setBackgroundBrush(palette().color(QPalette::Base));
    chart()->setPlotAreaBackgroundVisible(false);
    chart()->setTitleBrush(palette().color(QPalette::Text));
    setBackgroundBrush(palette().color(QPalette::Window));
}

void HistogramView::changeEvent(QEvent* event) {
    QChartView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyPalette();
        rebuild();
    }
}
