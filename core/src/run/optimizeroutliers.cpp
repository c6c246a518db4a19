#include "ckptscope/run/optimizeroutliers.h"

#include "ckptscope/common/numberformat.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace ckptscope {

namespace {

const std::string& nameOf(const ParameterUpdate& u) {
    return u.tensor.empty() ? u.parameter : u.tensor;
}

bool usable(const std::optional<double>& v) {
    return v && std::isfinite(*v) && *v > 0;
}

} // namespace

UpdatesByTensor updatesByTensor(const Run& run) {
    UpdatesByTensor out(run.checkpoints.size());
    for (size_t c = 0; c < run.checkpoints.size(); ++c)
        for (const ParameterUpdate& u : run.checkpoints[c].summary.updates)
            out[c].emplace(nameOf(u), &u);
    return out;
}

const ParameterUpdate* updateOf(const UpdatesByTensor& updates, size_t c,
                                const std::string& tensor) {
    if (c >= updates.size())
        return nullptr;
    const auto it = updates[c].find(tensor);
    return it == updates[c].end() ? nullptr : it->second;
}

bool runHasUpdates(const Run& run) {
    return std::any_of(run.checkpoints.begin(), run.checkpoints.end(),
                       [](const RunCheckpoint& c) { return !c.summary.updates.empty(); });
}

std::string outlierFactorText(double factor) {
    return factor >= 1 || !(factor > 0) ? "×" + fmt::display(factor)
                                        : "÷" + fmt::display(1 / factor);
}

const char* outlierKindName(OptimizerOutlier::Kind kind) {
    return kind == OptimizerOutlier::Kind::UpdateToWeight ? "update_to_weight"
                                                          : "second_moment_growth";
}

std::optional<double> medianUpdateToWeight(const RunCheckpoint& checkpoint) {
    std::vector<double> ratios;
    for (const ParameterUpdate& u : checkpoint.summary.updates)
        if (usable(u.updateToWeight))
            ratios.push_back(*u.updateToWeight);
    if (ratios.empty())
        return std::nullopt;
    const size_t mid = ratios.size() / 2;
    std::nth_element(ratios.begin(), ratios.begin() + long(mid), ratios.end());
    if (ratios.size() % 2)
        return ratios[mid];
    const double upper = ratios[mid];
    return (*std::max_element(ratios.begin(), ratios.begin() + long(mid)) + upper) / 2;
}

std::vector<OptimizerOutlier> optimizerOutliers(const Run& run) {
    std::vector<OptimizerOutlier> out;
    // Per parameter: the last checkpoint's √v RMS, and whether its growth
    // was already reported.
    std::map<std::string, std::pair<double, bool>> lastSqrtV;
    for (size_t c = 0; c < run.checkpoints.size(); ++c) {
        const RunCheckpoint& cp = run.checkpoints[c];
        const std::optional<double> median = medianUpdateToWeight(cp);
        for (const ParameterUpdate& u : cp.summary.updates) {
            if (median && usable(u.updateToWeight)) {
                const double factor = *u.updateToWeight / *median;
                if (factor >= kOutlierFactor || factor <= 1 / kOutlierFactor)
                    out.push_back({OptimizerOutlier::Kind::UpdateToWeight, nameOf(u), c, cp.step,
                                   *u.updateToWeight, *median, factor});
            }
            if (!usable(u.expAvgSqSqrtRms))
                continue;
            auto [it, fresh] = lastSqrtV.try_emplace(nameOf(u), *u.expAvgSqSqrtRms, false);
            if (fresh)
                continue;
            const double before = it->second.first, now = *u.expAvgSqSqrtRms;
            const double growth = (now / before) * (now / before); // of the mean of v
            if (!it->second.second && growth > kSecondMomentGrowth) {
                out.push_back({OptimizerOutlier::Kind::SecondMomentGrowth, nameOf(u), c, cp.step,
                               now, before, growth});
                it->second.second = true;
            }
            it->second.first = now;
        }
    }
    return out;
}

} // namespace ckptscope
