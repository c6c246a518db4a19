#include "ckptscope/run/metadatanumber.h"

#include <charconv>
#include <cmath>

namespace ckptscope {

std::optional<double> metadataNumber(const std::string& text) {
    size_t a = 0, b = text.size();
    while (a < b && (text[a] == ' ' || text[a] == '\t'))
        ++a;
    while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t'))
        --b;
    if (a == b)
        return std::nullopt;
    double v = 0;
    const auto r = std::from_chars(text.data() + a, text.data() + b, v);
    // Out of range ("1e999") is not a number we could draw honestly.
    if (r.ec != std::errc() || r.ptr != text.data() + b)
        return std::nullopt;
    return v;
}

std::vector<NumericMetadata> numericMetadata(const std::vector<MetadataSeries>& metadata) {
    std::vector<NumericMetadata> out;
    for (const MetadataSeries& m : metadata) {
        NumericMetadata n{m.key, {}};
        bool numeric = true, anyFinite = false;
        for (const auto& v : m.values) {
            if (!v) {
                n.values.emplace_back();
                continue;
            }
            const auto x = metadataNumber(*v);
            numeric = numeric && x.has_value();
            if (!numeric)
                break;
            anyFinite = anyFinite || std::isfinite(*x);
            n.values.push_back(x);
        }
        if (numeric && anyFinite)
            out.push_back(std::move(n));
    }
    return out;
}

} // namespace ckptscope
