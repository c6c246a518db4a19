#include "run/metadatachartview.h"

#include "common/axisticks.h"
#include "common/charthover.h"
#include "run/runsteps.h"

#include "ckptscope/common/numberformat.h"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <cmath>

using namespace ckptscope;

MetadataChartView::MetadataChartView(QWidget* parent)
    : QWidget(parent), m_key(new QComboBox), m_note(new QLabel),
      m_view(new QChartView(new QChart)) {
    m_note->setWordWrap(true);
    m_note->setTextFormat(Qt::PlainText);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->chart()->legend()->hide();
    new ChartHover(
        m_view, [this]() -> const std::vector<double>& { return m_x; },
        [this](size_t c) { return hoverText(c); });
    m_key->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Key:")));
    controls->addWidget(m_key);
    controls->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_note);
    layout->addWidget(m_view, 1);
    connect(m_key, &QComboBox::currentIndexChanged, this, &MetadataChartView::draw);
    draw();
}

QChart* MetadataChartView::chart() const {
    return m_view->chart();
}

void MetadataChartView::setRun(std::shared_ptr<const Run> run) {
    const QString keep = m_key->currentText();
    m_run = std::move(run);
    m_text = m_run ? metadataSeries(*m_run) : std::vector<MetadataSeries>{};
    m_numeric = numericMetadata(m_text);
    m_x = m_run ? RunSteps::of(*m_run).x : std::vector<double>{};
    {
        const QSignalBlocker block(m_key);
        m_key->clear();
        for (const NumericMetadata& n : m_numeric)
            m_key->addItem(QString::fromStdString(n.key));
        // Loss first when there is one: the key most often looked for.
        int pick = m_key->findText(keep);
        if (pick < 0)
            pick = m_key->findText(QStringLiteral("loss"));
        m_key->setCurrentIndex(pick >= 0 ? pick : (m_numeric.empty() ? -1 : 0));
    }
    draw();
}

void MetadataChartView::setKey(const QString& key) {
    m_key->setCurrentIndex(m_key->findText(key));
}

void MetadataChartView::draw() {
    QChart* chart = m_view->chart();
    chart->removeAllSeries();
    for (QAbstractAxis* a : chart->axes()) {
        chart->removeAxis(a);
        delete a;
    }
    QStringList others;
    for (const MetadataSeries& m : m_text) {
        bool numeric = false;
        for (const NumericMetadata& n : m_numeric)
            numeric = numeric || n.key == m.key;
        if (!numeric)
            others << QString::fromStdString(m.key);
    }
    const int k = m_key->currentIndex();
    QString note = !m_run              ? tr("No run loaded.")
                   : m_numeric.empty() ? tr("No metadata key has numeric values in this run.")
                                       : QString();
    if (!others.isEmpty())
        note += (note.isEmpty() ? QString() : QStringLiteral(" ")) +
                tr("Not charted (values that are not numbers): %1.")
                    .arg(others.join(QStringLiteral(", ")));
    if (k < 0 || k >= int(m_numeric.size())) {
        chart->setTitle(QString());
        m_note->setText(note);
        return;
    }
    const NumericMetadata& n = m_numeric[size_t(k)];
    const QString key = QString::fromStdString(n.key);
    chart->setTitle(tr("%1 over the steps").arg(key));
    auto* line = new QLineSeries;
    auto* points = new QScatterSeries;
    points->setMarkerSize(7);
    double lo = 0, hi = 0;
    bool any = false;
    int nonFinite = 0;
    for (size_t c = 0; c < n.values.size(); ++c) {
        const auto& v = n.values[c];
        if (!v)
            continue;
        if (!std::isfinite(*v)) {
            ++nonFinite;
            continue;
        }
        line->append(m_x[c], *v);
        points->append(m_x[c], *v);
        lo = any ? std::min(lo, *v) : *v;
        hi = any ? std::max(hi, *v) : *v;
        any = true;
    }
    if (nonFinite > 0)
        note +=
            (note.isEmpty() ? QString() : QStringLiteral(" ")) +
            tr("%n value(s) of %1 are NaN or infinite and not drawn.", nullptr, nonFinite).arg(key);
    m_note->setText(note);
    const RunSteps steps = RunSteps::of(*m_run);
    double xLo = m_x.front(), xHi = m_x.back();
    if (xHi == xLo)
        xHi = xLo + 1;
    const double pad = hi > lo ? (hi - lo) * 0.05 : (lo != 0 ? std::fabs(lo) * 0.1 : 1);
    auto* xAxis = roundValueAxis(xLo, xHi);
    xAxis->setTitleText(steps.title);
    auto* yAxis = roundValueAxis(lo - pad, hi + pad);
    yAxis->setTitleText(key);
    chart->addAxis(xAxis, Qt::AlignBottom);
    chart->addAxis(yAxis, Qt::AlignLeft);
    for (QXYSeries* s : {static_cast<QXYSeries*>(line), static_cast<QXYSeries*>(points)}) {
        chart->addSeries(s);
        s->attachAxis(xAxis);
        s->attachAxis(yAxis);
    }
}

QString MetadataChartView::hoverText(size_t checkpoint) const {
    const int k = m_key->currentIndex();
    if (!m_run || k < 0 || k >= int(m_numeric.size()) || checkpoint >= m_x.size())
        return {};
    const std::string& key = m_numeric[size_t(k)].key;
    QString where = RunSteps::of(*m_run).describe(*m_run, checkpoint);
    for (const MetadataSeries& m : m_text)
        if (m.key == key) {
            const auto& v = m.values[checkpoint];
            return tr("%1\n%2 = %3")
                .arg(where, QString::fromStdString(key),
                     v ? QString::fromStdString(*v) : tr("(not in this checkpoint)"));
        }
    return where;
}
