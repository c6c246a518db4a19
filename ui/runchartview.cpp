#include "runchartview.h"

#include "axisticks.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QScatterSeries>
#include <QVBoxLayout>

#include <algorithm>

using namespace ckptscope;

namespace {

QChartView* makeView(QWidget* parent) {
    auto* chart = new QChart;
    chart->legend()->setAlignment(Qt::AlignBottom);
    auto* view = new QChartView(chart, parent);
    view->setRenderHint(QPainter::Antialiasing);
    return view;
}

void clear(QChart* chart, const QString& title) {
    chart->removeAllSeries();
    for (QAbstractAxis* a : chart->axes()) {
        chart->removeAxis(a);
        delete a;
    }
    chart->setTitle(title);
}

// An axis with its ticks on round numbers (axisticks.h), titled and placed.
QCategoryAxis* axis(QChart* chart, QCategoryAxis* a, const QString& title, Qt::Alignment where) {
    a->setTitleText(title);
    chart->addAxis(a, where);
    return a;
}

void attach(QChart* chart, QAbstractSeries* s, QAbstractAxis* x, QAbstractAxis* y) {
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
}

} // namespace

RunChartView::RunChartView(QWidget* parent)
    : QWidget(parent), m_values(makeView(this)), m_norms(makeView(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_values, 3);
    layout->addWidget(m_norms, 2);
    show(nullptr, nullptr);
}

QChart* RunChartView::valueChart() const {
    return m_values->chart();
}

QChart* RunChartView::normChart() const {
    return m_norms->chart();
}

void RunChartView::show(const Run* run, const TensorSeries* series) {
    QChart* values = m_values->chart();
    QChart* norms = m_norms->chart();
    if (!run || !series) {
        clear(values, tr("Select a tensor to see it over the steps"));
        clear(norms, QString());
        return;
    }
    const QString name = QString::fromStdString(series->name);
    clear(values, tr("%1 — values over steps").arg(name));
    clear(norms, tr("%1 — L2 norm and NaN/Inf").arg(name));
    bool allSteps = true;
    for (const RunCheckpoint& c : run->checkpoints)
        allSteps = allSteps && c.step.has_value();
    const QString xTitle = allSteps ? tr("step") : tr("checkpoint (in step order)");

    auto* mean = new QLineSeries;
    mean->setName(tr("mean"));
    auto* upper = new QLineSeries;
    auto* lower = new QLineSeries;
    auto* minS = new QLineSeries;
    minS->setName(tr("min"));
    auto* maxS = new QLineSeries;
    maxS->setName(tr("max"));
    auto* l2 = new QLineSeries;
    l2->setName(tr("L2 norm"));
    auto* bad = new QScatterSeries;
    bad->setName(tr("NaN/Inf count"));
    bad->setMarkerSize(8);
    double lo = 0, hi = 0, l2Max = 0, badMax = 0, xMin = 0, xMax = 0;
    bool any = false;
    for (size_t c = 0; c < run->checkpoints.size(); ++c) {
        const TensorSummary* t = series->point(*run, c);
        const double x = allSteps ? double(*run->checkpoints[c].step) : double(c);
        xMin = c == 0 ? x : std::min(xMin, x);
        xMax = c == 0 ? x : std::max(xMax, x);
        if (!t)
            continue;
        const TensorStats& s = t->stats;
        const double nonFinite = double(s.nan + s.posInf + s.negInf);
        bad->append(x, nonFinite);
        badMax = std::max(badMax, nonFinite);
        l2->append(x, s.l2);
        l2Max = std::max(l2Max, s.l2);
        if (!s.mean)
            continue;
        mean->append(x, *s.mean);
        upper->append(x, *s.mean + *s.std);
        lower->append(x, *s.mean - *s.std);
        minS->append(x, *s.min);
        maxS->append(x, *s.max);
        lo = any ? std::min(lo, *s.min) : *s.min;
        hi = any ? std::max(hi, *s.max) : *s.max;
        any = true;
    }
    if (xMax == xMin)
        xMax = xMin + 1;

    QCategoryAxis* x1 = axis(values, roundValueAxis(xMin, xMax), xTitle, Qt::AlignBottom);
    QCategoryAxis* y1 =
        axis(values,
             roundValueAxis(lo - (hi - lo) * 0.05 - (hi == lo), hi + (hi - lo) * 0.05 + (hi == lo)),
             tr("value"), Qt::AlignLeft);
    auto* band = new QAreaSeries(upper, lower);
    upper->setParent(band); // the area series does not own its edges
    lower->setParent(band);
    band->setName(tr("mean ± std"));
    QColor fill(70, 130, 180, 70);
    band->setBrush(fill);
    band->setPen(QPen(fill));
    attach(values, band, x1, y1);
    attach(values, mean, x1, y1);
    attach(values, minS, x1, y1);
    attach(values, maxS, x1, y1);

    QCategoryAxis* x2 = axis(norms, roundValueAxis(xMin, xMax), xTitle, Qt::AlignBottom);
    QCategoryAxis* yL2 =
        axis(norms, roundValueAxis(0, l2Max > 0 ? l2Max * 1.05 : 1), tr("L2 norm"), Qt::AlignLeft);
    QCategoryAxis* yBad = axis(norms, roundCountAxis(std::max(badMax * 1.1, 5.0)),
                               tr("NaN/Inf values"), Qt::AlignRight);
    attach(norms, l2, x2, yL2);
    attach(norms, bad, x2, yBad);
}
