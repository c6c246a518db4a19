// The fast path of the gradient JSON reader (see below).
#include "formats/gradient/gradientjsonreader.h"
#include "formats/gradient/gradientjsonschema.h"

#include "ckptscope/formats/oxck/metadatacodec.h"

#include <array>
#include <cstdint>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <optional>
#include <utility>

namespace ckptscope::gradientjson {

namespace {

// A hand-written reader for the plain case: the schema (gradientjsonschema.h),
// strings without escapes, unsigned integers without fraction or exponent,
// known fields at most once, unknown values nested at most kFastDepth deep.
// It is a strict JSON validator for what it accepts; at anything else it
// gives up (Bail) and the SAX reader (gradientjsonsax.cpp) parses the text
// from the start — that reader alone produces every error message, so
// messages and positions are unchanged. On success the result is what the
// SAX reader would have built (tst_gradientjsonpaths checks that).

struct Bail {};

constexpr size_t kFastDepth = 32; // well below kMaxDepth

// Character classes for string scanning: 0 plain ASCII, 1 '"', 2 '\\',
// 3 control character, 4 byte ≥ 0x80.
constexpr auto kStringClass = [] {
    std::array<uint8_t, 256> c{};
    for (int i = 0; i < 0x20; ++i)
        c[size_t(i)] = 3;
    c['"'] = 1;
    c['\\'] = 2;
    for (int i = 0x80; i < 0x100; ++i)
        c[size_t(i)] = 4;
    return c;
}();

class FastReader {
public:
    FastReader(std::string_view text, GradientCheckpoint& out)
        : m_p(text.data()), m_end(text.data() + text.size()), m_out(out) {}

    void readCheckpoint() {
        objectMembers([&](std::string_view key) {
            const Field f = lookupField(Frame::Top, key);
            if (f != Field::Unknown)
                once(f);
            switch (f) {
            case Field::Graph:
                readGraphObject();
                break;
            case Field::Step:
                m_out.step = unsignedInteger();
                break;
            case Field::LossCid:
                m_out.lossCid = stringOrNull();
                break;
            case Field::OptimizerState:
                readOptimizerState();
                break;
            case Field::Timestamp:
                m_out.timestamp = unsignedInteger();
                break;
            default:
                skipValue(1);
            }
        });
        require(kTopRequired);
        finish();
    }

    void readGraphOnly() {
        readGraphObject();
        finish();
    }

private:
    // --- tokens --------------------------------------------------------------
    static bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

    void skipSpace() { m_p = spaceEnd(m_p, m_end); }

    // The first byte at or after p that is not JSON whitespace.
    static const char* spaceEnd(const char* p, const char* const end) {
#ifdef __SSE2__
        // Pretty JSON indents every line: 16 bytes at a time.
        while (end - p >= 16) {
            const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            const __m128i space =
                _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')),
                                          _mm_cmpeq_epi8(x, _mm_set1_epi8('\n'))),
                             _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\r')),
                                          _mm_cmpeq_epi8(x, _mm_set1_epi8('\t'))));
            const unsigned other = ~unsigned(_mm_movemask_epi8(space)) & 0xffffu;
            if (other)
                return p + __builtin_ctz(other);
            p += 16;
        }
#endif
        while (p != end && isSpace(*p))
            ++p;
        return p;
    }

    char peek() {
        skipSpace();
        if (m_p == m_end)
            throw Bail{};
        return *m_p;
    }

    void expect(char c) {
        if (peek() != c)
            throw Bail{};
        ++m_p;
    }

    // The characters of a string without escapes, validated as JSON wants.
    std::string_view stringView() {
        expect('"');
        const char* const start = m_p;
        bool ascii = true;
#ifdef __SSE2__
        // 16 bytes at a time to the first quote, backslash, control character
        // or non-ASCII byte (signed: < 0x20 covers both).
        while (m_end - m_p >= 16) {
            const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(m_p));
            const __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                                           _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
                                              _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));
            const unsigned mask = unsigned(_mm_movemask_epi8(stop));
            if (mask) {
                m_p += __builtin_ctz(mask);
                break;
            }
            m_p += 16;
        }
#endif
        for (;; ++m_p) {
            if (m_p == m_end)
                throw Bail{};
            const uint8_t c = kStringClass[static_cast<unsigned char>(*m_p)];
            if (c == 0)
                continue;
            if (c == 1)
                break;
            if (c != 4) // escape or control character
                throw Bail{};
            ascii = false;
        }
        const std::string_view s(start, size_t(m_p - start));
        ++m_p; // closing quote
        if (!ascii && !isValidUtf8(s))
            throw Bail{};
        return s;
    }

    std::string string() {
        return std::string(stringView());
    }

    std::optional<std::string> stringOrNull() {
        if (peek() == 'n') {
            literal("null");
            return std::nullopt;
        }
        return string();
    }

    void literal(std::string_view word) {
        if (size_t(m_end - m_p) < word.size() || std::string_view(m_p, word.size()) != word)
            throw Bail{};
        m_p += word.size();
    }

    // Digits of a JSON integer (no sign); at most 19 of them.
    uint64_t digits() {
        if (m_p == m_end || *m_p < '0' || *m_p > '9')
            throw Bail{};
        const char* const start = m_p;
        uint64_t v = 0;
        while (m_p != m_end && *m_p >= '0' && *m_p <= '9')
            v = v * 10 + uint64_t(*m_p++ - '0');
        const size_t n = size_t(m_p - start);
        if (n > 19 || (n > 1 && *start == '0')) // long (u64 overflow is possible), leading zero
            throw Bail{};
        // A fraction or exponent makes it a float: the full reader decides.
        if (m_p != m_end && (*m_p == '.' || *m_p == 'e' || *m_p == 'E'))
            throw Bail{};
        return v;
    }

    uint64_t unsignedInteger() {
        peek();
        return digits();
    }

    // --- structure -----------------------------------------------------------
    // Calls member(key) with the text at the value, for each member of an object.
    template <typename Member> void objectMembers(Member&& member) {
        expect('{');
        if (peek() == '}') {
            ++m_p;
            return;
        }
        for (;;) {
            const std::string_view key = stringView();
            expect(':');
            member(key);
            const char c = peek();
            ++m_p;
            if (c == '}')
                return;
            if (c != ',')
                throw Bail{};
        }
    }

    // Calls element() with the text at each element of an array.
    template <typename Element> void arrayElements(Element&& element) {
        expect('[');
        if (peek() == ']') {
            ++m_p;
            return;
        }
        for (;;) {
            element();
            const char c = peek();
            ++m_p;
            if (c == ']')
                return;
            if (c != ',')
                throw Bail{};
        }
    }

    // Field bits of the object being read (struct-like objects nest only
    // graph → node, so one word per level suffices).
    void once(Field f) {
        if (*m_seen & bit(f))
            throw Bail{}; // duplicate field: an error in the full reader
        *m_seen |= bit(f);
    }
    void require(unsigned fields) const {
        if ((*m_seen & fields) != fields)
            throw Bail{};
    }

    void readGraphObject() {
        unsigned seen = 0;
        unsigned* const outer = std::exchange(m_seen, &seen);
        objectMembers([&](std::string_view key) {
            const Field f = lookupField(Frame::Graph, key);
            if (f != Field::Unknown)
                once(f);
            if (f == Field::Nodes)
                readNodes();
            else if (f == Field::Edges)
                readEdges();
            else
                skipValue(2);
        });
        require(kGraphRequired);
        m_seen = outer;
    }

    void readNodes() {
        auto& nodes = detail::GraphAccess::nodes(m_out.graph);
        objectMembers([&](std::string_view key) {
            std::string nodeKey(key);
            nodes.insert_or_assign(std::move(nodeKey), readNode());
        });
    }

    ComputationNode readNode() {
        ComputationNode node;
        unsigned seen = 0;
        unsigned* const outer = std::exchange(m_seen, &seen);
        objectMembers([&](std::string_view key) {
            const Field f = lookupField(Frame::Node, key);
            if (f != Field::Unknown)
                once(f);
            switch (f) {
            case Field::Id:
                node.id = string();
                break;
            case Field::Op:
                node.op = string();
                break;
            case Field::InputCids:
                node.inputCids.reserve(4); // one allocation for the usual 1-3 inputs
                arrayElements([&] { node.inputCids.push_back(string()); });
                break;
            case Field::OutputCid:
                node.outputCid = stringOrNull();
                break;
            case Field::GradientCid:
                node.gradientCid = stringOrNull();
                break;
            case Field::Metadata:
                objectMembers([&](std::string_view k) {
                    std::string metaKey(k);
                    node.metadata.insert_or_assign(std::move(metaKey), string());
                });
                break;
            default:
                skipValue(4);
            }
        });
        require(kNodeRequired);
        m_seen = outer;
        return node;
    }

    void readEdges() {
        auto& edges = detail::GraphAccess::edges(m_out.graph);
        arrayElements([&] {
            Edge e;
            expect('[');
            e.first = string();
            expect(',');
            e.second = string();
            expect(']');
            edges.push_back(std::move(e));
        });
    }

    void readOptimizerState() {
        objectMembers([&](std::string_view key) {
            std::string name(key);
            m_out.optimizerState.insert_or_assign(std::move(name), bytes());
        });
    }

    // The bulk of a real file: one integer 0..255 per line. Locals only in
    // the loop: stores through a byte pointer may alias any member.
    std::vector<uint8_t> bytes() {
        std::vector<uint8_t> out;
        expect('[');
        if (peek() == ']') {
            ++m_p;
            return out;
        }
        const char* p = m_p;
        const char* const end = m_end;
        out.resize(4096);
        uint8_t* at = out.data();
        uint8_t* limit = at + out.size();
        for (;;) {
            p = spaceEnd(p, end);
            // 1-3 digits, no leading zero, at most 255. After them must come
            // ',', ']' or whitespace, which also refuses a fraction or exponent.
            unsigned v;
            if (end - p >= 4) {
                const unsigned d0 = uint8_t(p[0]) - unsigned('0');
                const unsigned d1 = uint8_t(p[1]) - unsigned('0');
                const unsigned d2 = uint8_t(p[2]) - unsigned('0');
                const unsigned d3 = uint8_t(p[3]) - unsigned('0');
                const bool two = d1 <= 9, three = two && d2 <= 9;
                if (d0 > 9 || (two && d0 == 0) || (three && d3 <= 9))
                    throw Bail{};
                v = three ? d0 * 100 + d1 * 10 + d2 : two ? d0 * 10 + d1 : d0;
                p += 1 + unsigned(two) + unsigned(three);
                if (v > 255)
                    throw Bail{};
            } else {
                const char* const start = p;
                v = 0;
                while (p != end && unsigned(*p - '0') <= 9u && p - start < 4)
                    v = v * 10 + unsigned(*p++ - '0');
                const auto n = p - start;
                if (n == 0 || n > 3 || v > 255 || (n > 1 && *start == '0'))
                    throw Bail{};
            }
            if (at == limit) {
                const size_t used = out.size();
                out.resize(2 * used);
                at = out.data() + used;
                limit = out.data() + out.size();
            }
            *at++ = uint8_t(v);
            if (p != end && *p == ',') { // pretty output: the comma follows at once
                ++p;
                continue;
            }
            p = spaceEnd(p, end);
            if (p == end)
                throw Bail{};
            const char c = *p++;
            if (c == ']')
                break;
            if (c != ',')
                throw Bail{};
        }
        m_p = p;
        out.resize(size_t(at - out.data()));
        return out;
    }

    // A value of an unknown field, validated and dropped.
    void skipValue(size_t depth) {
        if (depth > kFastDepth)
            throw Bail{};
        switch (peek()) {
        case '{':
            objectMembers([&](std::string_view) { skipValue(depth + 1); });
            return;
        case '[':
            arrayElements([&] { skipValue(depth + 1); });
            return;
        case '"':
            stringView();
            return;
        case 'n':
            literal("null");
            return;
        case 't':
            literal("true");
            return;
        case 'f':
            literal("false");
            return;
        case '-':
            ++m_p;
            digits();
            return;
        default:
            digits();
            return;
        }
    }

    void finish() {
        skipSpace();
        if (m_p != m_end)
            throw Bail{}; // something after the value
    }

    const char* m_p;
    const char* const m_end;
    GradientCheckpoint& m_out;
    unsigned m_topSeen = 0;
    unsigned* m_seen = &m_topSeen;
};

} // namespace

std::optional<GradientCheckpoint> readFast(std::string_view text, bool graphOnly) {
    GradientCheckpoint result;
    try {
        FastReader reader(text, result);
        if (graphOnly)
            reader.readGraphOnly();
        else
            reader.readCheckpoint();
    } catch (const Bail&) {
        return std::nullopt;
    }
    return result;
}

} // namespace ckptscope::gradientjson
