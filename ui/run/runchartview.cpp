#include "run/runchartview.h"

#include "chart/axisticks.h"

#include "ckptscope/common/numberformat.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QContextMenuEvent>
#include <QGraphicsLineItem>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMenu>
#include <QMouseEvent>
#include <QScatterSeries>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

using namespace ckptscope;

namespace {

QChartView* makeView(QWidget* parent) {
    auto* chart = new QChart;
    chart->legend()->setAlignment(Qt::AlignBottom);
    auto* view = new QChartView(chart, parent);
    view->setRenderHint(QPainter::Antialiasing);
    view->viewport()->setMouseTracking(true);
    return view;
}

QGraphicsLineItem* makeMarker(QChartView* view) {
    auto* line = new QGraphicsLineItem;
    line->setPen(QPen(QColor(90, 90, 90), 1, Qt::DashLine));
    line->setZValue(100);
    line->hide();
    view->scene()->addItem(line);
    return line;
}

// The hovered checkpoint's values, in a box beside the marker (plain text:
// a tensor name is never read as markup).
QGraphicsRectItem* makeLabel(QChartView* view) {
    auto* box = new QGraphicsRectItem;
    box->setBrush(QColor(255, 255, 255, 235));
    box->setPen(QPen(QColor(150, 150, 150)));
    box->setZValue(101);
    box->hide();
    new QGraphicsSimpleTextItem(box);
    view->scene()->addItem(box);
    return box;
}

QString num(std::optional<double> v) {
    return v ? QString::fromStdString(fmt::exact(*v)) : QString::fromUtf8(fmt::kMissing);
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
    : QWidget(parent), m_values(makeView(this)), m_norms(makeView(this)),
      m_optimizer(makeView(this)), m_valueMarker(makeMarker(m_values)),
      m_normMarker(makeMarker(m_norms)), m_optimizerMarker(makeMarker(m_optimizer)),
      m_label(makeLabel(m_values)) {
    for (QChartView* v : {m_values, m_norms, m_optimizer})
        v->viewport()->installEventFilter(this);
    m_optimizer->setObjectName(QStringLiteral("optimizerChart"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_values, 3);
    layout->addWidget(m_norms, 2);
    layout->addWidget(m_optimizer, 2);
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
    hover(-1);
    m_run = run && series ? run : nullptr;
    m_series = run ? series : nullptr;
    m_x.clear();
    m_updates = run ? updatesByTensor(*run) : UpdatesByTensor{};
    if (!run || !series) {
        clear(values,
              run ? tr("Select a tensor to see it over the steps") : tr("No checkpoints read yet"));
        clear(norms, QString());
        clear(m_optimizer->chart(), QString());
        m_optimizer->hide();
        return;
    }
    const QString name = QString::fromStdString(series->name);
    clear(values, tr("%1 — values over steps").arg(name));
    clear(norms, tr("%1 — L2 norm and NaN/Inf").arg(name));
    bool allSteps = true;
    for (const RunCheckpoint& c : run->checkpoints)
        allSteps = allSteps && c.step.has_value();
    const QString xTitle = allSteps ? tr("step") : tr("checkpoint (in step order)");

    const Plot plot = plotPoints(*run, *series, allSteps);
    attachValues(values, plot, xTitle);
    attachNorms(norms, plot.l2, plot.bad, plot.ranges, xTitle);
    m_optimizer->setVisible(showOptimizer(name, xTitle, plot.ranges.xMin, plot.ranges.xMax));
}

RunChartView::Plot RunChartView::plotPoints(const Run& run, const TensorSeries& series,
                                            bool allSteps) {
    Plot p;
    p.mean = new QLineSeries;
    p.mean->setName(tr("mean"));
    p.upper = new QLineSeries;
    p.lower = new QLineSeries;
    p.min = new QLineSeries;
    p.min->setName(tr("min"));
    p.max = new QLineSeries;
    p.max->setName(tr("max"));
    p.l2 = new QLineSeries;
    p.l2->setName(tr("L2 norm"));
    p.bad = new QScatterSeries;
    p.bad->setName(tr("NaN/Inf count"));
    p.bad->setMarkerSize(8);
    double& xMin = p.ranges.xMin;
    double& xMax = p.ranges.xMax;
    bool any = false;
    for (size_t c = 0; c < run.checkpoints.size(); ++c) {
        const TensorSummary* t = series.point(run, c);
        const double x = allSteps ? double(*run.checkpoints[c].step) : double(c);
        xMin = c == 0 ? x : std::min(xMin, x);
        xMax = c == 0 ? x : std::max(xMax, x);
        m_x.push_back(x);
        if (!t)
            continue;
        const TensorStats& s = t->stats;
        const double nonFinite = double(s.nan + s.posInf + s.negInf);
        p.bad->append(x, nonFinite);
        p.ranges.badMax = std::max(p.ranges.badMax, nonFinite);
        p.l2->append(x, s.l2);
        p.ranges.l2Max = std::max(p.ranges.l2Max, s.l2);
        if (!s.mean)
            continue;
        p.mean->append(x, *s.mean);
        p.upper->append(x, *s.mean + *s.std);
        p.lower->append(x, *s.mean - *s.std);
        p.min->append(x, *s.min);
        p.max->append(x, *s.max);
        // The band can reach past min (many zeros and a few large values).
        p.lo = std::min(any ? p.lo : *s.min, std::min(*s.min, *s.mean - *s.std));
        p.hi = std::max(any ? p.hi : *s.max, std::max(*s.max, *s.mean + *s.std));
        any = true;
    }
    if (xMax == xMin) { // one checkpoint: an axis around its step
        const double half = std::max(1.0, std::abs(xMin) * 0.1);
        xMin -= half;
        xMax += half;
    }
    // Room for half a marker at either end: the first and last steps'
    // points (the NaN/Inf count at the last step) drawn whole, not cut by
    // the plot's edge. The ticks stay on the round steps inside.
    const double xPad = (xMax - xMin) * 0.02;
    xMin -= xPad;
    xMax += xPad;
    // A single point draws no line: show every point as a marker then.
    if (m_x.size() == 1)
        for (QLineSeries* line : {p.mean, p.min, p.max, p.l2})
            line->setPointsVisible(true);
    return p;
}

void RunChartView::attachValues(QChart* values, const Plot& p, const QString& xTitle) {
    const double lo = p.lo, hi = p.hi;
    QCategoryAxis* x1 =
        axis(values, roundValueAxis(p.ranges.xMin, p.ranges.xMax), xTitle, Qt::AlignBottom);
    QCategoryAxis* y1 =
        axis(values,
             roundValueAxis(lo - (hi - lo) * 0.05 - (hi == lo), hi + (hi - lo) * 0.05 + (hi == lo)),
             tr("value"), Qt::AlignLeft);
    auto* band = new QAreaSeries(p.upper, p.lower);
    p.upper->setParent(band); // the area series does not own its edges
    p.lower->setParent(band);
    band->setName(tr("mean ± std"));
    QColor fill(70, 130, 180, 70);
    band->setBrush(fill);
    band->setPen(QPen(fill));
    attach(values, band, x1, y1);
    attach(values, p.mean, x1, y1);
    attach(values, p.min, x1, y1);
    attach(values, p.max, x1, y1);
}

bool RunChartView::showOptimizer(const QString& name, const QString& xTitle, double xMin,
                                 double xMax) {
    QChart* chart = m_optimizer->chart();
    clear(chart, tr("%1 — update / weight of the optimizer's last update").arg(name));
    auto* ratio = new QLineSeries;
    ratio->setName(tr("update / weight"));
    auto* median = new QLineSeries;
    median->setName(tr("median of the run's parameters"));
    median->setPen(QPen(QColor(120, 120, 120), 1.5, Qt::DashLine));
    double lo = 0, hi = 0;
    const auto extend = [&](double v) {
        lo = lo > 0 ? std::min(lo, v) : v;
        hi = std::max(hi, v);
    };
    for (size_t c = 0; c < m_x.size(); ++c) {
        const ParameterUpdate* u =
            m_series->occurrence == 0 ? updateOf(m_updates, c, m_series->name) : nullptr;
        // A log axis: only positive, finite figures are drawn.
        if (u && u->updateToWeight && *u->updateToWeight > 0 && std::isfinite(*u->updateToWeight)) {
            ratio->append(m_x[c], *u->updateToWeight);
            extend(*u->updateToWeight);
        }
        if (const auto m = medianUpdateToWeight(m_run->checkpoints[c])) {
            median->append(m_x[c], *m);
            extend(*m);
        }
    }
    if (ratio->count() == 0) {
        delete ratio;
        delete median;
        return false;
    }
    if (ratio->count() == 1)
        ratio->setPointsVisible(true);
    QCategoryAxis* x = axis(chart, roundValueAxis(xMin, xMax), xTitle, Qt::AlignBottom);
    auto* y = new QLogValueAxis;
    y->setBase(10);
    y->setLabelFormat(QStringLiteral("%.0e"));
    y->setRange(std::pow(10, std::floor(std::log10(lo))), std::pow(10, std::ceil(std::log10(hi))));
    y->setTitleText(tr("update / weight"));
    chart->addAxis(y, Qt::AlignLeft);
    attach(chart, median, x, y);
    attach(chart, ratio, x, y);
    return true;
}

void RunChartView::attachNorms(QChart* norms, QLineSeries* l2, QScatterSeries* bad,
                               const NormRanges& r, const QString& xTitle) {
    QCategoryAxis* x2 = axis(norms, roundValueAxis(r.xMin, r.xMax), xTitle, Qt::AlignBottom);
    // Up to the round tick above the largest norm, so the top label is
    // never below a value drawn (5.04 on an axis labelled 0-5).
    const double l2Top = r.l2Max > 0 ? r.l2Max * 1.05 : 1;
    const double l2Step = roundTickStep(l2Top, 6);
    // Both axes a little below zero, alike so their zeros stay level: a
    // count of 0 is drawn as a whole marker on the plot, not half of one.
    constexpr double kBelowZero = 0.04;
    const double l2Max = std::ceil(l2Top / l2Step) * l2Step;
    QCategoryAxis* yL2 =
        axis(norms, roundValueAxis(-kBelowZero * l2Max, l2Max), tr("L2 norm"), Qt::AlignLeft);
    QCategoryAxis* yBad =
        axis(norms, roundCountAxis(std::max(r.badMax * 1.1, 5.0)), tr("NaN/Inf"), Qt::AlignRight);
    yBad->setMin(-kBelowZero * yBad->max());
    // One grid: the right axis's ticks fall between the left's and would
    // draw a second, unevenly spaced set of lines.
    yBad->setGridLineVisible(false);
    attach(norms, l2, x2, yL2);
    attach(norms, bad, x2, yBad);
}

int RunChartView::checkpointAt(QChartView* view, const QPoint& viewportPos) const {
    QChart* chart = view->chart();
    // A few pixels of slack: the first and last steps lie on the plot's edges.
    if (m_x.empty() || chart->series().isEmpty() ||
        !chart->plotArea().adjusted(-4, -4, 4, 4).contains(view->mapToScene(viewportPos)))
        return -1;
    const double x = chart->mapToValue(view->mapToScene(viewportPos), chart->series().last()).x();
    int best = -1;
    for (size_t c = 0; c < m_x.size(); ++c)
        if (best < 0 || std::abs(m_x[c] - x) < std::abs(m_x[size_t(best)] - x))
            best = int(c);
    return best;
}

QString RunChartView::hover(int checkpoint) {
    m_hovered = checkpoint >= 0 && size_t(checkpoint) < m_x.size() ? checkpoint : -1;
    const std::pair<QChartView*, QGraphicsLineItem*> pairs[] = {
        {m_values, m_valueMarker}, {m_norms, m_normMarker}, {m_optimizer, m_optimizerMarker}};
    for (const auto& [view, marker] : pairs) {
        QChart* chart = view->chart();
        if (m_hovered < 0 || chart->series().isEmpty()) {
            marker->hide();
            continue;
        }
        const QRectF area = chart->plotArea();
        const double px =
            chart->mapToPosition(QPointF(m_x[size_t(m_hovered)], 0), chart->series().last()).x();
        marker->setLine(px, area.top(), px, area.bottom());
        marker->show();
    }
    const QString text = describe(m_hovered);
    auto* label = static_cast<QGraphicsSimpleTextItem*>(m_label->childItems().first());
    label->setText(text);
    m_label->setVisible(!text.isEmpty() && m_valueMarker->isVisible());
    if (m_label->isVisible()) {
        // Beside the marker, on the side with more room.
        const QRectF area = m_values->chart()->plotArea();
        const QRectF r = label->boundingRect().adjusted(-6, -4, 6, 4);
        const double px = m_valueMarker->line().x1();
        const double x = px + 8 + r.width() <= area.right() ? px + 8 : px - 8 - r.width();
        m_label->setRect(0, 0, r.width(), r.height());
        m_label->setPos(x, area.top() + 6);
        label->setPos(6, 4);
    }
    return text;
}

QString RunChartView::hoverLabel() const {
    return m_label->isVisible()
               ? static_cast<QGraphicsSimpleTextItem*>(m_label->childItems().first())->text()
               : QString();
}

QString RunChartView::describe(int checkpoint) const {
    if (!m_run || !m_series || checkpoint < 0 || size_t(checkpoint) >= m_run->checkpoints.size())
        return {};
    const RunCheckpoint& c = m_run->checkpoints[size_t(checkpoint)];
    QString text = c.step ? tr("step %1").arg(QString::fromStdString(fmt::grouped(*c.step)))
                          : tr("checkpoint %1 (no step)").arg(checkpoint + 1);
    text += QStringLiteral(" — ") + QString::fromStdString(c.name);
    const TensorSummary* t = m_series->point(*m_run, size_t(checkpoint));
    if (!t)
        return text + QLatin1Char('\n') +
               tr("%1 is not in this checkpoint").arg(QString::fromStdString(m_series->name));
    const TensorStats& s = t->stats;
    text += QLatin1Char('\n') + tr("mean %1, std %2").arg(num(s.mean), num(s.std));
    text += QLatin1Char('\n') + tr("min %1, max %2").arg(num(s.min), num(s.max));
    text += QLatin1Char('\n') + tr("L2 norm %1").arg(num(s.l2));
    text += QLatin1Char('\n') + tr("NaN %1, +Inf %2, −Inf %3")
                                    .arg(QString::fromStdString(fmt::grouped(s.nan)),
                                         QString::fromStdString(fmt::grouped(s.posInf)),
                                         QString::fromStdString(fmt::grouped(s.negInf)));
    if (const ParameterUpdate* u = m_series->occurrence == 0
                                       ? updateOf(m_updates, size_t(checkpoint), m_series->name)
                                       : nullptr)
        text += QLatin1Char('\n') +
                tr("update / weight %1, update RMS %2, √v RMS %3")
                    .arg(num(u->updateToWeight), num(u->updateRms), num(u->expAvgSqSqrtRms));
    return text;
}

bool RunChartView::eventFilter(QObject* watched, QEvent* event) {
    QChartView* view = watched == m_values->viewport()      ? m_values
                       : watched == m_norms->viewport()     ? m_norms
                       : watched == m_optimizer->viewport() ? m_optimizer
                                                            : nullptr;
    if (!view)
        return QWidget::eventFilter(watched, event);
    switch (event->type()) {
    case QEvent::MouseMove: {
        auto* e = static_cast<QMouseEvent*>(event);
        const int c = checkpointAt(view, e->position().toPoint());
        if (c != m_hovered)
            hover(c);
        break;
    }
    case QEvent::Leave:
        hover(-1);
        break;
    case QEvent::MouseButtonRelease: {
        auto* e = static_cast<QMouseEvent*>(event);
        const int c = checkpointAt(view, e->position().toPoint());
        if (e->button() == Qt::LeftButton && c >= 0)
            Q_EMIT openRequested(c);
        break;
    }
    case QEvent::ContextMenu: {
        auto* e = static_cast<QContextMenuEvent*>(event);
        const int c = checkpointAt(view, e->pos());
        if (c < 0)
            break;
        QMenu menu(this);
        menu.setObjectName(QStringLiteral("checkpointMenu"));
        menu.addAction(tr("Open This Checkpoint"), this, [this, c] { Q_EMIT openRequested(c); })
            ->setObjectName(QStringLiteral("openCheckpoint"));
        QAction* compare = menu.addAction(tr("Compare with Previous Checkpoint"), this,
                                          [this, c] { Q_EMIT compareRequested(c); });
        compare->setObjectName(QStringLiteral("compareWithPrevious"));
        compare->setEnabled(c > 0);
        menu.exec(e->globalPos());
        return true;
    }
    default:
        break;
    }
    return QWidget::eventFilter(watched, event);
}
