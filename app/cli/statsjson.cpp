#include "statsjson.h"

namespace cli {

namespace {

nlohmann::ordered_json optionalJson(std::optional<double> v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
}

} // namespace

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
    j["min"] = optionalJson(s.min);
    j["max"] = optionalJson(s.max);
    j["mean"] = optionalJson(s.mean);
    j["std"] = optionalJson(s.std);
    j["l2"] = s.l2;
    if (detailed)
        j["finite_sum"] = s.finiteSum;
}

} // namespace cli
