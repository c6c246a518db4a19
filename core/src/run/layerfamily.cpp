#include "ckptscope/run/layerfamily.h"

#include <algorithm>
#include <map>

namespace ckptscope {

namespace {

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

std::string withoutLeadingZeros(const std::string& s) {
    const size_t i = s.find_first_not_of('0');
    return i == std::string::npos ? std::string("0") : s.substr(i);
}

} // namespace

std::string LayerFamily::pattern() const {
    return prefix + "{N}" + suffix;
}

bool numberTextLess(const std::string& a, const std::string& b) {
    const std::string x = withoutLeadingZeros(a), y = withoutLeadingZeros(b);
    if (x.size() != y.size())
        return x.size() < y.size();
    if (x != y)
        return x < y;
    return a.size() != b.size() ? a.size() < b.size() : a < b;
}

std::vector<LayerFamily> layerFamilies(const std::vector<TensorSeries>& series) {
    // Keyed by (prefix, suffix); the value is the family's index in `out`.
    std::map<std::pair<std::string, std::string>, size_t> index;
    std::vector<LayerFamily> out;
    for (size_t s = 0; s < series.size(); ++s) {
        if (series[s].occurrence != 0)
            continue;
        const std::string& name = series[s].name;
        for (size_t i = 0; i < name.size();) {
            if (!isDigit(name[i])) {
                ++i;
                continue;
            }
            size_t j = i;
            while (j < name.size() && isDigit(name[j]))
                ++j;
            auto key = std::make_pair(name.substr(0, i), name.substr(j));
            auto [it, added] = index.emplace(key, out.size());
            if (added)
                out.push_back({std::move(key.first), std::move(key.second), {}});
            out[it->second].members.push_back({name.substr(i, j - i), s});
            i = j;
        }
    }
    std::vector<LayerFamily> kept;
    for (LayerFamily& f : out) {
        if (f.members.size() < 2)
            continue;
        std::stable_sort(f.members.begin(), f.members.end(),
                         [](const LayerFamily::Member& a, const LayerFamily::Member& b) {
                             return numberTextLess(a.number, b.number);
                         });
        kept.push_back(std::move(f));
    }
    // Families were created in first-appearance order already.
    return kept;
}

} // namespace ckptscope
