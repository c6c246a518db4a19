#pragma once

#include "ckptscope/optimizer/parameterupdate.h"
#include "ckptscope/stats/tensorstats.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cli {

// The statistics fields of `stats --json`, shared by `timeline --json` so a
// field means the same in both: count, finite, nan, inf, [pos_inf, neg_inf,]
// zeros, min, max, mean, std (null without a finite value), l2[, finite_sum].
// The bracketed fields only when `detailed` (stats); then integer tensors'
// min and max are JSON integers, exactly as stored.
void putStatsFields(nlohmann::ordered_json& j, const ckptscope::TensorStats& s, bool detailed);

// "l2: overflows double" for each of those fields whose value passes the
// double range (written as null): never a silent null.
std::vector<std::string> overflowedFields(const ckptscope::TensorStats& s, bool detailed);

// The `optimizer` object of `stats --optimizer` and `timeline --json`:
// parameter, rule, lr, step, elements, update_rms, update_max,
// update_to_weight, weight_rms, exp_avg_rms, exp_avg_sq_sqrt_rms,
// decay_rms (null when unknown; NaN and ±Inf as "nan", "inf", "-inf") and
// note ("" when every figure is there).
nlohmann::ordered_json parameterUpdateJson(const ckptscope::ParameterUpdate& u);

} // namespace cli
