#include "statsjson.h"

#include "clijson.h"

namespace cli {

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
    j["min"] = orNull(s.min);
    j["max"] = orNull(s.max);
    j["mean"] = orNull(s.mean);
    j["std"] = orNull(s.std);
    j["l2"] = s.l2;
    if (detailed)
        j["finite_sum"] = s.finiteSum;
}

} // namespace cli
