#include "statsjson.h"

#include "clijson.h"

#include <cmath>

namespace cli {

namespace {

// An integer as stored, as a JSON integer (int64 or uint64).
nlohmann::ordered_json storedInteger(const ckptscope::StoredInteger& v) {
    if (v.negative)
        return int64_t(uint64_t(0) - v.magnitude); // two's complement: down to -2^63
    return v.magnitude;
}

// min or max: the stored integer when there is one, else the double.
nlohmann::ordered_json extreme(const std::optional<ckptscope::StoredInteger>& exact,
                               const std::optional<double>& v) {
    return exact ? storedInteger(*exact) : orNull(v);
}

// A figure that may be NaN or infinite (NaN moments give a NaN update):
// those as text, never a silent null.
nlohmann::ordered_json figureJson(const std::optional<double>& v) {
    if (!v)
        return nullptr;
    if (std::isnan(*v))
        return "nan";
    if (std::isinf(*v))
        return *v > 0 ? "inf" : "-inf";
    return *v;
}

} // namespace

std::vector<std::string> overflowedFields(const ckptscope::TensorStats& s, bool detailed) {
    std::vector<std::string> fields;
    if (s.finite == 0)
        return fields;
    const auto check = [&fields](const char* name, double v) {
        if (!std::isfinite(v))
            fields.push_back(std::string(name) + ": overflows double");
    };
    check("mean", *s.mean);
    check("std", *s.std);
    check("l2", s.l2);
    if (detailed)
        check("finite_sum", s.finiteSum);
    return fields;
}

void putStatsFields(nlohmann::ordered_json& j, const ckptscope::TensorStats& s, bool detailed) {
    j["count"] = s.count;
    j["finite"] = s.finite;
    j["nan"] = s.nan;
    j["inf"] = s.posInf + s.negInf;
    if (detailed) {
        j["pos_inf"] = s.posInf;
        j["neg_inf"] = s.negInf;
    }
    j["zeros"] = s.zeros;
    // Run summaries (timeline) keep doubles in their cache: exact integers
    // only here, so a field reads the same from a fresh or a cached summary.
    j["min"] = detailed ? extreme(s.intMin, s.min) : orNull(s.min);
    j["max"] = detailed ? extreme(s.intMax, s.max) : orNull(s.max);
    j["mean"] = orNull(s.mean);
    j["std"] = orNull(s.std);
    j["l2"] = s.l2;
    if (detailed)
        j["finite_sum"] = s.finiteSum;
}

nlohmann::ordered_json parameterUpdateJson(const ckptscope::ParameterUpdate& u) {
    nlohmann::ordered_json j;
    j["parameter"] = u.parameter;
    j["rule"] = ckptscope::updateRuleName(u.rule);
    j["lr"] = figureJson(u.lr);
    j["step"] = figureJson(u.step);
    j["elements"] = u.count;
    j["update_rms"] = figureJson(u.updateRms);
    j["update_max"] = figureJson(u.updateMax);
    j["update_to_weight"] = figureJson(u.updateToWeight);
    j["weight_rms"] = figureJson(u.weightRms);
    j["exp_avg_rms"] = figureJson(u.expAvgRms);
    j["exp_avg_sq_sqrt_rms"] = figureJson(u.expAvgSqSqrtRms);
    j["decay_rms"] = figureJson(u.decayRms);
    j["note"] = u.note;
    return j;
}

} // namespace cli
