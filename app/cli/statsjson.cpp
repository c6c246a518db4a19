#include "statsjson.h"

#include "clijson.h"

#include "ckptscope/common/jsonstreamwriter.h"

#include <cmath>

namespace cli {

namespace {

// A negative integer as stored: two's complement, down to -2^63.
int64_t negativeValue(const ckptscope::StoredInteger& v) {
    return int64_t(uint64_t(0) - v.magnitude);
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

void DomFields::numberOrNull(const char* key, const std::optional<double>& v) {
    j[key] = orNull(v);
}

void DomFields::integer(const char* key, const ckptscope::StoredInteger& v) {
    if (v.negative)
        j[key] = negativeValue(v);
    else
        j[key] = v.magnitude;
}

void StreamFields::count(const char* key, uint64_t v) const {
    w.key(key);
    w.value(v);
}

void StreamFields::number(const char* key, double v) const {
    w.key(key);
    w.dumpNumber(v);
}

void StreamFields::numberOrNull(const char* key, const std::optional<double>& v) const {
    w.key(key);
    if (v)
        w.dumpNumber(*v);
    else
        w.null();
}

void StreamFields::integer(const char* key, const ckptscope::StoredInteger& v) const {
    w.key(key);
    if (v.negative)
        w.value(negativeValue(v));
    else
        w.value(v.magnitude);
}

void writeHistogram(ckptscope::JsonStreamWriter& w, const ckptscope::Histogram& h) {
    w.beginObject();
    w.key("lo");
    w.dumpNumber(h.lo);
    w.key("hi");
    w.dumpNumber(h.hi);
    w.key("counts");
    w.uintArray(h.counts);
    w.endObject();
}

template <class Fields>
void putStatsFields(Fields out, const ckptscope::TensorStats& s, bool detailed) {
    out.count("count", s.count);
    out.count("finite", s.finite);
    out.count("nan", s.nan);
    out.count("inf", s.posInf + s.negInf);
    if (detailed) {
        out.count("pos_inf", s.posInf);
        out.count("neg_inf", s.negInf);
    }
    out.count("zeros", s.zeros);
    // min or max: the stored integer when there is one (stats), else the
    // double. Run summaries (timeline) keep doubles in their cache: exact
    // integers only here, so a field reads the same from a fresh or a
    // cached summary.
    if (detailed && s.intMin)
        out.integer("min", *s.intMin);
    else
        out.numberOrNull("min", s.min);
    if (detailed && s.intMax)
        out.integer("max", *s.intMax);
    else
        out.numberOrNull("max", s.max);
    out.numberOrNull("mean", s.mean);
    out.numberOrNull("std", s.std);
    out.number("l2", s.l2);
    if (detailed)
        out.number("finite_sum", s.finiteSum);
}

template void putStatsFields(DomFields, const ckptscope::TensorStats&, bool);
template void putStatsFields(StreamFields, const ckptscope::TensorStats&, bool);

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
