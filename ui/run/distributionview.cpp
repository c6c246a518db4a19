#include "run/distributionview.h"

#include "chart/axisticks.h"
#include "chart/charthover.h"
#include "common/backgroundtask.h"
#include "run/heatmapview.h"
#include "run/runsteps.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/io/httpsource.h"
#include "ckptscope/stats/histogramrebin.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QStackedWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

using namespace ckptscope;

namespace {

QString exactText(double v) {
    return QString::fromStdString(fmt::exact(v));
}

} // namespace

DistributionView::DistributionView(QWidget* parent)
    : QWidget(parent), m_mode(new QComboBox), m_note(new QLabel), m_stack(new QStackedWidget),
      m_bands(new QChartView(new QChart)), m_heatmap(new HeatmapView),
      m_task(std::make_unique<BackgroundTask>(this)) {
    m_mode->addItem(tr("Percentile bands"));
    m_mode->addItem(tr("Histograms per step (heatmap)"));
    m_note->setWordWrap(true);
    m_note->setTextFormat(Qt::PlainText);
    m_bands->setRenderHint(QPainter::Antialiasing);
    m_bands->chart()->legend()->setAlignment(Qt::AlignBottom);
    new ChartHover(
        m_bands, [this]() -> const std::vector<double>& { return m_x; },
        [this](size_t c) { return hoverText(c); });
    m_stack->addWidget(m_bands);
    m_stack->addWidget(m_heatmap);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Show:")));
    controls->addWidget(m_mode);
    controls->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_note);
    layout->addWidget(m_stack, 1);
    connect(m_mode, &QComboBox::currentIndexChanged, this,
            [this](int i) { m_stack->setCurrentIndex(i); });
    m_heatmap->setHoverText([this](int row, int col) {
        const HeatmapData& d = m_heatmap->data();
        const double w = (d.yHi - d.yLo) / d.rows;
        const auto v = d.at(row, col);
        const QString where = RunSteps::of(*m_run).describe(*m_run, size_t(col));
        if (!v)
            return tr("%1\nno histogram at this step").arg(where);
        return tr("%1\nvalues in [%2, %3): %4 of the finite values\n(from the %5-bin summary "
                  "histogram, its bins taken as evenly filled)")
            .arg(where, exactText(d.yLo + row * w), exactText(d.yLo + (row + 1) * w),
                 QString::fromStdString(fmt::display(*v * 100)) + QLatin1Char('%'))
            .arg(kSummaryHistogramBins);
    });
    clearCharts(tr("Select a tensor to see its distribution over the steps."));
}

DistributionView::~DistributionView() = default;

void DistributionView::showHeatmap(bool on) {
    m_mode->setCurrentIndex(on ? 1 : 0);
}

QChart* DistributionView::bandChart() const {
    return m_bands->chart();
}

bool DistributionView::isLoading() const {
    return m_task->isRunning();
}

void DistributionView::waitForLoaded() {
    m_task->waitForFinished();
}

void DistributionView::setRun(std::shared_ptr<const Run> run,
                              std::shared_ptr<const std::vector<TensorSeries>> series) {
    m_run = std::move(run);
    m_series = std::move(series);
    load();
}

void DistributionView::setSelectedTensor(const QString& name) {
    if (name == m_name && !m_histograms.empty())
        return;
    m_name = name;
    load();
}

void DistributionView::clearCharts(const QString& message) {
    m_histograms.clear();
    m_percentiles.clear();
    m_x.clear();
    QChart* chart = m_bands->chart();
    chart->removeAllSeries();
    for (QAbstractAxis* a : chart->axes()) {
        chart->removeAxis(a);
        delete a;
    }
    chart->setTitle(QString());
    m_heatmap->setData({}, message);
    m_note->setText(message);
    QToolTip::hideText();
}

void DistributionView::load() {
    m_task->cancel();
    const TensorSeries* series = nullptr;
    if (m_run && m_series)
        for (const TensorSeries& s : *m_series)
            if (s.occurrence == 0 && QString::fromStdString(s.name) == m_name) {
                series = &s;
                break;
            }
    if (!series) {
        clearCharts(tr("Select a tensor to see its distribution over the steps."));
        return;
    }
    clearCharts(tr("Reading the histograms of %1…").arg(m_name));
    auto run = m_run;
    auto all = m_series;
    const size_t index = size_t(series - all->data());
    m_task->start(
        [this, run, all, index](BackgroundTask::Run& job) {
            const HttpTask http(job.cancelFlag(), nullptr); // checkpoints by URL stop too
            const std::string dir = SummaryCache::defaultDir();
            std::optional<SummaryCache> cache;
            if (!dir.empty())
                cache.emplace(dir, SummaryCache::defaultMaxBytes());
            auto h = readSeriesHistograms(*run, (*all)[index], cache ? &*cache : nullptr,
                                          job.cancelFlag());
            job.finish([this, h = std::move(h)]() mutable { present(std::move(h)); });
        },
        {nullptr, [this](const QString& error) { clearCharts(error); }});
}

void DistributionView::present(SeriesHistograms histograms) {
    m_histograms = std::move(histograms.at);
    m_x = RunSteps::of(*m_run).x;
    m_percentiles.assign(m_histograms.size(), std::nullopt);
    for (size_t c = 0; c < m_histograms.size(); ++c) {
        if (!m_histograms[c])
            continue;
        Percentiles p{};
        bool ok = true;
        for (size_t i = 0; i < p.size(); ++i) {
            const auto v = histogramPercentile(*m_histograms[c], kDistributionPercentiles[i]);
            ok = ok && v.has_value();
            p[i] = v.value_or(0);
        }
        if (ok)
            m_percentiles[c] = p;
    }
    const bool any = std::any_of(m_percentiles.begin(), m_percentiles.end(),
                                 [](const auto& p) { return p.has_value(); });
    QString note =
        any ? tr("%1: percentiles from the %2-bin summary histogram of each step (within one bin "
                 "width; 0 and 100 are the exact min and max of the finite values).")
                  .arg(m_name)
                  .arg(kSummaryHistogramBins)
            : tr("%1 has no finite value in any checkpoint.").arg(m_name);
    for (const std::string& p : histograms.problems)
        note += QLatin1Char('\n') + QString::fromStdString(p);
    m_note->setText(note);
    drawBands();
    drawHeatmap();
}

void DistributionView::drawBands() {
    QChart* chart = m_bands->chart();
    chart->setTitle(tr("%1 — distribution over steps").arg(m_name));
    double lo = 0, hi = 0;
    bool any = false;
    for (const auto& p : m_percentiles)
        if (p) {
            lo = any ? std::min(lo, p->front()) : p->front();
            hi = any ? std::max(hi, p->back()) : p->back();
            any = true;
        }
    if (!any || m_x.empty())
        return;
    const RunSteps steps = RunSteps::of(*m_run);
    double xLo = m_x.front(), xHi = m_x.back();
    if (xHi == xLo)
        xHi = xLo + 1;
    const double pad = hi > lo ? (hi - lo) * 0.05 : 1;
    auto* xAxis = roundValueAxis(xLo, xHi);
    xAxis->setTitleText(steps.title);
    auto* yAxis = roundValueAxis(lo - pad, hi + pad);
    yAxis->setTitleText(tr("value"));
    chart->addAxis(xAxis, Qt::AlignBottom);
    chart->addAxis(yAxis, Qt::AlignLeft);
    const size_t n = kDistributionPercentiles.size();
    // Runs of consecutive checkpoints with a histogram: a band never bridges a gap.
    std::vector<std::pair<size_t, size_t>> runs;
    for (size_t c = 0; c < m_percentiles.size(); ++c) {
        if (!m_percentiles[c])
            continue;
        if (!runs.empty() && runs.back().second == c)
            ++runs.back().second;
        else
            runs.push_back({c, c + 1});
    }
    for (size_t band = 0; band < n / 2; ++band) {
        const QColor fill = QColor::fromHsvF(0.58f, 0.55f, 0.75f - 0.12f * float(band),
                                             0.25f + 0.15f * float(band));
        bool named = false;
        for (const auto& [a, b] : runs) {
            auto* upper = new QLineSeries;
            auto* lower = new QLineSeries;
            for (size_t c = a; c < b; ++c) {
                upper->append(m_x[c], (*m_percentiles[c])[n - 1 - band]);
                lower->append(m_x[c], (*m_percentiles[c])[band]);
            }
            if (b - a == 1) { // one step: a narrow band so it is visible
                const double w = (xHi - xLo) / 200;
                upper->replace(0, m_x[a] - w, upper->at(0).y());
                upper->append(m_x[a] + w, upper->at(0).y());
                lower->replace(0, m_x[a] - w, lower->at(0).y());
                lower->append(m_x[a] + w, lower->at(0).y());
            }
            auto* area = new QAreaSeries(upper, lower);
            upper->setParent(area);
            lower->setParent(area);
            area->setBrush(fill);
            area->setPen(Qt::NoPen);
            // Short names: four bands and the median fit a legend 500 px wide.
            area->setName(tr("p%1–p%2")
                              .arg(kDistributionPercentiles[band])
                              .arg(kDistributionPercentiles[n - 1 - band]));
            chart->addSeries(area);
            area->attachAxis(xAxis);
            area->attachAxis(yAxis);
            if (named)
                chart->legend()->markers(area).value(0)->setVisible(false);
            named = true;
        }
    }
    for (const auto& [a, b] : runs) {
        auto* median = new QLineSeries;
        median->setName(tr("median"));
        median->setPen(QPen(QColor(20, 40, 90), 2));
        for (size_t c = a; c < b; ++c)
            median->append(m_x[c], (*m_percentiles[c])[n / 2]);
        chart->addSeries(median);
        median->attachAxis(xAxis);
        median->attachAxis(yAxis);
        if (a != runs.front().first)
            chart->legend()->markers(median).value(0)->setVisible(false);
    }
}

void DistributionView::drawHeatmap() {
    double lo = 0, hi = 0;
    bool any = false;
    for (const auto& h : m_histograms)
        if (h) {
            lo = any ? std::min(lo, h->lo) : h->lo;
            hi = any ? std::max(hi, h->hi) : h->hi;
            any = true;
        }
    if (!any) {
        m_heatmap->setData({}, m_note->text());
        return;
    }
    if (!(hi > lo)) { // one value everywhere: a range around it
        const double pad = lo != 0 ? std::fabs(lo) * 0.5 : 1;
        lo -= pad;
        hi += pad;
    }
    HeatmapData d;
    d.rows = kHeatmapBins;
    d.cols = int(m_histograms.size());
    d.values.assign(size_t(d.rows * d.cols), std::nullopt);
    for (int c = 0; c < d.cols; ++c) {
        if (!m_histograms[size_t(c)])
            continue;
        const auto shares = rebinHistogram(*m_histograms[size_t(c)], lo, hi, d.rows);
        for (int r = 0; r < d.rows; ++r)
            d.values[size_t(r * d.cols + c)] = shares[size_t(r)];
    }
    const RunSteps steps = RunSteps::of(*m_run);
    d.colX = steps.x;
    d.yLo = lo;
    d.yHi = hi;
    d.xTitle = steps.title;
    d.yTitle = tr("value");
    d.valueTitle = tr("share of the step's finite values");
    m_heatmap->setData(std::move(d));
}

QString DistributionView::hoverText(size_t checkpoint) const {
    if (!m_run || checkpoint >= m_percentiles.size())
        return {};
    QString text = m_name + QLatin1Char('\n') + RunSteps::of(*m_run).describe(*m_run, checkpoint);
    if (!m_percentiles[checkpoint])
        return text + tr("\nno histogram at this step");
    for (size_t i = kDistributionPercentiles.size(); i-- > 0;) {
        const double p = kDistributionPercentiles[i];
        const QString label = p == 0     ? tr("min")
                              : p == 100 ? tr("max")
                              : p == 50  ? tr("median")
                                         : tr("percentile %1").arg(p);
        text += QStringLiteral("\n%1: %2").arg(label, exactText((*m_percentiles[checkpoint])[i]));
    }
    return text;
}
