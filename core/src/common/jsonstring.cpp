#include "ckptscope/common/jsonstring.h"

#include <cstdint>

namespace ckptscope {

namespace {

// The length of the UTF-8 sequence starting at s[i] (a byte >= 0x80), 0 when
// it is not one: a bad lead or continuation byte, a cut-off sequence, an
// overlong form, a surrogate or a code point past U+10FFFF.
size_t utf8SequenceAt(std::string_view s, size_t i) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const unsigned char c = p[i];
    const size_t len = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || s.size() - i < len)
        return 0;
    uint32_t cp = c & (0x7f >> len);
    for (size_t k = 1; k < len; ++k) {
        if ((p[i + k] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i + k] & 0x3f);
    }
    const uint32_t least = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    return cp >= least && !(cp >= 0xd800 && cp <= 0xdfff) && cp <= 0x10ffff ? len : 0;
}

} // namespace

void appendJsonString(std::string& out, std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    size_t run = 0; // start of the pending unescaped run
    for (size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\')
            continue;
        if (c >= 0x80) {
            if (const size_t len = utf8SequenceAt(s, i)) {
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
