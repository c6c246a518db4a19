#pragma once

#include "ckptscope/optimizer/parameterupdate.h"
#include "ckptscope/stats/tensorstats.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ckptscope {
class JsonStreamWriter;
}

namespace cli {

// Where putStatsFields writes an object's fields: a DOM (`timeline --json`)
// or a streamed text (`stats --json`, whose histograms of 50 000 tensors
// would make a DOM of millions of counts), spelled the same.
struct DomFields {
    nlohmann::ordered_json& j;
    void count(const char* key, uint64_t v) { j[key] = v; }
    void number(const char* key, double v) { j[key] = v; }
    void numberOrNull(const char* key, const std::optional<double>& v);
    void integer(const char* key, const ckptscope::StoredInteger& v);
};
struct StreamFields {
    ckptscope::JsonStreamWriter& w;
    void count(const char* key, uint64_t v) const;
    void number(const char* key, double v) const;
    void numberOrNull(const char* key, const std::optional<double>& v) const;
    void integer(const char* key, const ckptscope::StoredInteger& v) const;
};

// The statistics fields of `stats --json`, shared by `timeline --json` so a
// field means the same in both: count, finite, nan, inf, [pos_inf, neg_inf,]
// zeros, min, max, mean, std (null without a finite value), l2[, finite_sum].
// The bracketed fields only when `detailed` (stats); then integer tensors'
// min and max are JSON integers, exactly as stored.
template <class Fields>
void putStatsFields(Fields out, const ckptscope::TensorStats& s, bool detailed);

// A histogram as `stats --json` and `diff --json` write it: {"lo", "hi",
// "counts"}.
void writeHistogram(ckptscope::JsonStreamWriter& w, const ckptscope::Histogram& h);

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
