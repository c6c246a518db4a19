#include "gradientjsonreader.h"

#include "gradientjsonwriter.h"

#include "ckptscope/metadatacodec.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <iterator>
#include <optional>
#include <utility>

namespace ckptscope {

namespace detail {
// The reader stores nodes under the key they have in the file, which may
// differ from their "id" (validate() reports that).
struct GraphAccess {
    static std::map<std::string, ComputationNode>& nodes(ComputationGraphStore& g) {
        return g.m_nodes;
    }
    static std::vector<Edge>& edges(ComputationGraphStore& g) { return g.m_edges; }
};
} // namespace detail

namespace gradientjson {

namespace {

using Json = nlohmann::json;

// Input iterator over the text that publishes how far the parser has read:
// when a SAX callback runs, that is the end of the token just seen (plus one
// look-ahead character after a number).
class TrackingIterator {
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    TrackingIterator() = default;
    TrackingIterator(const char* p, const char** cursor) : m_p(p), m_cursor(cursor) {}

    reference operator*() const { return *m_p; }
    TrackingIterator& operator++() {
        *m_cursor = ++m_p;
        return *this;
    }
    TrackingIterator operator++(int) {
        TrackingIterator old = *this;
        ++*this;
        return old;
    }
    bool operator==(const TrackingIterator& other) const { return m_p == other.m_p; }

private:
    const char* m_p = nullptr;
    const char** m_cursor = nullptr;
};

// Containers the reader is inside of.
enum class Frame : uint8_t {
    Top,
    Graph,
    Nodes,
    Node,
    InputCids,
    Metadata,
    Edges,
    Edge,
    Optimizer,
    Bytes
};

// Known fields of the three struct-like objects; bit positions in Level::seen.
enum class Field : uint8_t {
    Unknown,
    Graph,
    Step,
    LossCid,
    OptimizerState,
    Timestamp,
    Nodes,
    Edges,
    Id,
    Op,
    InputCids,
    OutputCid,
    GradientCid,
    Metadata,
};

constexpr unsigned bit(Field f) {
    return 1u << unsigned(f);
}
constexpr unsigned kTopRequired =
    bit(Field::Graph) | bit(Field::Step) | bit(Field::OptimizerState) | bit(Field::Timestamp);
constexpr unsigned kGraphRequired = bit(Field::Nodes) | bit(Field::Edges);
// "metadata" is required by the reference; a missing one reads as empty here.
constexpr unsigned kNodeRequired = bit(Field::Id) | bit(Field::Op) | bit(Field::InputCids);

struct FieldName {
    Frame frame;
    Field field;
    std::string_view name;
};
constexpr FieldName kFieldNames[] = {
    {Frame::Top, Field::Graph, "graph"},
    {Frame::Top, Field::Step, "step"},
    {Frame::Top, Field::LossCid, "loss_cid"},
    {Frame::Top, Field::OptimizerState, "optimizer_state"},
    {Frame::Top, Field::Timestamp, "timestamp"},
    {Frame::Graph, Field::Nodes, "nodes"},
    {Frame::Graph, Field::Edges, "edges"},
    {Frame::Node, Field::Id, "id"},
    {Frame::Node, Field::Op, "op"},
    {Frame::Node, Field::InputCids, "input_cids"},
    {Frame::Node, Field::OutputCid, "output_cid"},
    {Frame::Node, Field::GradientCid, "gradient_cid"},
    {Frame::Node, Field::Metadata, "metadata"},
};

Field lookupField(Frame frame, std::string_view name) {
    for (const FieldName& f : kFieldNames)
        if (f.frame == frame && f.name == name)
            return f.field;
    return Field::Unknown;
}

std::string_view fieldName(Field field) {
    for (const FieldName& f : kFieldNames)
        if (f.field == field)
            return f.name;
    return {};
}

// What the next value must be, derived from the frame and the last key.
enum class Slot : uint8_t {
    Root,
    Ignore,
    GraphObject,
    Step,
    LossCid,
    OptimizerObject,
    Timestamp,
    NodesObject,
    EdgesArray,
    NodeObject,
    NodeId,
    NodeOp,
    InputCidsArray,
    OutputCid,
    GradientCid,
    MetadataObject,
    InputCid,
    MetaValue,
    EdgeArray,
    EdgeEnd,
    BlobArray,
    Byte,
};

// Token shapes, to find where the offending token starts.
enum class Token : uint8_t { String, Number, Null, True, False, Bracket };

bool isNumberChar(char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

bool allDigits(std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

void replaceAll(std::string& s, std::string_view from, std::string_view to) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
}

// The parser quotes what it read, which may be the invalid UTF-8 it refused;
// such bytes become \xNN so the message itself stays valid text.
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

// The character starting `here`, quoted for a message: one whole UTF-8
// sequence, control characters and invalid bytes escaped.
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

// nlohmann's "[json.exception.parse_error.101] parse error at line 3, column
// 5: syntax error while parsing value - unexpected end of input; expected
// '[', '{', or a literal" becomes "unexpected end of file, expected a value".
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

class Handler {
public:
    Handler(std::string_view text, const std::string& name, const char* const& cursor,
            bool graphOnly, GradientCheckpoint& out)
        : m_text(text), m_name(name), m_cursor(cursor), m_graphOnly(graphOnly), m_out(out) {
        m_stack.reserve(16);
    }

    // --- nlohmann SAX interface -------------------------------------------
    bool null() {
        if (m_skip)
            return true;
        const Slot s = beginValue(Token::Null);
        switch (s) {
        case Slot::Ignore:
            break;
        case Slot::LossCid:
            m_out.lossCid.reset();
            break;
        case Slot::OutputCid:
            m_node.outputCid.reset();
            break;
        case Slot::GradientCid:
            m_node.gradientCid.reset();
            break;
        default:
            typeError(s, "null", Token::Null);
        }
        endValue();
        return true;
    }

    bool boolean(bool value) {
        if (m_skip)
            return true;
        const Slot s = beginValue(value ? Token::True : Token::False);
        if (s != Slot::Ignore)
            typeError(s, value ? "true" : "false", value ? Token::True : Token::False);
        endValue();
        return true;
    }

    bool number_unsigned(Json::number_unsigned_t value) {
        if (m_skip)
            return true;
        const Slot s = beginValue(Token::Number);
        switch (s) {
        case Slot::Byte:
            if (value > 255)
                typeError(s, "integer " + std::to_string(value), Token::Number);
            m_blob.push_back(uint8_t(value));
            break;
        case Slot::Step:
            m_out.step = value;
            break;
        case Slot::Timestamp:
            m_out.timestamp = value;
            break;
        case Slot::Ignore:
            break;
        default:
            typeError(s, "integer " + std::to_string(value), Token::Number);
        }
        endValue();
        return true;
    }

    // Only negative integers arrive here.
    bool number_integer(Json::number_integer_t value) {
        if (m_skip)
            return true;
        const Slot s = beginValue(Token::Number);
        if (s != Slot::Ignore)
            typeError(s, "integer " + std::to_string(value), Token::Number);
        endValue();
        return true;
    }

    // Fractions, exponents, and integers beyond 64 bits.
    bool number_float(Json::number_float_t, const std::string& raw) {
        if (m_skip)
            return true;
        const Slot s = beginValue(Token::Number);
        if (s != Slot::Ignore)
            typeError(s,
                      allDigits(raw) ? "integer " + raw + ", which does not fit in 64 bits"
                                     : "number " + raw,
                      Token::Number);
        endValue();
        return true;
    }

    bool string(std::string& value) {
        if (m_skip)
            return true;
        const Slot s = beginValue(Token::String);
        switch (s) {
        case Slot::NodeId:
            m_node.id = std::move(value);
            break;
        case Slot::NodeOp:
            m_node.op = std::move(value);
            break;
        case Slot::InputCid:
            m_node.inputCids.push_back(std::move(value));
            break;
        case Slot::OutputCid:
            m_node.outputCid = std::move(value);
            break;
        case Slot::GradientCid:
            m_node.gradientCid = std::move(value);
            break;
        case Slot::MetaValue:
            m_node.metadata.insert_or_assign(std::move(m_key), std::move(value));
            break;
        case Slot::EdgeEnd:
            (m_stack.back().count == 0 ? m_edge.first : m_edge.second) = std::move(value);
            break;
        case Slot::LossCid:
            m_out.lossCid = std::move(value);
            break;
        case Slot::Ignore:
            break;
        default:
            typeError(s, "string " + displayText(value, true, 40), Token::String);
        }
        endValue();
        return true;
    }

    bool binary(Json::binary_t&) { return true; } // never produced by JSON text

    bool start_object(std::size_t) {
        enterContainer();
        if (m_skip) {
            ++m_skip;
            return true;
        }
        const Slot s = beginValue(Token::Bracket);
        switch (s) {
        case Slot::Root:
            push(m_graphOnly ? Frame::Graph : Frame::Top);
            break;
        case Slot::GraphObject:
            push(Frame::Graph);
            break;
        case Slot::NodesObject:
            push(Frame::Nodes);
            break;
        case Slot::NodeObject:
            m_node = ComputationNode();
            push(Frame::Node);
            break;
        case Slot::MetadataObject:
            push(Frame::Metadata);
            break;
        case Slot::OptimizerObject:
            push(Frame::Optimizer);
            break;
        case Slot::Ignore:
            m_skip = 1;
            break;
        default:
            typeError(s, "an object", Token::Bracket);
        }
        return true;
    }

    bool key(std::string& name) {
        if (m_skip)
            return true;
        Level& top = m_stack.back();
        switch (top.frame) {
        case Frame::Top:
        case Frame::Graph:
        case Frame::Node:
            m_field = lookupField(top.frame, name);
            if (m_field != Field::Unknown) {
                if (top.seen & bit(m_field))
                    fail(Token::String,
                         "duplicate field \"" + name + "\" in " + objectName(top.frame));
                top.seen |= bit(m_field);
            }
            break;
        case Frame::Nodes:
            m_nodeKey = std::move(name);
            break;
        case Frame::Metadata:
            m_key = std::move(name);
            break;
        case Frame::Optimizer:
            m_blobName = std::move(name);
            break;
        default:
            break; // arrays have no keys
        }
        return true;
    }

    bool end_object() {
        if (m_skip) {
            if (--m_skip == 0)
                endValue();
            return true;
        }
        const Level& top = m_stack.back();
        switch (top.frame) {
        case Frame::Top:
            requireFields(top, kTopRequired);
            break;
        case Frame::Graph:
            requireFields(top, kGraphRequired);
            break;
        case Frame::Node:
            requireFields(top, kNodeRequired);
            detail::GraphAccess::nodes(m_out.graph)
                .insert_or_assign(std::move(m_nodeKey), std::move(m_node));
            break;
        default:
            break;
        }
        m_stack.pop_back();
        endValue();
        return true;
    }

    bool start_array(std::size_t) {
        enterContainer();
        if (m_skip) {
            ++m_skip;
            return true;
        }
        const Slot s = beginValue(Token::Bracket);
        switch (s) {
        case Slot::EdgesArray:
            push(Frame::Edges);
            break;
        case Slot::InputCidsArray:
            push(Frame::InputCids);
            break;
        case Slot::EdgeArray:
            m_edge = Edge();
            push(Frame::Edge);
            break;
        case Slot::BlobArray:
            m_blob = std::vector<uint8_t>();
            push(Frame::Bytes);
            break;
        case Slot::Ignore:
            m_skip = 1;
            break;
        default:
            typeError(s, "an array", Token::Bracket);
        }
        return true;
    }

    bool end_array() {
        if (m_skip) {
            if (--m_skip == 0)
                endValue();
            return true;
        }
        const Level& top = m_stack.back();
        if (top.frame == Frame::Edge) {
            if (top.count != 2)
                fail(Token::Bracket, edgeName() + " must be a [producer, consumer] pair, found " +
                                         std::to_string(top.count) +
                                         (top.count == 1 ? " element" : " elements"));
            detail::GraphAccess::edges(m_out.graph).push_back(std::move(m_edge));
        } else if (top.frame == Frame::Bytes) {
            m_out.optimizerState.insert_or_assign(std::move(m_blobName), std::move(m_blob));
        }
        m_stack.pop_back();
        endValue();
        return true;
    }

    bool parse_error(std::size_t position, const std::string&,
                     const nlohmann::detail::exception& ex) {
        // position counts characters read; the offending one is the last.
        const size_t offset = std::min(position > 0 ? position - 1 : 0, m_text.size());
        throw GradientError(GradientError::Kind::Parse,
                            where(offset) + plainParseMessage(ex.what(), m_text.substr(offset)));
    }

private:
    struct Level {
        Frame frame;
        uint64_t count = 0; // values seen so far in this container
        unsigned seen = 0;  // bits of known fields seen (struct-like objects)
    };

    void push(Frame frame) { m_stack.push_back({frame, 0, 0}); }

    void enterContainer() {
        if (m_stack.size() + m_skip >= kMaxDepth)
            fail(Token::Bracket, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    }

    Slot slot() const {
        if (m_stack.empty())
            return Slot::Root;
        switch (m_stack.back().frame) {
        case Frame::Nodes:
            return Slot::NodeObject;
        case Frame::InputCids:
            return Slot::InputCid;
        case Frame::Metadata:
            return Slot::MetaValue;
        case Frame::Edges:
            return Slot::EdgeArray;
        case Frame::Edge:
            return Slot::EdgeEnd;
        case Frame::Optimizer:
            return Slot::BlobArray;
        case Frame::Bytes:
            return Slot::Byte;
        default:
            break;
        }
        switch (m_field) {
        case Field::Graph:
            return Slot::GraphObject;
        case Field::Step:
            return Slot::Step;
        case Field::LossCid:
            return Slot::LossCid;
        case Field::OptimizerState:
            return Slot::OptimizerObject;
        case Field::Timestamp:
            return Slot::Timestamp;
        case Field::Nodes:
            return Slot::NodesObject;
        case Field::Edges:
            return Slot::EdgesArray;
        case Field::Id:
            return Slot::NodeId;
        case Field::Op:
            return Slot::NodeOp;
        case Field::InputCids:
            return Slot::InputCidsArray;
        case Field::OutputCid:
            return Slot::OutputCid;
        case Field::GradientCid:
            return Slot::GradientCid;
        case Field::Metadata:
            return Slot::MetadataObject;
        case Field::Unknown:
            break;
        }
        return Slot::Ignore;
    }

    Slot beginValue(Token token) {
        const Slot s = slot();
        if (s == Slot::EdgeEnd && m_stack.back().count >= 2)
            fail(token, edgeName() + " must be a [producer, consumer] pair, found a third element");
        return s;
    }

    void endValue() {
        if (!m_stack.empty())
            ++m_stack.back().count;
    }

    void requireFields(const Level& level, unsigned required) {
        const unsigned missing = required & ~level.seen;
        if (missing == 0)
            return;
        for (const FieldName& f : kFieldNames)
            if (f.frame == level.frame && (missing & bit(f.field)))
                fail(Token::Bracket, "missing required field \"" + std::string(f.name) + "\" in " +
                                         objectName(level.frame));
    }

    // --- message parts ------------------------------------------------------
    std::string graphName() const { return m_graphOnly ? "the graph" : "\"graph\""; }
    std::string nodeName() const { return "node " + displayText(m_nodeKey, true); }
    std::string blobName() const { return "optimizer state " + displayText(m_blobName, true); }
    // The Edge frame is on top; its index is the count of the Edges below.
    std::string edgeName() const {
        return "edge " + std::to_string(m_stack[m_stack.size() - 2].count);
    }

    std::string objectName(Frame frame) const {
        switch (frame) {
        case Frame::Top:
            return "the top-level object";
        case Frame::Graph:
            return graphName();
        default:
            return nodeName();
        }
    }

    std::string nodeField(Field f) const {
        return "\"" + std::string(fieldName(f)) + "\" of " + nodeName();
    }

    std::string subject(Slot s) const {
        const uint64_t index = m_stack.empty() ? 0 : m_stack.back().count;
        switch (s) {
        case Slot::Root:
            return m_graphOnly ? "the graph" : "the top-level value";
        case Slot::GraphObject:
        case Slot::Step:
        case Slot::LossCid:
        case Slot::OptimizerObject:
        case Slot::Timestamp:
            return "\"" + std::string(fieldName(m_field)) + "\"";
        case Slot::NodesObject:
        case Slot::EdgesArray:
            return "\"" + std::string(fieldName(m_field)) + "\" in " + graphName();
        case Slot::NodeObject:
            return nodeName();
        case Slot::NodeId:
        case Slot::NodeOp:
        case Slot::InputCidsArray:
        case Slot::OutputCid:
        case Slot::GradientCid:
        case Slot::MetadataObject:
            return nodeField(m_field);
        case Slot::InputCid:
            return "input CID " + std::to_string(index) + " of " + nodeName();
        case Slot::MetaValue:
            return "metadata " + displayText(m_key, true) + " of " + nodeName();
        case Slot::EdgeArray:
            return "edge " + std::to_string(index);
        case Slot::EdgeEnd:
            return "element " + std::to_string(index) + " of " + edgeName();
        case Slot::BlobArray:
            return blobName();
        case Slot::Byte:
            return "byte " + std::to_string(index) + " of " + blobName();
        case Slot::Ignore:
            break;
        }
        return "value";
    }

    static std::string_view expected(Slot s) {
        switch (s) {
        case Slot::EdgesArray:
        case Slot::InputCidsArray:
        case Slot::BlobArray:
            return "an array";
        case Slot::EdgeArray:
            return "a [producer, consumer] pair";
        case Slot::Step:
        case Slot::Timestamp:
            return "an unsigned integer";
        case Slot::LossCid:
        case Slot::OutputCid:
        case Slot::GradientCid:
            return "a string or null";
        case Slot::NodeId:
        case Slot::NodeOp:
        case Slot::InputCid:
        case Slot::MetaValue:
        case Slot::EdgeEnd:
            return "a string";
        case Slot::Byte:
            return "an integer 0..255";
        default:
            return "an object";
        }
    }

    [[noreturn]] void typeError(Slot s, const std::string& found, Token token) {
        fail(token, subject(s) + " must be " + std::string(expected(s)) + ", found " + found);
    }

    [[noreturn]] void fail(Token token, const std::string& message) {
        throw GradientError(GradientError::Kind::Schema, where(tokenStart(token)) + message);
    }

    // The parser has read up to m_cursor; step back over the token.
    size_t tokenStart(Token token) const {
        const size_t end = size_t(m_cursor - m_text.data());
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
                if (m_text[j] != '"')
                    continue;
                size_t backslashes = 0;
                while (backslashes < j && m_text[j - backslashes - 1] == '\\')
                    ++backslashes;
                if (backslashes % 2 == 0)
                    return j;
            }
            return 0;
        case Token::Number: {
            // One look-ahead character was consumed unless the text ended.
            size_t j = end;
            if (j > 0 && (j < m_text.size() || !isNumberChar(m_text[j - 1])))
                --j;
            while (j > 0 && isNumberChar(m_text[j - 1]))
                --j;
            return j;
        }
        }
        return end;
    }

    std::string where(size_t offset) const {
        size_t line = 1;
        size_t lineStart = 0;
        for (size_t i = 0; i < offset; ++i)
            if (m_text[i] == '\n') {
                ++line;
                lineStart = i + 1;
            }
        return m_name + ":" + std::to_string(line) + ":" + std::to_string(offset - lineStart + 1) +
               ": ";
    }

    std::string_view m_text;
    const std::string& m_name;
    const char* const& m_cursor;
    const bool m_graphOnly;
    GradientCheckpoint& m_out;

    std::vector<Level> m_stack;
    size_t m_skip = 0; // depth inside an ignored (unknown) value
    Field m_field = Field::Unknown;
    ComputationNode m_node;
    std::string m_nodeKey;
    std::string m_key; // metadata key
    Edge m_edge;
    std::string m_blobName;
    std::vector<uint8_t> m_blob;
};

// --- Fast path ---------------------------------------------------------------
//
// A hand-written reader for the plain case: the schema above, strings without
// escapes, unsigned integers without fraction or exponent, known fields at
// most once, unknown values nested at most kFastDepth deep. It is a strict
// JSON validator for what it accepts; at anything else it gives up (Bail) and
// the full reader above parses the text from the start — that reader alone
// produces every error message, so messages and positions are unchanged. On
// success the result is what the full reader would have built.

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
            if (key == "graph") {
                once(Field::Graph);
                readGraphObject();
            } else if (key == "step") {
                once(Field::Step);
                m_out.step = unsignedInteger();
            } else if (key == "loss_cid") {
                once(Field::LossCid);
                m_out.lossCid = stringOrNull();
            } else if (key == "optimizer_state") {
                once(Field::OptimizerState);
                readOptimizerState();
            } else if (key == "timestamp") {
                once(Field::Timestamp);
                m_out.timestamp = unsignedInteger();
            } else {
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
            if (key == "nodes") {
                once(Field::Nodes);
                readNodes();
            } else if (key == "edges") {
                once(Field::Edges);
                readEdges();
            } else {
                skipValue(2);
            }
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
            if (key == "id") {
                once(Field::Id);
                node.id = string();
            } else if (key == "op") {
                once(Field::Op);
                node.op = string();
            } else if (key == "input_cids") {
                once(Field::InputCids);
                node.inputCids.reserve(4); // one allocation for the usual 1-3 inputs
                arrayElements([&] { node.inputCids.push_back(string()); });
            } else if (key == "output_cid") {
                once(Field::OutputCid);
                node.outputCid = stringOrNull();
            } else if (key == "gradient_cid") {
                once(Field::GradientCid);
                node.gradientCid = stringOrNull();
            } else if (key == "metadata") {
                once(Field::Metadata);
                objectMembers([&](std::string_view k) {
                    std::string metaKey(k);
                    node.metadata.insert_or_assign(std::move(metaKey), string());
                });
            } else {
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

// The fast path; false when the text needs the full reader.
bool fastParse(std::string_view text, bool graphOnly, GradientCheckpoint& out) {
    GradientCheckpoint result;
    try {
        FastReader reader(text, result);
        if (graphOnly)
            reader.readGraphOnly();
        else
            reader.readCheckpoint();
    } catch (const Bail&) {
        return false;
    }
    out = std::move(result);
    return true;
}

void parse(std::string_view text, const std::string& name, bool graphOnly,
           GradientCheckpoint& out) {
    if (text.starts_with("\xEF\xBB\xBF"))
        text.remove_prefix(3);
    if (fastParse(text, graphOnly, out))
        return;
    const char* cursor = text.data();
    Handler handler(text, name, cursor, graphOnly, out);
    const TrackingIterator first(text.data(), &cursor);
    const TrackingIterator last(text.data() + text.size(), &cursor);
    // Every failure throws from the handler; false would be a handler bug.
    if (!Json::sax_parse(first, last, &handler))
        throw GradientError(GradientError::Kind::Parse, name + ": not a gradient checkpoint");
}

} // namespace

GradientCheckpoint readCheckpoint(std::string_view text, const std::string& name) {
    GradientCheckpoint out;
    parse(text, name, false, out);
    return out;
}

ComputationGraphStore readGraph(std::string_view text, const std::string& name) {
    GradientCheckpoint out;
    parse(text, name, true, out);
    return std::move(out.graph);
}

} // namespace gradientjson
} // namespace ckptscope
