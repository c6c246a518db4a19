#include "formats/pytorch/pickletext.h"

#include <algorithm>
#include <charconv>
#include <vector>

namespace ckptscope::pytorch {

namespace {

// The value of `digits` hex digits at s[at], nullopt when they are not all hex.
std::optional<uint32_t> hexAt(std::string_view s, size_t at, size_t digits) {
    if (at > s.size() || digits > s.size() - at)
        return std::nullopt;
    uint32_t v = 0;
    const char* first = s.data() + at;
    const auto [end, ec] = std::from_chars(first, first + digits, v, 16);
    if (ec != std::errc() || end != first + digits)
        return std::nullopt;
    return v;
}

} // namespace

// A little-endian two's-complement integer of any length in decimal.
std::optional<int64_t> pickleInt64(std::string_view bytes) {
    const bool negative = !bytes.empty() && (uint8_t(bytes.back()) & 0x80);
    for (size_t i = 8; i < bytes.size(); ++i)
        if (uint8_t(bytes[i]) != (negative ? 0xff : 0x00))
            return std::nullopt;
    if (bytes.size() > 8 && negative != ((uint8_t(bytes[7]) & 0x80) != 0))
        return std::nullopt;
    const size_t n = std::min<size_t>(bytes.size(), 8);
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
        v = v << 8 | uint8_t(bytes[i]);
    if (n > 0 && n < 8 && negative)
        v |= ~uint64_t(0) << (8 * n); // sign-extend
    return int64_t(v);
}

std::string pickleDecimal(std::string_view bytes) {
    std::vector<uint8_t> mag(bytes.begin(), bytes.end());
    const bool negative = !mag.empty() && (mag.back() & 0x80);
    if (negative) { // two's complement: invert and add one
        bool carry = true;
        for (uint8_t& b : mag) {
            b = uint8_t(~b + (carry ? 1 : 0));
            carry = carry && b == 0;
        }
    }
    std::string digits;
    // Repeated division by 10^9, most significant byte last.
    while (std::any_of(mag.begin(), mag.end(), [](uint8_t b) { return b != 0; })) {
        uint64_t rem = 0;
        for (size_t i = mag.size(); i-- > 0;) {
            const uint64_t cur = rem << 8 | mag[i];
            mag[i] = uint8_t(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        std::string chunk = std::to_string(rem);
        const bool more = std::any_of(mag.begin(), mag.end(), [](uint8_t b) { return b != 0; });
        if (more)
            chunk.insert(0, 9 - chunk.size(), '0');
        digits.insert(0, chunk);
    }
    if (digits.empty())
        digits = "0";
    return negative ? "-" + digits : digits;
}

// UTF-8 of one code point.
void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xc0 | cp >> 6);
        out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += char(0xe0 | cp >> 12);
        out += char(0x80 | (cp >> 6 & 0x3f));
        out += char(0x80 | (cp & 0x3f));
    } else {
        out += char(0xf0 | cp >> 18);
        out += char(0x80 | (cp >> 12 & 0x3f));
        out += char(0x80 | (cp >> 6 & 0x3f));
        out += char(0x80 | (cp & 0x3f));
    }
}

bool latin1Bytes(const std::string& text, std::string& out) {
    for (size_t i = 0; i < text.size();) {
        const unsigned char c = text[i];
        if (c < 0x80) {
            out += char(c);
            ++i;
        } else if ((c & 0xe0) == 0xc0 && i + 1 < text.size()) {
            const uint32_t cp = (c & 0x1fu) << 6 | (uint8_t(text[i + 1]) & 0x3fu);
            if (cp > 0xff)
                return false;
            out += char(cp);
            i += 2;
        } else {
            return false;
        }
    }
    return true;
}

std::optional<std::string> unquotedString(std::string_view s) {
    if (s.size() < 2 || (s.front() != '\'' && s.front() != '"') || s.back() != s.front())
        return std::nullopt;
    std::string out;
    for (size_t i = 1; i + 1 < s.size(); ++i) {
        if (s[i] != '\\' || i + 2 >= s.size()) {
            out += s[i];
            continue;
        }
        const char c = s[++i];
        if (c == 'n')
            out += '\n';
        else if (c == 't')
            out += '\t';
        else if (c == 'r')
            out += '\r';
        else if (c == 'x') {
            const auto x = hexAt(s, i + 1, 2);
            if (!x)
                return std::nullopt;
            out += char(*x);
            i += 2;
        } else
            out += c;
    }
    return out;
}

std::optional<std::string> rawUnicodeText(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        const bool escape = s[i] == '\\' && i + 1 < s.size();
        const size_t digits = escape && s[i + 1] == 'u' ? 4 : escape && s[i + 1] == 'U' ? 8 : 0;
        if (digits == 0) {
            appendUtf8(out, uint8_t(s[i]));
            continue;
        }
        const auto cp = hexAt(s, i + 2, digits);
        if (!cp || *cp > 0x10ffff)
            return std::nullopt;
        appendUtf8(out, *cp);
        i += 1 + digits;
    }
    return out;
}

} // namespace ckptscope::pytorch
