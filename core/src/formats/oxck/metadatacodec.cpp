#include "ckptscope/formats/oxck/metadatacodec.h"

#include "ckptscope/formats/checkpointerror.h"

namespace ckptscope {

std::string serializeMetadata(const Metadata& metadata) {
    // Byte-identical to the reference writer: keys sorted (std::map), only
    // quote and backslash escaped, everything else raw.
    auto put = [](std::string& out, const std::string& s) {
        out += '"';
        for (char c : s) {
            if (c == '"' || c == '\\')
                out += '\\';
            out += c;
        }
        out += '"';
    };
    std::string out = "{";
    bool first = true;
    for (const auto& [key, value] : metadata) {
        if (!first)
            out += ',';
        first = false;
        put(out, key);
        out += ':';
        put(out, value);
    }
    out += '}';
    return out;
}

namespace {

// Length of the UTF-8 sequence starting at s[i], or 0 when it is malformed.
size_t utf8SequenceLength(std::string_view s, size_t i) {
    const auto b0 = uint8_t(s[i]);
    if (b0 < 0x80)
        return 1;
    size_t len;
    uint32_t cp;
    if ((b0 & 0xE0) == 0xC0) {
        len = 2;
        cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3;
        cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4;
        cp = b0 & 0x07;
    } else {
        return 0;
    }
    if (i + len > s.size())
        return 0;
    for (size_t k = 1; k < len; ++k) {
        const auto b = uint8_t(s[i + k]);
        if ((b & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (b & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

// Position of the first malformed byte, or npos.
size_t firstInvalidUtf8(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        const size_t len = utf8SequenceLength(s, i);
        if (len == 0)
            return i;
        i += len;
    }
    return std::string_view::npos;
}

class MetadataParser {
public:
    MetadataParser(std::string_view text, const std::string& fileName, uint64_t base)
        : m_text(text), m_file(fileName), m_base(base) {}

    Metadata parse() {
        Metadata out;
        skipSpace();
        if (m_pos == m_text.size())
            return out; // empty text: no metadata
        expect('{', "'{' to open the metadata object");
        for (;;) {
            skipSeparators();
            if (m_pos == m_text.size())
                fail("'}' to close the metadata object, found the end of the block");
            if (m_text[m_pos] == '}') {
                ++m_pos;
                break;
            }
            std::string key = string("a quoted key");
            skipSpace();
            expect(':', "':' after a key");
            skipSpace();
            std::string value = string("a quoted string value (metadata is flat text)");
            out.insert_or_assign(std::move(key), std::move(value)); // later key wins
        }
        skipSpace();
        if (m_pos != m_text.size())
            fail("nothing after the closing '}'");
        return out;
    }

private:
    [[noreturn]] void fail(const std::string& expected, bool showFound = true) const {
        std::string found;
        if (showFound && m_pos < m_text.size()) {
            const char c = m_text[m_pos];
            found = (c >= 0x20 && c < 0x7f) ? std::string(", found '") + c + "'" : "";
        }
        throw CheckpointError(CheckpointError::Kind::BadMetadata,
                              m_file + ": metadata at byte " + std::to_string(m_base + m_pos) +
                                  ": expected " + expected + found,
                              m_base + m_pos);
    }
    void skipSpace() {
        while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t' ||
                                         m_text[m_pos] == '\n' || m_text[m_pos] == '\r'))
            ++m_pos;
    }
    void skipSeparators() {
        while (m_pos < m_text.size() &&
               (m_text[m_pos] == ',' || m_text[m_pos] == ' ' || m_text[m_pos] == '\t' ||
                m_text[m_pos] == '\n' || m_text[m_pos] == '\r'))
            ++m_pos;
    }
    void expect(char c, const char* what) {
        if (m_pos >= m_text.size() || m_text[m_pos] != c)
            fail(what);
        ++m_pos;
    }
    std::string string(const char* what) {
        expect('"', what);
        std::string s;
        for (;;) {
            if (m_pos >= m_text.size())
                fail("a closing '\"'");
            const char c = m_text[m_pos++];
            if (c == '"')
                return s;
            if (c != '\\') {
                s += c;
                continue;
            }
            if (m_pos >= m_text.size())
                fail("an escaped character after '\\'");
            const char e = m_text[m_pos];
            switch (e) {
            case '"':
                s += '"';
                break;
            case '\\':
                s += '\\';
                break;
            case 'n':
                s += '\n';
                break;
            case 'r':
                s += '\r';
                break;
            case 't':
                s += '\t';
                break;
            default:
                --m_pos;
                fail(std::string("one of the escapes \\\" \\\\ \\n \\r \\t, not '\\") + e + "'",
                     false);
            }
            ++m_pos;
        }
    }

    std::string_view m_text;
    const std::string& m_file;
    uint64_t m_base;
    size_t m_pos = 0;
};

} // namespace

bool isValidUtf8(std::string_view text) {
    return firstInvalidUtf8(text) == std::string_view::npos;
}

Metadata parseMetadata(std::string_view text, const std::string& fileName, uint64_t baseOffset) {
    const size_t bad = firstInvalidUtf8(text);
    if (bad != std::string_view::npos)
        throw CheckpointError(CheckpointError::Kind::InvalidUtf8,
                              fileName + ": metadata at byte " + std::to_string(baseOffset + bad) +
                                  ": expected UTF-8 text, found an invalid byte sequence",
                              baseOffset + bad);
    return MetadataParser(text, fileName, baseOffset).parse();
}

} // namespace ckptscope
