#include "run/metadatachartview.h"

#include "chart/axisticks.h"
#include "chart/charthover.h"
#include "chart/linethinning.h"
#include "run/runsteps.h"

#include "ckptscope/common/numberformat.h"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QColor>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <cmath>
#include <map>
#include <set>

using namespace ckptscope;

namespace {

// "checkpoint-300/trainer_state.json": which of the run's states it is.
QString historySource(const std::string& path) {
    const QFileInfo file(QString::fromStdString(path));
    return file.dir().dirName() + QLatin1Char('/') + file.fileName();
}

} // namespace

MetadataChartView::MetadataChartView(QWidget* parent)
    : QWidget(parent), m_key(new QComboBox), m_note(new QLabel),
      m_view(new QChartView(new QChart)) {
    m_note->setWordWrap(true);
    m_note->setTextFormat(Qt::PlainText);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->chart()->legend()->hide();
    new ChartHover(
        m_view, [this]() -> const std::vector<double>& { return m_hoverX; },
        [this](size_t i) { return hoverAt(i); });
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
        // Keys the Trainer logged between checkpoints only (eval_loss at
        // its own steps…), charted from the history alone.
        if (m_run)
            for (const auto& [key, values] : m_run->trainerHistory)
                if (m_key->findText(QString::fromStdString(key)) < 0)
                    m_key->addItem(QString::fromStdString(key));
        // Loss first when there is one: the key most often looked for.
        int pick = m_key->findText(keep);
        if (pick < 0)
            pick = m_key->findText(QStringLiteral("loss"));
        m_key->setCurrentIndex(pick >= 0 ? pick : (m_key->count() > 0 ? 0 : -1));
    }
    draw();
}

void MetadataChartView::setKey(const QString& key) {
    m_key->setCurrentIndex(m_key->findText(key));
}

// What the note says before a key is drawn: no run, no numeric key, and the
// keys left out for holding values that are not numbers.
QString MetadataChartView::startNote() const {
    QStringList others;
    for (const MetadataSeries& m : m_text) {
        bool numeric = false;
        for (const NumericMetadata& n : m_numeric)
            numeric = numeric || n.key == m.key;
        // (a key the Trainer logged is charted from its log)
        if (!numeric && !(m_run && m_run->trainerHistory.count(m.key)))
            others << QString::fromStdString(m.key);
    }
    QString note = !m_run                ? tr("No run loaded.")
                   : m_key->count() == 0 ? tr("No metadata key has numeric values in this run.")
                                         : QString();
    if (!others.isEmpty())
        note += (note.isEmpty() ? QString() : QStringLiteral(" ")) +
                tr("Not charted (values that are not numbers): %1.")
                    .arg(others.join(QStringLiteral(", ")));
    return note;
}

// The hover stops at each checkpoint placed and at every other logged step,
// with the first value logged there.
void MetadataChartView::setHoverStops(const std::vector<std::optional<double>>& cx,
                                      const QList<QPointF>& all) {
    std::map<double, double> firstLogged;
    for (const QPointF& p : std::as_const(all))
        firstLogged.try_emplace(p.x(), p.y());
    struct Stop {
        double x;
        int checkpoint;
        std::optional<double> logged;
    };
    std::vector<Stop> stops;
    for (size_t c = 0; c < m_x.size(); ++c)
        if (cx[c]) {
            const auto f = firstLogged.find(*cx[c]);
            stops.push_back(
                {*cx[c], int(c), f == firstLogged.end() ? std::nullopt : std::optional(f->second)});
        }
    std::set<double> placed;
    for (const auto& x : cx)
        if (x)
            placed.insert(*x);
    for (const auto& [x, v] : firstLogged)
        if (!placed.count(x))
            stops.push_back({x, -1, v});
    std::stable_sort(stops.begin(), stops.end(),
                     [](const Stop& a, const Stop& b) { return a.x < b.x; });
    m_hoverX.clear();
    m_hoverCheckpoint.clear();
    m_hoverLogged.clear();
    for (const Stop& stop : stops) {
        m_hoverX.push_back(stop.x);
        m_hoverCheckpoint.push_back(stop.checkpoint);
        m_hoverLogged.push_back(stop.logged);
    }
}

// The series on axes that span [xLo, xHi] and the values with a margin.
void MetadataChartView::addAxes(QLineSeries* line, QScatterSeries* points, Span span,
                                const QString& xTitle, const QString& key) {
    QChart* chart = m_view->chart();
    auto [xLo, xHi, lo, hi] = span;
    if (!(xLo <= xHi)) { // nothing placed
        xLo = 0;
        xHi = 1;
    }
    if (xHi == xLo)
        xHi = xLo + 1;
    const double pad = hi > lo ? (hi - lo) * 0.05 : (lo != 0 ? std::fabs(lo) * 0.1 : 1);
    auto* xAxis = roundValueAxis(xLo, xHi);
    xAxis->setTitleText(xTitle);
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

// Before a key is drawn, the hover stops at each checkpoint.
void MetadataChartView::resetHoverStops() {
    m_hoverX = m_x;
    m_hoverCheckpoint.resize(m_x.size());
    for (size_t c = 0; c < m_x.size(); ++c)
        m_hoverCheckpoint[c] = int(c);
    m_hoverLogged.assign(m_x.size(), std::nullopt);
}

// Each checkpoint's place on the x axis: its run position, or, on the
// Trainer history's axis of steps, its step (none without one: `unplaced`
// counts them).
std::vector<std::optional<double>> MetadataChartView::checkpointsOnAxis(bool history,
                                                                        int& unplaced) const {
    std::vector<std::optional<double>> cx(m_x.size());
    unplaced = 0;
    for (size_t c = 0; c < m_x.size(); ++c) {
        const auto& step = m_run->checkpoints[c].step;
        if (!history)
            cx[c] = m_x[c];
        else if (step)
            cx[c] = double(*step);
        else
            ++unplaced;
    }
    return cx;
}

// What the line of a history is: the key as logged at how many steps, from
// which file, and the checkpoints left off the axis.
QString MetadataChartView::historyNote(const QString& key,
                                       const std::vector<std::pair<uint64_t, double>>& logged,
                                       int unplaced) const {
    // Distinct steps (a key may be logged twice at one step), NaN/Inf
    // included: they were logged, only not drawn.
    std::set<uint64_t> steps;
    for (const auto& e : logged)
        steps.insert(e.first);
    const size_t loggedSteps = steps.size();
    QString note = tr("The line: %1 as logged at %2 (%3); the dots: the checkpoints.")
                       .arg(key, QString::fromStdString(fmt::counted(loggedSteps, "step", "steps")),
                            historySource(m_run->trainerHistoryFile));
    if (unplaced > 0)
        note +=
            QStringLiteral(" ") +
            tr("Not on this axis of steps: %1 without a step.")
                .arg(QString::fromStdString(fmt::counted(unplaced, "checkpoint", "checkpoints")));
    return note;
}

void MetadataChartView::draw() {
    QChart* chart = m_view->chart();
    chart->removeAllSeries();
    for (QAbstractAxis* a : chart->axes()) {
        chart->removeAxis(a);
        delete a;
    }
    resetHoverStops();
    const int k = m_key->currentIndex();
    QString note = startNote();
    if (k < 0 || m_x.empty()) {
        chart->setTitle(QString());
        m_note->setText(note);
        return;
    }
    const QString key = m_key->itemText(k);
    const std::string keyName = key.toStdString();
    const NumericMetadata* n = nullptr;
    for (const NumericMetadata& m : m_numeric)
        n = m.key == keyName ? &m : n;
    const RunSteps steps = RunSteps::of(*m_run);
    // The Trainer's history goes on an axis of steps; there a checkpoint
    // without a step (a final model beside the checkpoint folders) has no
    // place and is left out, said so.
    const auto logged = m_run->trainerHistory.find(keyName);
    const bool history = logged != m_run->trainerHistory.end();
    int unplaced = 0;
    const std::vector<std::optional<double>> cx = checkpointsOnAxis(history, unplaced);
    chart->setTitle(tr("%1 over the steps").arg(key));
    auto* line = new QLineSeries;
    auto* points = new QScatterSeries;
    points->setMarkerSize(7);
    // The axis spans every checkpoint placed, and the history where it goes
    // further.
    double lo = 0, hi = 0, xLo = INFINITY, xHi = -INFINITY;
    for (const auto& x : cx)
        if (x) {
            xLo = std::min(xLo, *x);
            xHi = std::max(xHi, *x);
        }
    bool any = false;
    int nonFinite = 0;
    const auto take = [&](double x, double v) {
        lo = any ? std::min(lo, v) : v;
        hi = any ? std::max(hi, v) : v;
        xLo = std::min(xLo, x);
        xHi = std::max(xHi, x);
        any = true;
    };
    for (size_t c = 0; n && c < n->values.size(); ++c) {
        const auto& v = n->values[c];
        if (!v || !cx[c])
            continue;
        if (!std::isfinite(*v)) {
            nonFinite += !history;
            continue;
        }
        if (!history)
            line->append(*cx[c], *v);
        points->append(*cx[c], *v);
        take(*cx[c], *v);
    }
    if (history) {
        QList<QPointF> all;
        all.reserve(qsizetype(logged->second.size()));
        for (const auto& [step, v] : logged->second) {
            if (!std::isfinite(v)) {
                ++nonFinite;
                continue;
            }
            all.append({double(step), v});
            take(double(step), v);
        }
        std::stable_sort(all.begin(), all.end(),
                         [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
        line->replace(thinLine(all));
        setHoverStops(cx, all);
        // Dots that stand out on a dense line.
        points->setColor(QColor(0xd9, 0x48, 0x0f));
        points->setBorderColor(Qt::white);
        points->setMarkerSize(9);
        note += (note.isEmpty() ? QString() : QStringLiteral(" ")) +
                historyNote(key, logged->second, unplaced);
    }
    if (nonFinite > 0)
        note +=
            (note.isEmpty() ? QString() : QStringLiteral(" ")) +
            tr("%n value(s) of %1 are NaN or infinite and not drawn.", nullptr, nonFinite).arg(key);
    m_note->setText(note);
    addAxes(line, points, {xLo, xHi, lo, hi}, history ? tr("step") : steps.title, key);
}

QString MetadataChartView::hoverText(size_t checkpoint) const {
    if (!m_run || m_key->currentIndex() < 0 || checkpoint >= m_x.size())
        return {};
    const std::string key = m_key->currentText().toStdString();
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

QString MetadataChartView::hoverAt(size_t i) const {
    if (!m_run || i >= m_hoverX.size())
        return {};
    const QString key = m_key->currentText();
    const int c = m_hoverCheckpoint[i];
    const std::optional<double>& logged = m_hoverLogged[i];
    const auto loggedText = [&] {
        return tr("%1 = %2 (logged)").arg(key, QString::fromStdString(fmt::exact(*logged)));
    };
    if (c < 0)
        return tr("step %1 (no checkpoint)")
                   .arg(QString::fromStdString(fmt::grouped(uint64_t(m_hoverX[i])))) +
               QLatin1Char('\n') + loggedText();
    // A key the checkpoint lacks but the Trainer logged at its step.
    const auto showsLogged = [&](size_t j) {
        const int cj = m_hoverCheckpoint[j];
        if (cj < 0 || !m_hoverLogged[j])
            return false;
        for (const MetadataSeries& m : m_text)
            if (m.key == key.toStdString() && m.values[size_t(cj)])
                return false;
        return true;
    };
    if (showsLogged(i)) {
        QString text = RunSteps::of(*m_run).describe(*m_run, size_t(c));
        // Checkpoints sharing a step share its logged value: the hover joins
        // them, and only the last says it.
        if (i + 1 < m_hoverX.size() && m_hoverX[i + 1] == m_hoverX[i] && showsLogged(i + 1))
            return text;
        return text + QLatin1Char('\n') + loggedText();
    }
    return hoverText(size_t(c));
}
