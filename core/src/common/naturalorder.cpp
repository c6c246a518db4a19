#include "ckptscope/common/naturalorder.h"

namespace ckptscope {

namespace {

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}
char lower(char c) {
    return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
}

// The digit run at `i` without its leading zeros; `i` moves past the run.
std::string_view digitRun(std::string_view s, size_t& i) {
    while (i < s.size() && s[i] == '0')
        ++i;
    const size_t from = i;
    while (i < s.size() && isDigit(s[i]))
        ++i;
    return s.substr(from, i - from);
}

} // namespace

bool naturalLess(std::string_view a, std::string_view b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (isDigit(a[i]) && isDigit(b[j])) {
            const std::string_view x = digitRun(a, i), y = digitRun(b, j);
            if (x.size() != y.size())
                return x.size() < y.size();
            if (x != y)
                return x < y;
            continue;
        }
        const char la = lower(a[i]), lb = lower(b[j]);
        if (la != lb)
            return static_cast<unsigned char>(la) < static_cast<unsigned char>(lb);
        ++i;
        ++j;
    }
    if (a.size() - i != b.size() - j)
        return a.size() - i < b.size() - j;
    return a < b;
}

} // namespace ckptscope
