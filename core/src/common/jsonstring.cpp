#include "ckptscope/common/jsonstring.h"

#include "ckptscope/common/printable.h"

#include <cstdint>
#include <cstring>

namespace ckptscope {

void appendJsonString(std::string& out, std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    size_t i = 0; // printable ASCII needs no escape: most names and keys, copied at once
    while (i < s.size() && uint8_t(s[i]) >= 0x20 && uint8_t(s[i]) < 0x80 && s[i] != '"' &&
           s[i] != '\\')
        ++i;
    if (i == s.size()) {
        const size_t at = out.size();
        out.resize(at + s.size() + 2);
        char* p = out.data() + at;
        p[0] = '"';
        if (!s.empty()) // data() may be null
            std::memcpy(p + 1, s.data(), s.size());
        p[s.size() + 1] = '"';
        return;
    }
    out += '"';
    size_t run = 0; // start of the pending unescaped run
    for (; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\')
            continue;
        if (c >= 0x80) {
            if (const size_t len = utf8Length(s, i)) {
                i += len - 1;
                continue;
            }
            out.append(s.data() + run, i - run);
            run = i + 1;
            out += "\xEF\xBF\xBD"; // U+FFFD for each byte that is not UTF-8
            continue;
        }
        out.append(s.data() + run, i - run);
        run = i + 1;
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            out += "\\u00";
            out += kHex[c >> 4];
            out += kHex[c & 0xf];
        }
    }
    out.append(s.data() + run, s.size() - run);
    out += '"';
}

} // namespace ckptscope
