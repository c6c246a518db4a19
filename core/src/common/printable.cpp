#include "ckptscope/common/printable.h"

#include <cstdio>

namespace ckptscope {

namespace {

// Shown as \u{XXXX}: they draw nothing, or reorder or break the line.
bool hidden(uint32_t cp) {
    return cp <= 0x9F                        // C1 controls
           || cp == 0x061C                   // Arabic letter mark
           || (cp >= 0x200B && cp <= 0x200F) // zero-width space, joiners, LRM, RLM
           || (cp >= 0x2028 && cp <= 0x202E) // line/paragraph separators, embeddings, overrides
           || (cp >= 0x2060 && cp <= 0x2069) // word joiner, invisible operators, isolates
           || cp == 0xFEFF;                  // byte order mark
}

} // namespace

bool escapedByPrintable(uint32_t cp, bool keepLines) {
    if (keepLines && (cp == '\n' || cp == '\t'))
        return false;
    return cp < 0x20 || cp == '\\' || cp == 0x7F || (cp >= 0x80 && hidden(cp));
}

size_t utf8Length(std::string_view s, size_t i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80)
        return 1;
    const size_t len = b < 0xC2 ? 0 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : b < 0xF5 ? 4 : 0;
    if (len == 0 || i + len > s.size())
        return 0;
    for (size_t k = 1; k < len; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
            return 0;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if ((b == 0xE0 && b1 < 0xA0) || (b == 0xED && b1 >= 0xA0) || (b == 0xF0 && b1 < 0x90) ||
        (b == 0xF4 && b1 >= 0x90))
        return 0;
    return len;
}

uint32_t codePoint(std::string_view s, size_t i, size_t len) {
    const auto b = static_cast<unsigned char>(s[i]);
    uint32_t cp = len == 1 ? b : b & (0xFF >> (len + 1));
    for (size_t k = 1; k < len && i + k < s.size(); ++k)
        cp = cp << 6 | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    return cp;
}

std::string printable(std::string_view s, bool keepLines) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const auto u = static_cast<unsigned char>(s[i]);
        const size_t len = utf8Length(s, i);
        if (len > 1) {
            const uint32_t cp = codePoint(s, i, len);
            if (hidden(cp)) {
                char buf[16];
                std::snprintf(buf, sizeof buf, "\\u{%04x}", unsigned(cp));
                out += buf;
            } else {
                out.append(s, i, len);
            }
            i += len;
            continue;
        }
        if (keepLines && (s[i] == '\n' || s[i] == '\t'))
            out += s[i];
        else if (s[i] == '\\')
            out += "\\\\";
        else if (s[i] == '\n')
            out += "\\n";
        else if (s[i] == '\t')
            out += "\\t";
        else if (s[i] == '\r')
            out += "\\r";
        else if (u < 0x20 || u >= 0x7f) { // a control byte, or a byte of no UTF-8 character
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", u);
            out += buf;
        } else
            out += s[i];
        ++i;
    }
    return out;
}

} // namespace ckptscope
