#include "run/runoverview.h"

#include "common/documentsummary.h"
#include "common/plaintext.h"
#include "common/sizeformat.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/run/optimizeroutliers.h"

#include <QFile>
#include <QHeaderView>
#include <QTableWidget>
#include <QVBoxLayout>

using namespace ckptscope;

namespace {

// Figures as the CLI prints them (fmt::display: 7 significant digits;
// fmt::exact: a logged value whole).
QString display(double v) {
    return QString::fromStdString(fmt::display(v));
}
QString exactText(double v) {
    return QString::fromStdString(fmt::exact(v));
}

QString lines(const std::vector<std::string>& texts) {
    QStringList out;
    for (const std::string& t : texts)
        out << QString::fromStdString(t);
    return out.join(QLatin1Char('\n'));
}

} // namespace

RunOverview::RunOverview(QWidget* parent) : QWidget(parent), m_table(new QTableWidget(0, 2)) {
    m_table->setHorizontalHeaderLabels({tr("Property"), tr("Value")});
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_table);
    setRun(nullptr);
}

void RunOverview::addRow(const QString& label, const QString& value, const QString& tip) {
    const int row = m_table->rowCount();
    m_table->insertRow(row);
    auto* key = new QTableWidgetItem(label);
    auto* text = new QTableWidgetItem(value); // plain text: names come from files
    text->setToolTip(tip.isEmpty() ? value : tip);
    m_table->setItem(row, 0, key);
    m_table->setItem(row, 1, text);
}

void RunOverview::setRun(std::shared_ptr<const Run> run,
                         std::shared_ptr<const std::vector<TensorSeries>> series) {
    m_table->setRowCount(0);
    if (!run) {
        addRow(tr("Run"), tr("No run loaded."));
        return;
    }
    addRow(tr("Checkpoints"),
           countNoun(run->checkpoints.size(), tr("checkpoint"), tr("checkpoints")));
    std::optional<uint64_t> first, last;
    for (const RunCheckpoint& c : run->checkpoints)
        if (c.step) {
            first = first ? std::min(*first, *c.step) : *c.step;
            last = last ? std::max(*last, *c.step) : *c.step;
        }
    if (first)
        addRow(tr("Steps"), *first == *last
                                ? groupedNumber(*first)
                                : tr("%1 – %2").arg(groupedNumber(*first), groupedNumber(*last)));
    if (series && run->kind == RunKind::Tensors)
        addFindings(*run, *series);
    addTrainerLog(*run);
    QStringList skipped;
    for (const SkippedPath& s : run->skipped)
        skipped << QString::fromStdString(s.path + ": " + s.reason);
    addRow(tr("Skipped"), QString::number(skipped.size()), skipped.join(QLatin1Char('\n')));
    if (!run->warnings.empty())
        addRow(tr("Warnings"), lines(run->warnings));
    if (run->modelConfig) {
        const ModelConfig& config = *run->modelConfig;
        addRow(tr("Model config"), QFile::decodeName(config.path.c_str()));
        for (const auto& [key, value] : config.rows())
            addRow(QString::fromStdString(key), QString::fromStdString(value));
    }
    m_table->resizeColumnToContents(0);
    m_table->resizeRowsToContents();
}

// The first checkpoint with NaN/Inf and the largest L2 growths, as
// `timeline` lists them.
void RunOverview::addFindings(const Run& run, const std::vector<TensorSeries>& series) {
    const auto stepText = [](const std::optional<uint64_t>& step) {
        return step ? groupedNumber(*step) : QStringLiteral("–");
    };
    if (const auto first = firstNonfinite(run, series)) {
        QStringList names;
        for (size_t i = 0; i < first->tensors.size() && i < kNonfiniteNamed; ++i)
            names << shownText(first->tensors[i]);
        if (first->tensors.size() > kNonfiniteNamed)
            names << tr("and %1 more").arg(groupedNumber(first->tensors.size() - kNonfiniteNamed));
        addRow(tr("First NaN/Inf"),
               tr("step %1 (%2), in %3: %4")
                   .arg(stepText(first->step), shownText(run.checkpoints[first->index].name),
                        countNoun(first->tensors.size(), tr("tensor"), tr("tensors")),
                        names.join(QStringLiteral(", "))));
    } else {
        addRow(tr("First NaN/Inf"), tr("none in any checkpoint"));
    }
    QStringList growth;
    for (const L2Change& g : largestL2Growth(run, series, kL2GrowthListed))
        growth << tr("%1: ×%2 (L2 %3 → %4, steps %5 → %6)")
                      .arg(shownText(series[g.series].name), display(g.ratio), display(g.first),
                           display(g.last), stepText(run.checkpoints[g.firstIndex].step),
                           stepText(run.checkpoints[g.lastIndex].step));
    addRow(tr("L2 norm grew most"),
           growth.isEmpty() ? tr("no tensor's L2 norm grew between its first and last checkpoint")
                            : growth.join(QLatin1Char('\n')));
    if (!runHasUpdates(run))
        return;
    // The parameters whose optimizer figures stand out, as `timeline` names
    // them; a parameter flagged at several checkpoints is one line (a frozen
    // layer is an outlier at every step).
    std::vector<std::vector<const OptimizerOutlier*>> groups;
    const std::vector<OptimizerOutlier> all = optimizerOutliers(run);
    for (const OptimizerOutlier& o : all) {
        auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& group) {
            return group[0]->name == o.name && group[0]->kind == o.kind;
        });
        if (g == groups.end())
            groups.push_back({&o});
        else
            g->push_back(&o);
    }
    QStringList outliers;
    for (const auto& group : groups) {
        const OptimizerOutlier& o = *group.back(); // the latest
        const QString factor = QString::fromStdString(outlierFactorText(o.factor));
        if (o.kind == OptimizerOutlier::Kind::SecondMomentGrowth) {
            outliers << tr("%1: mean exp_avg_sq %2 at step %3 (√v RMS %4 → %5)")
                            .arg(shownText(o.name), factor, stepText(o.step), display(o.reference),
                                 display(o.value));
            continue;
        }
        const QString where = group.size() == 1
                                  ? tr("at step %1").arg(stepText(o.step))
                                  : tr("at %1 checkpoints, steps %2 – %3")
                                        .arg(group.size())
                                        .arg(stepText(group.front()->step), stepText(o.step));
        outliers << tr("%1: update / weight %2 the checkpoint's median (%3); last %4 against %5")
                        .arg(shownText(o.name), factor, where, display(o.value),
                             display(o.reference));
    }
    addRow(tr("Optimizer outliers"),
           outliers.isEmpty()
               ? tr("none: no update / weight %1× off its checkpoint's median, no second moment "
                    "grown %2× between checkpoints")
                     .arg(display(kOutlierFactor), display(kSecondMomentGrowth))
               : outliers.join(QLatin1Char('\n')));
}

// A row per key the Trainer logged: how often, the last, the lowest and
// the highest value, each at its step.
void RunOverview::addTrainerLog(const Run& run) {
    const auto at = [](const LoggedSummary::Entry& e) {
        return tr("%1 at %2").arg(exactText(e.second), groupedNumber(e.first));
    };
    for (const auto& [key, logged] : run.trainerHistory) {
        const LoggedSummary l = summarizeLogged(logged);
        QStringList parts{countNoun(l.logged, tr("time"), tr("times"))};
        if (l.last)
            parts << tr("last %1").arg(at(*l.last));
        if (l.lowest)
            parts << tr("lowest %1").arg(at(*l.lowest)) << tr("highest %1").arg(at(*l.highest));
        if (l.nonFinite)
            parts << tr("%1 NaN/Inf").arg(groupedNumber(l.nonFinite));
        addRow(tr("Logged: %1").arg(shownText(key)), parts.join(QStringLiteral("; ")));
    }
}

QString RunOverview::valueOf(const QString& label) const {
    for (int r = 0; r < m_table->rowCount(); ++r)
        if (m_table->item(r, 0)->text() == label)
            return m_table->item(r, 1)->text();
    return {};
}
