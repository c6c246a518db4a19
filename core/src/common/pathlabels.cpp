#include "ckptscope/common/pathlabels.h"

#include <algorithm>
#include <vector>

namespace ckptscope {

namespace {

bool separator(char c) {
#ifdef _WIN32
    return c == '/' || c == '\\';
#else
    return c == '/';
#endif
}

// Where each trailing part begins: the name, then one more directory each.
std::vector<size_t> suffixStarts(const std::string& path) {
    std::vector<size_t> starts;
    size_t end = path.size();
    while (end > 0 && separator(path[end - 1]))
        --end; // "dir/" names dir
    for (size_t i = end; i > 0; --i)
        if (separator(path[i - 1]) && i < end && !separator(path[i]))
            starts.push_back(i);
    starts.push_back(0);
    return starts;
}

} // namespace

std::pair<std::string, std::string> distinguishingPaths(const std::string& a,
                                                        const std::string& b) {
    const std::vector<size_t> sa = suffixStarts(a), sb = suffixStarts(b);
    for (size_t k = 0; k < std::max(sa.size(), sb.size()); ++k) {
        const size_t ia = sa[std::min(k, sa.size() - 1)], ib = sb[std::min(k, sb.size() - 1)];
        std::string x = a.substr(ia), y = b.substr(ib);
        if (x != y)
            return {std::move(x), std::move(y)};
    }
    return {a, b};
}

} // namespace ckptscope
