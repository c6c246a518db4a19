#pragma once

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

} // namespace cli
