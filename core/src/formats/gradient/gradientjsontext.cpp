#include "formats/gradient/gradientjsontext.h"

#include "formats/gradient/gradientjsonwriter.h"

namespace ckptscope::gradientjson {

static bool isNumberChar(char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

size_t tokenStart(std::string_view text, size_t end, Token token) {
    switch (token) {
    case Token::Bracket:
        return end - 1;
    case Token::Null:
    case Token::True:
        return end - 4;
    case Token::False:
        return end - 5;
    case Token::String:
        // end - 1 is the closing quote; the opening one is the first quote
        // before it that is not escaped.
        for (size_t j = end - 1; j-- > 0;) {
            if (text[j] != '"')
                continue;
            size_t backslashes = 0;
            while (backslashes < j && text[j - backslashes - 1] == '\\')
                ++backslashes;
            if (backslashes % 2 == 0)
                return j;
        }
        return 0;
    case Token::Number: {
        // One look-ahead character was consumed unless the text ended.
        size_t j = end;
        if (j > 0 && (j < text.size() || !isNumberChar(text[j - 1])))
            --j;
        while (j > 0 && isNumberChar(text[j - 1]))
            --j;
        return j;
    }
    }
    return end;
}

std::string position(const std::string& name, std::string_view text, size_t offset) {
    size_t line = 1;
    size_t lineStart = 0;
    for (size_t i = 0; i < offset; ++i)
        if (text[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    return name + ":" + std::to_string(line) + ":" + std::to_string(offset - lineStart + 1) + ": ";
}

void replaceAll(std::string& s, std::string_view from, std::string_view to) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
}

std::string sanitizedUtf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        size_t len = c < 0x80           ? 1
                     : (c >> 5) == 0x6  ? 2
                     : (c >> 4) == 0xe  ? 3
                     : (c >> 3) == 0x1e ? 4
                                        : 0;
        for (size_t k = 1; len != 0 && k < len; ++k)
            if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80)
                len = 0;
        if (len == 0) {
            static constexpr char hex[] = "0123456789ABCDEF";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 0xf];
            ++i;
        } else {
            out.append(s, i, len);
            i += len;
        }
    }
    return out;
}

std::string strayCharacter(std::string_view here) {
    if (here.empty())
        return "end of file";
    size_t len = 1;
    const auto c = static_cast<unsigned char>(here[0]);
    if (c >= 0xc0)
        while (len < 4 && len < here.size() &&
               (static_cast<unsigned char>(here[len]) & 0xc0) == 0x80)
            ++len;
    return "'" + sanitizedUtf8(displayText(here.substr(0, len), false)) + "'";
}

std::string plainParseMessage(std::string m, std::string_view here) {
    if (m.starts_with("[json.exception."))
        if (const size_t p = m.find("] "); p != std::string::npos)
            m.erase(0, p + 2);
    if (m.starts_with("parse error"))
        if (const size_t p = m.find(": "); p != std::string::npos)
            m.erase(0, p + 2);
    if (m.starts_with("syntax error "))
        if (const size_t p = m.find(" - "); p != std::string::npos)
            m.erase(0, p + 3);
    // "invalid literal; last read: '…'[; expected …]": a stray character.
    // The lexer's "last read" may include text of earlier tokens, so name
    // the character at the error instead.
    if (m.starts_with("invalid literal; last read: ")) {
        const size_t expected = m.find("; expected ");
        m = "unexpected " + strayCharacter(here) +
            (expected == std::string::npos ? ", expected a value" : m.substr(expected));
    }
    replaceAll(m, "'[', '{', or a literal", "a value");
    replaceAll(m, "end of input", "end of file");
    replaceAll(m, "; expected ", ", expected ");
    return sanitizedUtf8(m);
}

} // namespace ckptscope::gradientjson
