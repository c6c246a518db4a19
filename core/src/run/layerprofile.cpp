#include "ckptscope/run/layerprofile.h"

#include "ckptscope/run/optimizeroutliers.h"

#include <algorithm>
#include <cmath>

namespace ckptscope {

const char* layerStatisticName(LayerStatistic statistic) {
    switch (statistic) {
    case LayerStatistic::L2:
        return "L2 norm";
    case LayerStatistic::Std:
        return "std";
    case LayerStatistic::MaxAbs:
        return "max |x|";
    case LayerStatistic::Mean:
        return "mean";
    case LayerStatistic::UpdateToWeight:
        return "update / weight";
    case LayerStatistic::SqrtVRms:
        return "√v RMS";
    case LayerStatistic::L2RelativeChange:
    case LayerStatistic::Count:
        break;
    }
    return "relative change of L2 norm";
}

const char* layerStatisticMeaning(LayerStatistic statistic) {
    switch (statistic) {
    case LayerStatistic::L2:
        return "L2 norm of the finite values";
    case LayerStatistic::Std:
        return "standard deviation of the finite values";
    case LayerStatistic::MaxAbs:
        return "max |x| = max(|min|, |max|) of the finite values";
    case LayerStatistic::Mean:
        return "mean of the finite values";
    case LayerStatistic::UpdateToWeight:
        return "RMS(u) / RMS(w): the last update the optimizer applied (from the state it saved) "
               "against the weights; about 1e-3 in a healthy run";
    case LayerStatistic::SqrtVRms:
        return "RMS of √exp_avg_sq, Adam's running scale of the gradients";
    case LayerStatistic::L2RelativeChange:
    case LayerStatistic::Count:
        break;
    }
    return "|L2(t) − L2(t−1)| / L2(t−1), against the previous checkpoint: the change of the "
           "norm, not of the values";
}

bool isOptimizerStatistic(LayerStatistic statistic) {
    return statistic == LayerStatistic::UpdateToWeight || statistic == LayerStatistic::SqrtVRms;
}

namespace {

std::optional<double> cell(const TensorSummary* t, const TensorSummary* previous,
                           LayerStatistic statistic) {
    if (!t)
        return std::nullopt;
    const TensorStats& s = t->stats;
    switch (statistic) {
    case LayerStatistic::L2:
        return s.l2;
    case LayerStatistic::Std:
        return s.std;
    case LayerStatistic::MaxAbs:
        if (!s.min || !s.max)
            return std::nullopt;
        return std::max(std::fabs(*s.min), std::fabs(*s.max));
    case LayerStatistic::Mean:
        return s.mean;
    case LayerStatistic::UpdateToWeight: // (optimizerCell)
    case LayerStatistic::SqrtVRms:
    case LayerStatistic::L2RelativeChange:
    case LayerStatistic::Count:
        break;
    }
    if (!previous || !(previous->stats.l2 > 0))
        return std::nullopt;
    return std::fabs(s.l2 - previous->stats.l2) / previous->stats.l2;
}

std::vector<uint64_t> nonFiniteRow(const Run& run, const TensorSeries* s, size_t n) {
    std::vector<uint64_t> row(n);
    for (size_t c = 0; s && c < n; ++c)
        if (const TensorSummary* t = s->point(run, c))
            row[c] = t->stats.nan + t->stats.posInf + t->stats.negInf;
    return row;
}

std::optional<double> optimizerCell(const ParameterUpdate* u, LayerStatistic statistic) {
    if (!u)
        return std::nullopt;
    return statistic == LayerStatistic::UpdateToWeight ? u->updateToWeight : u->expAvgSqSqrtRms;
}

} // namespace

LayerProfile layerProfile(const Run& run, const std::vector<TensorSeries>& series,
                          const LayerFamily& family, LayerStatistic statistic) {
    LayerProfile p;
    p.statistic = statistic;
    const size_t n = run.checkpoints.size();
    if (isOptimizerStatistic(statistic)) {
        const UpdatesByTensor updates = updatesByTensor(run);
        for (const LayerFamily::Member& m : family.members) {
            p.rows.push_back(m.number);
            std::vector<std::optional<double>> row(n);
            const TensorSeries* s = m.series < series.size() ? &series[m.series] : nullptr;
            for (size_t c = 0; s && s->occurrence == 0 && c < n; ++c)
                if (s->point(run, c))
                    row[c] = optimizerCell(updateOf(updates, c, s->name), statistic);
            p.values.push_back(std::move(row));
            p.nonFinite.push_back(nonFiniteRow(run, s, n));
        }
        return p;
    }
    for (const LayerFamily::Member& m : family.members) {
        p.rows.push_back(m.number);
        std::vector<std::optional<double>> row(n);
        const TensorSeries* s = m.series < series.size() ? &series[m.series] : nullptr;
        for (size_t c = 0; s && c < n; ++c)
            row[c] = cell(s->point(run, c), c > 0 ? s->point(run, c - 1) : nullptr, statistic);
        p.values.push_back(std::move(row));
        p.nonFinite.push_back(nonFiniteRow(run, s, n));
    }
    return p;
}

} // namespace ckptscope
