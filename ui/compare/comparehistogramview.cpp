#include "compare/comparehistogramview.h"

#include "chart/axisticks.h"

#include "ckptscope/common/saturating.h"

#include <QCategoryAxis>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>

#include <algorithm>
#include <numeric>

CompareHistogramView::CompareHistogramView(QWidget* parent) : QChartView(parent) {
    setRenderHint(QPainter::Antialiasing, true);
    chart()->legend()->setVisible(true);
    chart()->legend()->setAlignment(Qt::AlignRight); // the plot keeps its height
    chart()->setMargins(QMargins(4, 4, 4, 4));
    chart()->setBackgroundBrush(palette().color(QPalette::Base));
    chart()->legend()->setLabelColor(palette().color(QPalette::Text));
    setMinimumHeight(180);
}

void CompareHistogramView::setHistograms(const ckptscope::Histogram& a,
                                         const ckptscope::Histogram& b) {
    m_a = a;
    m_b = b;
    rebuild();
}

void CompareHistogramView::clear() {
    setHistograms({}, {});
}

void CompareHistogramView::rebuild() {
    QChart* c = chart();
    c->removeAllSeries();
    for (QAbstractAxis* axis : c->axes()) {
        c->removeAxis(axis);
        delete axis;
    }
    const ckptscope::Histogram& ref = m_a.counts.empty() ? m_b : m_a;
    if (ref.counts.empty())
        return;
    const ckptscope::Histogram& edges = ref; // both sides share its bins
    const bool single = !(edges.hi > edges.lo);
    // One value on both sides (a constant tensor): one bar centred on it,
    // as HistogramView draws it.
    const SingleValueSpan span = singleValueSpan(edges.lo);
    const double unit = single ? 1 : plotUnit(edges.lo, edges.hi);
    const double lo = single ? span.lo : edges.lo / unit, hi = single ? span.hi : edges.hi / unit;
    // A side's heights: its counts, or its one bar's whole count (either
    // side may be empty).
    const auto heights = [single](const ckptscope::Histogram& h) {
        return single
                   ? std::vector<uint64_t>{std::accumulate(h.counts.begin(), h.counts.end(),
                                                           uint64_t(0), ckptscope::saturatingAdd)}
                   : h.counts;
    };
    uint64_t peak = 1;
    for (const ckptscope::Histogram* h : {&m_a, &m_b})
        for (uint64_t n : heights(*h))
            peak = std::max(peak, n);
    QCategoryAxis* x = roundValueAxis(lo, hi, 6, unit);
    QCategoryAxis* y = roundCountAxis(double(peak) * 1.05);
    y->setTitleText(tr("count"));
    c->addAxis(x, Qt::AlignBottom);
    c->addAxis(y, Qt::AlignLeft);
    // A solid blue outline for A, a dashed orange one for B: told apart
    // without colour too.
    const struct {
        const ckptscope::Histogram* h;
        QString label;
        QPen pen;
    } sides[] = {{&m_a, tr("A"), QPen(QColor(0x1f, 0x77, 0xb4), 2)},
                 {&m_b, tr("B"), QPen(QColor(0xff, 0x7f, 0x0e), 2, Qt::DashLine)}};
    for (const auto& side : sides) {
        if (side.h->counts.empty())
            continue;
        auto* series = new QLineSeries;
        series->setName(side.label);
        series->setPen(side.pen);
        QList<QPointF> pts;
        pts << QPointF(lo, 0);
        if (single) {
            const double total = double(heights(*side.h)[0]);
            pts << QPointF(span.barLo, 0) << QPointF(span.barLo, total)
                << QPointF(span.barHi, total) << QPointF(span.barHi, 0);
        } else {
            for (size_t i = 0; i < side.h->counts.size(); ++i) {
                const double v = double(side.h->counts[i]);
                pts << QPointF(edges.edge(i) / unit, v) << QPointF(edges.edge(i + 1) / unit, v);
            }
        }
        pts << QPointF(hi, 0);
        series->replace(pts);
        c->addSeries(series);
        series->attachAxis(x);
        series->attachAxis(y);
    }
    for (QAbstractAxis* axis : {static_cast<QAbstractAxis*>(x), static_cast<QAbstractAxis*>(y)}) {
        axis->setLabelsColor(palette().color(QPalette::Text));
        axis->setTitleBrush(palette().color(QPalette::Text));
        axis->setGridLineColor(palette().color(QPalette::Mid));
    }
}
