// The full reader: nlohmann's SAX parser driving a handler that checks the
// schema as values arrive and builds the checkpoint without a DOM. It alone
// produces every error message, with the file, line and column.
#include "formats/gradient/gradientjsonreader.h"
#include "formats/gradient/gradientjsonschema.h"
#include "formats/gradient/gradientjsontext.h"
#include "formats/gradient/gradientjsonwriter.h"

#include <nlohmann/json.hpp>

#include <iterator>
#include <optional>
#include <utility>

namespace ckptscope::gradientjson {

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

bool allDigits(std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
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
        return unexpected(value ? Token::True : Token::False,
                          [value] { return std::string(value ? "true" : "false"); });
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
        return unexpected(Token::Number, [value] { return "integer " + std::to_string(value); });
    }

    // Fractions, exponents, and integers beyond 64 bits.
    bool number_float(Json::number_float_t, const std::string& raw) {
        return unexpected(Token::Number, [&raw] {
            return allDigits(raw) ? "integer " + raw + ", which does not fit in 64 bits"
                                  : "number " + raw;
        });
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

    bool start_object(std::size_t) { return startContainer(false); }
    bool start_array(std::size_t) { return startContainer(true); }

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

    // The parser pairs brackets itself, so the two ends close alike.
    bool end_object() { return endContainer(); }
    bool end_array() { return endContainer(); }

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

    // A scalar that no slot takes: passed over where ignored, else a type
    // error saying what was found (built only then).
    template <typename Found> bool unexpected(Token token, Found found) {
        if (m_skip)
            return true;
        const Slot s = beginValue(token);
        if (s != Slot::Ignore)
            typeError(s, found(), token);
        endValue();
        return true;
    }

    // Objects and arrays open alike; the slot says which container it takes.
    bool startContainer(bool array) {
        enterContainer();
        if (m_skip) {
            ++m_skip;
            return true;
        }
        const Slot s = beginValue(Token::Bracket);
        if (s == Slot::Ignore) {
            m_skip = 1;
            return true;
        }
        const std::optional<Frame> frame = containerFrame(s);
        if (!frame || isArray(*frame) != array)
            typeError(s, array ? "an array" : "an object", Token::Bracket);
        open(*frame);
        return true;
    }

    // The container a slot holds, or none for a scalar's slot.
    std::optional<Frame> containerFrame(Slot s) const {
        switch (s) {
        case Slot::Root:
            return m_graphOnly ? Frame::Graph : Frame::Top;
        case Slot::GraphObject:
            return Frame::Graph;
        case Slot::NodesObject:
            return Frame::Nodes;
        case Slot::NodeObject:
            return Frame::Node;
        case Slot::MetadataObject:
            return Frame::Metadata;
        case Slot::OptimizerObject:
            return Frame::Optimizer;
        case Slot::EdgesArray:
            return Frame::Edges;
        case Slot::InputCidsArray:
            return Frame::InputCids;
        case Slot::EdgeArray:
            return Frame::Edge;
        case Slot::BlobArray:
            return Frame::Bytes;
        default:
            return std::nullopt;
        }
    }

    static bool isArray(Frame frame) {
        return frame == Frame::Edges || frame == Frame::InputCids || frame == Frame::Edge ||
               frame == Frame::Bytes;
    }

    // Enters a container; one that builds a value starts it afresh.
    void open(Frame frame) {
        if (frame == Frame::Node)
            m_node = ComputationNode();
        else if (frame == Frame::Edge)
            m_edge = Edge();
        else if (frame == Frame::Bytes)
            m_blob = std::vector<uint8_t>();
        m_stack.push_back({frame, 0, 0});
    }

    bool endContainer() {
        if (m_skip) {
            if (--m_skip == 0)
                endValue();
            return true;
        }
        close(m_stack.back());
        m_stack.pop_back();
        endValue();
        return true;
    }

    // Checks a finished container and hands on what it built.
    void close(const Level& top) {
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
        case Frame::Edge:
            if (top.count != 2)
                fail(Token::Bracket, edgeName() + " must be a [producer, consumer] pair, found " +
                                         std::to_string(top.count) +
                                         (top.count == 1 ? " element" : " elements"));
            detail::GraphAccess::edges(m_out.graph).push_back(std::move(m_edge));
            break;
        case Frame::Bytes:
            m_out.optimizerState.insert_or_assign(std::move(m_blobName), std::move(m_blob));
            break;
        default:
            break;
        }
    }

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

    size_t tokenStart(Token token) const {
        return gradientjson::tokenStart(m_text, size_t(m_cursor - m_text.data()), token);
    }
    std::string where(size_t offset) const { return position(m_name, m_text, offset); }

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

} // namespace

GradientCheckpoint readSax(std::string_view text, const std::string& name, bool graphOnly) {
    GradientCheckpoint out;
    const char* cursor = text.data();
    Handler handler(text, name, cursor, graphOnly, out);
    const TrackingIterator first(text.data(), &cursor);
    const TrackingIterator last(text.data() + text.size(), &cursor);
    // Every failure throws from the handler; false would be a handler bug.
    if (!Json::sax_parse(first, last, &handler))
        throw GradientError(GradientError::Kind::Parse, name + ": not a gradient checkpoint");
    return out;
}

} // namespace ckptscope::gradientjson
