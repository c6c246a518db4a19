#include "ckptscope/common/jsonstring.h"

#include "ckptscope/common/printable.h"

#include <cstdint>
#include <cstring>

namespace ckptscope {

namespace {

// At a byte that starts no valid character: how many bytes one U+FFFD
// stands for. A lead byte and the continuations that could still have
// completed it (a sequence cut short) are one; any other byte is one by
// itself. nlohmann's dump(replace) decides the same way (Hoehrmann's DFA),
// so a name reads the same in every --json output, streamed or dumped.
size_t cutSequenceLength(std::string_view s, size_t i) {
    const auto lead = static_cast<unsigned char>(s[i]);
    if (lead < 0xC2 || lead > 0xF4)
        return 1;
    const size_t need = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    // The second byte's range narrows for E0, ED, F0 and F4 (no overlong
    // forms, no surrogates, nothing past U+10FFFF).
    const unsigned lo = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
    const unsigned hi = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
    size_t k = 1;
    while (k < need && i + k < s.size()) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF))
            break;
        ++k;
    }
    return k;
}

} // namespace

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
            const size_t cut = cutSequenceLength(s, i);
            run = i + cut;
            i += cut - 1;
            out += "\xEF\xBF\xBD"; // U+FFFD
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
