#include "ckptscope/formats/objecttree.h"

#include "ckptscope/formats/objectchildren.h"
#include "formats/objectfields.h"
#include "formats/objectsize.h"

#include "ckptscope/common/jsonstreamwriter.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>

namespace ckptscope {

namespace {

// Python's repr of a float: the shortest digits that read back, in
// positional notation for exponents -4 … 15, else d.ddde±XX.
std::string floatRepr(double v) {
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v < 0 ? "-inf" : "inf";
    char buf[64];
    const auto end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific).ptr;
    const std::string sci(buf, end);
    const size_t e = sci.find('e');
    const int exponent = std::stoi(sci.substr(e + 1));
    if (exponent < -4 || exponent >= 16) {
        const std::string mantissa = sci.substr(0, e);
        char exp[16];
        std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
        return mantissa + exp;
    }
    const auto fixed = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed).ptr;
    std::string text(buf, fixed);
    if (text.find('.') == std::string::npos)
        text += ".0";
    return text;
}

// Python's repr of a str: single quotes unless the text holds one and no
// double quote; backslash escapes for the quote, backslash and controls.
std::string stringRepr(const std::string& s) {
    const char quote =
        s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
    std::string out(1, quote);
    for (unsigned char c : s) {
        if (c == quote || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c < 0x20 || c == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        } else {
            out += char(c);
        }
    }
    return out + quote;
}

std::string bytesRepr(const std::string& s) {
    std::string out = "b'";
    for (unsigned char c : s) {
        if (c == '\'' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c >= 0x20 && c < 0x7f) {
            out += char(c);
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        }
    }
    return out + "'";
}

// Python's repr, for keys that are containers or objects ("(1, 'a')"),
// written into one string within a budget: a key built of shared values (a
// tuple holding another twice, 64 levels down) would be 2^64 parts long.
// Past 64 KiB, or 64 levels, the rest is "...". Each part writes at least
// one character, so the budget bounds the time too.
class KeyRepr {
public:
    explicit KeyRepr(const ObjectTree& tree) : m_tree(tree) {}
    std::string text(uint32_t node) {
        write(node, 0);
        return std::move(m_out);
    }

private:
    static constexpr size_t kMaxChars = size_t(64) << 10;
    bool full() const { return m_out.size() > kMaxChars; }
    void joined(std::span<const uint32_t> items, int depth, bool pairs = false) {
        for (size_t i = 0; i < items.size(); ++i) {
            if (i > 0)
                m_out += pairs && i % 2 == 1 ? ": " : ", ";
            if (full()) {
                m_out += "...";
                return;
            }
            write(items[i], depth + 1);
        }
    }
    void write(uint32_t node, int depth) {
        if (depth > 64 || full()) {
            m_out += "...";
            return;
        }
        const ObjectNode& n = m_tree.at(node);
        switch (n.kind) {
        case ObjectKind::String:
            m_out += stringRepr(n.text);
            return;
        case ObjectKind::Tuple:
            m_out += '(';
            joined(n.items, depth);
            m_out += n.items.size() == 1 ? ",)" : ")";
            return;
        case ObjectKind::List:
            m_out += '[';
            joined(n.items, depth);
            m_out += ']';
            return;
        case ObjectKind::Set:
        case ObjectKind::FrozenSet: {
            const bool frozen = n.kind == ObjectKind::FrozenSet;
            if (n.items.empty()) {
                m_out += frozen ? "frozenset()" : "set()";
                return;
            }
            m_out += frozen ? "frozenset({" : "{";
            joined(n.items, depth);
            m_out += frozen ? "})" : "}";
            return;
        }
        case ObjectKind::Dict:
            m_out += '{';
            joined(n.items, depth, true);
            m_out += '}';
            return;
        case ObjectKind::Object:
            m_out += n.text;
            m_out += '(';
            joined(n.items, depth);
            m_out += ')';
            return;
        case ObjectKind::Call:
            write(n.callee, depth + 1);
            m_out += '(';
            joined(n.items, depth);
            m_out += ')';
            return;
        default:
            m_out += objectKeyText(m_tree, node);
            return;
        }
    }

    const ObjectTree& m_tree;
    std::string m_out;
};

// Per-node values of one walk: a vector over the whole tree for a walk of
// the root (it visits most nodes), a hash map for a walk of one value (an
// import's argument: a pickle of a million calls must not clear a vector of
// the whole tree a million times).
template <typename T> class NodeMap {
public:
    NodeMap(size_t nodes, bool dense) : m_dense(dense) {
        if (dense)
            m_vector.assign(nodes, T{});
    }
    T get(uint32_t node) const {
        if (m_dense)
            return m_vector[node];
        const auto it = m_map.find(node);
        return it == m_map.end() ? T{} : it->second;
    }
    void set(uint32_t node, T value) {
        if (m_dense)
            m_vector[node] = value;
        else
            m_map[node] = value;
    }

private:
    bool m_dense;
    std::vector<T> m_vector;
    std::unordered_map<uint32_t, T> m_map;
};

// Writes the JSON of `objects` (see writeObjectJson).
class ObjectJson {
public:
    ObjectJson(JsonStreamWriter& json, const ObjectTree& tree,
               const std::vector<std::string>& tensorNames, bool expandShared, uint64_t budget,
               bool dense)
        : m_json(json), m_tree(tree), m_names(tensorNames), m_expandShared(expandShared),
          m_budget(budget), m_marks(tree.nodes.size(), dense) {}

    // Writes `node` at the path m_path holds.
    void write(uint32_t node) {
        const ObjectNode& n = m_tree.at(node);
        const uint8_t marks = m_marks.get(node);
        // A long text is referred to as a value with children is: one 1 MB
        // string at 250 000 places would otherwise be written 250 000 times.
        const bool longText = (n.kind == ObjectKind::String || n.kind == ObjectKind::Bytes ||
                               n.kind == ObjectKind::BigInt) &&
                              n.text.size() > kLongText;
        const bool children = objectHasChildren(n);
        if (children || longText) {
            // Shared values are written out while the output stays within the
            // budget, counted as written (a long text's bytes too, 64 to a
            // node): the count made before writing (objectExpandedSize) can
            // fall short when shared values and a cycle meet.
            if ((marks & kOnPath) ||
                ((marks & kWritten) && (!m_expandShared || m_nodes > m_budget))) {
                single("ref", m_firstPath.at(node));
                m_refs = true;
                return;
            }
            // Deeper than a tree may nest: reached only through a cycle's
            // shared values (a deeper tree is refused at open).
            if (children && m_depth >= kMaxObjectDepth) {
                m_json.beginObject(JsonStreamWriter::Layout::Inline);
                m_json.key("too_deep");
                m_json.value(true);
                m_json.endObject();
                m_refs = true;
                return;
            }
            if (!(marks & kWritten))
                m_firstPath.emplace(node, m_path);
            m_marks.set(node, kWritten | kOnPath);
        }
        m_nodes += 1 + (longText ? n.text.size() / 64 : 0);
        ++m_depth;
        writeNode(n);
        --m_depth;
        if (children || longText)
            m_marks.set(node, kWritten);
    }

    bool wroteReferences() const { return m_refs; }

private:
    // Writes `node` at the path m_path holds with `key` added, as objectPath
    // joins them. One buffer for the whole walk: a path is copied only for a
    // value that has children (a later place may refer to it).
    void writeAt(std::string_view key, uint32_t node) {
        const size_t size = enter(key);
        write(node);
        m_path.resize(size);
    }
    // Adds `key` to m_path; returns the length to cut it back to.
    size_t enter(std::string_view key) {
        const size_t size = m_path.size();
        if (!m_path.empty())
            m_path += '.';
        m_path += key;
        return size;
    }

    void writeItems(std::span<const uint32_t> items) {
        m_json.beginArray();
        char digits[24];
        for (size_t i = 0; i < items.size(); ++i) {
            const auto r = std::to_chars(digits, digits + sizeof digits, i);
            writeAt(std::string_view(digits, size_t(r.ptr - digits)), items[i]);
        }
        m_json.endArray();
    }

    void tagged(const char* tag, std::span<const uint32_t> items) {
        m_json.beginObject();
        m_json.key(tag);
        writeItems(items);
        m_json.endObject();
    }

    void writeDict(const ObjectNode& n) {
        bool plain = true;
        for (size_t i = 0; i < n.items.size(); i += 2)
            plain = plain && m_tree.at(n.items[i]).kind == ObjectKind::String;
        if (!plain) {
            m_json.beginObject();
            m_json.key("dict");
        }
        m_json.beginObject();
        for (size_t i = 0; i + 1 < n.items.size(); i += 2) {
            const ObjectNode& k = m_tree.at(n.items[i]);
            if (k.kind == ObjectKind::String) { // the text itself, not a copy
                m_json.key(k.text);
                writeAt(k.text, n.items[i + 1]);
                continue;
            }
            const std::string key = objectKeyText(m_tree, n.items[i]);
            m_json.key(key);
            writeAt(key, n.items[i + 1]);
        }
        m_json.endObject();
        if (!plain) {
            m_json.key("key_types");
            m_json.beginObject();
            for (size_t i = 0; i + 1 < n.items.size(); i += 2)
                if (m_tree.at(n.items[i]).kind != ObjectKind::String) {
                    m_json.key(objectKeyText(m_tree, n.items[i]));
                    m_json.value(objectKeyType(m_tree, n.items[i]));
                }
            m_json.endObject();
            m_json.endObject();
        }
    }

    void writeObject(const ObjectNode& n) {
        m_json.beginObject();
        if (n.kind == ObjectKind::Call) {
            m_json.key("call");
            writeAt("call", n.callee);
        } else {
            m_json.key("object");
            m_json.value(n.text);
        }
        m_json.key("args");
        const size_t size = enter("args");
        writeItems(n.items);
        m_path.resize(size);
        const std::pair<const char*, uint32_t> parts[] = {
            {"state", n.state}, {"listitems", n.listItems}, {"dictitems", n.dictItems}};
        for (const auto& [name, node] : parts)
            if (node != kNoNode) {
                m_json.key(name);
                writeAt(name, node);
            }
        m_json.endObject();
    }

    void single(const char* tag, const std::string& text) {
        m_json.beginObject(JsonStreamWriter::Layout::Inline);
        m_json.key(tag);
        m_json.value(text);
        m_json.endObject();
    }

    void writeNode(const ObjectNode& n) {
        switch (n.kind) {
        case ObjectKind::None:
            m_json.null();
            break;
        case ObjectKind::Bool:
            m_json.value(n.integer != 0);
            break;
        case ObjectKind::Int:
            m_json.value(n.integer);
            break;
        case ObjectKind::BigInt:
            single("int", n.text);
            break;
        case ObjectKind::Float:
            if (std::isfinite(n.real))
                m_json.floatNumber(n.real); // 1.0 stays a float, -0.0 keeps its sign
            else
                m_json.value(floatRepr(n.real));
            break;
        case ObjectKind::String:
            m_json.value(n.text);
            break;
        case ObjectKind::Bytes: {
            static const char* hex = "0123456789abcdef";
            std::string h;
            for (unsigned char c : n.text) {
                h += hex[c >> 4];
                h += hex[c & 15];
            }
            single("bytes_hex", h);
            break;
        }
        case ObjectKind::List:
            writeItems(n.items);
            break;
        case ObjectKind::Tuple:
            tagged("tuple", n.items);
            break;
        case ObjectKind::Set:
            tagged("set", n.items);
            break;
        case ObjectKind::FrozenSet:
            tagged("frozenset", n.items);
            break;
        case ObjectKind::Dict:
            writeDict(n);
            break;
        case ObjectKind::Tensor:
            single("tensor", n.tensor < m_names.size() ? m_names[n.tensor] : std::string());
            break;
        case ObjectKind::Global:
            single("global", n.text);
            break;
        case ObjectKind::Object:
        case ObjectKind::Call:
            writeObject(n);
            break;
        }
    }

    static constexpr uint8_t kWritten = 1, kOnPath = 2;
    static constexpr size_t kLongText = 1024;
    JsonStreamWriter& m_json;
    const ObjectTree& m_tree;
    const std::vector<std::string>& m_names;
    bool m_expandShared;
    uint64_t m_budget, m_nodes = 0;
    uint32_t m_depth = 0;
    std::string m_path;                                    // where write() is
    std::unordered_map<uint32_t, std::string> m_firstPath; // of each value with children written
    NodeMap<uint8_t> m_marks;
    bool m_refs = false;
};

// Nodes the tree has when every shared node is written out at each place
// (cycles counted once), saturating just past `limit`; past
// kMaxObjectDepth levels (only a cycle leads there) past `limit` too.
uint64_t expandedSize(const ObjectTree& tree, uint32_t node, uint64_t limit,
                      NodeMap<uint64_t>& memo, NodeMap<uint8_t>& onPath, uint32_t depth) {
    if (const uint64_t known = memo.get(node); known != 0)
        return known;
    if (onPath.get(node))
        return 1;
    if (depth >= kMaxObjectDepth)
        return limit + 1;
    onPath.set(node, 1);
    const ObjectNode& n = tree.at(node);
    uint64_t size = 1;
    const auto add = [&](uint32_t c) {
        if (c != kNoNode && size <= limit)
            size += expandedSize(tree, c, limit, memo, onPath, depth + 1);
    };
    for (uint32_t c : n.items)
        add(c);
    for (uint32_t c : {n.callee, n.state, n.listItems, n.dictItems})
        add(c);
    onPath.set(node, 0);
    memo.set(node, std::min(size, limit + 1));
    return memo.get(node);
}

} // namespace

uint64_t objectExpandedSize(const ObjectTree& tree, uint32_t root, uint64_t limit) {
    if (root == kNoNode)
        return 0;
    NodeMap<uint64_t> memo(tree.nodes.size(), true);
    NodeMap<uint8_t> onPath(tree.nodes.size(), true);
    return expandedSize(tree, root, limit, memo, onPath, 0);
}

uint64_t objectPathBytes(const ObjectTree& tree, uint32_t root, uint64_t limit) {
    std::vector<uint64_t> length(tree.nodes.size(), 0); // of each first place's path
    uint64_t total = 0;
    forEachFirstPlace(tree, root, [&](uint32_t node, uint32_t parent, const std::string& part) {
        if (parent != kNoNode)
            length[node] = length[parent] + (length[parent] > 0) + part.size();
        total += length[node];
        return total <= limit;
    });
    return total;
}

uint32_t ObjectTree::find(uint32_t dict, std::string_view key) const {
    return ObjectFields<ObjectTree>{*this}.find(dict, key);
}

std::optional<std::vector<uint64_t>> objectSizes(const ObjectTree& tree, uint32_t node) {
    return ObjectFields<ObjectTree>{tree}.sizes(node);
}

const uint32_t& ObjectItems::at(size_t i) const {
    if (i >= m_size)
        throw std::out_of_range("ObjectItems::at: " + std::to_string(i) + " of " +
                                std::to_string(m_size));
    return data()[i];
}

bool ObjectItems::operator==(const ObjectItems& o) const {
    return std::equal(begin(), end(), o.begin(), o.end());
}

void ObjectItems::append(std::span<const uint32_t> items) {
    const size_t n = items.size();
    if (m_size + n <= m_capacity) {
        std::copy(items.begin(), items.end(), data() + m_size);
        m_size += uint32_t(n);
        return;
    }
    if (m_size + n > UINT32_MAX)
        throw std::length_error("ObjectItems: more than 2^32 items");
    const size_t capacity =
        std::max<size_t>(m_size + n, std::min<size_t>(2 * size_t(m_capacity), UINT32_MAX));
    auto* heap = new uint32_t[capacity];
    std::copy(begin(), end(), heap);
    // From where they are, before the old block goes: `items` may view it.
    std::copy(items.begin(), items.end(), heap + m_size);
    const uint32_t size = m_size + uint32_t(n);
    release();
    m_heap = heap;
    m_capacity = uint32_t(capacity);
    m_size = size;
}

uint32_t appendTree(ObjectTree& to, const ObjectTree& from) {
    if (from.empty())
        return kNoNode;
    const uint32_t base = uint32_t(to.nodes.size());
    const auto moved = [base](uint32_t n) { return n == kNoNode ? kNoNode : n + base; };
    to.nodes.reserve(to.nodes.size() + from.nodes.size());
    for (ObjectNode n : from.nodes) {
        for (uint32_t& i : n.items)
            i = moved(i);
        n.callee = moved(n.callee);
        n.state = moved(n.state);
        n.listItems = moved(n.listItems);
        n.dictItems = moved(n.dictItems);
        to.nodes.push_back(std::move(n));
    }
    return from.root + base;
}

std::string objectKeyText(const ObjectTree& tree, uint32_t node) {
    const ObjectNode& n = tree.at(node);
    switch (n.kind) {
    case ObjectKind::None:
        return "None";
    case ObjectKind::Bool:
        return n.integer ? "True" : "False";
    case ObjectKind::Int:
        return std::to_string(n.integer);
    case ObjectKind::BigInt:
    case ObjectKind::String:
    case ObjectKind::Global:
        return n.text;
    case ObjectKind::Float:
        return floatRepr(n.real);
    case ObjectKind::Bytes:
        return bytesRepr(n.text);
    case ObjectKind::Tensor:
        return "tensor";
    default:
        return KeyRepr(tree).text(node);
    }
}

std::string objectKeyType(const ObjectTree& tree, uint32_t node) {
    const ObjectNode& n = tree.at(node);
    switch (n.kind) {
    case ObjectKind::None:
        return "None";
    case ObjectKind::Bool:
        return "bool";
    case ObjectKind::Int:
    case ObjectKind::BigInt:
        return "int";
    case ObjectKind::Float:
        return "float";
    case ObjectKind::String:
        return "str";
    case ObjectKind::Bytes:
        return "bytes";
    case ObjectKind::List:
        return "list";
    case ObjectKind::Tuple:
        return "tuple";
    case ObjectKind::Set:
        return "set";
    case ObjectKind::FrozenSet:
        return "frozenset";
    case ObjectKind::Dict:
        return "dict";
    case ObjectKind::Tensor:
        return "Tensor";
    case ObjectKind::Global:
        return "type";
    case ObjectKind::Object:
        return n.text.substr(n.text.rfind('.') + 1);
    case ObjectKind::Call:
        return "object";
    }
    return "object";
}

bool writeObjectJson(JsonStreamWriter& json, const ObjectTree& tree,
                     const std::vector<std::string>& tensorNames, uint64_t nodeBudget,
                     uint32_t from) {
    const uint32_t root = from == kNoNode ? tree.root : from;
    if (root >= tree.nodes.size()) {
        json.null();
        return false;
    }
    const bool dense = root == tree.root;
    NodeMap<uint64_t> memo(tree.nodes.size(), dense);
    NodeMap<uint8_t> onPath(tree.nodes.size(), dense);
    const bool expand = expandedSize(tree, root, nodeBudget, memo, onPath, 0) <= nodeBudget;
    ObjectJson writer(json, tree, tensorNames, expand, nodeBudget, dense);
    writer.write(root);
    return writer.wroteReferences();
}

bool objectHasChildren(const ObjectNode& n) {
    return !n.items.empty() || n.state != kNoNode || n.listItems != kNoNode ||
           n.dictItems != kNoNode || n.callee != kNoNode;
}

void forEachFirstPlace(
    const ObjectTree& tree, uint32_t root,
    const std::function<bool(uint32_t node, uint32_t parent, const std::string& part)>& visit) {
    if (root >= tree.nodes.size())
        return;
    std::vector<bool> seen(tree.nodes.size(), false);
    struct Link {
        uint32_t node, parent;
        std::string part;
    };
    std::vector<Link> stack{{root, kNoNode, {}}};
    while (!stack.empty()) {
        Link link = std::move(stack.back());
        stack.pop_back();
        if (seen[link.node] || !objectHasChildren(tree.at(link.node)))
            continue;
        seen[link.node] = true;
        if (!visit(link.node, link.parent, link.part))
            return;
        std::vector<ObjectChild> children = objectChildren(tree, link.node);
        for (auto it = children.rbegin(); it != children.rend(); ++it)
            if (!seen[it->node] && objectHasChildren(tree.at(it->node)))
                stack.push_back({it->node, link.node, std::move(it->part)});
    }
}

std::string objectPath(const std::string& path, const std::string& part) {
    return path.empty() ? part : path + "." + part;
}

std::vector<ObjectChild> objectChildren(const ObjectTree& tree, uint32_t node) {
    const ObjectNode& n = tree.at(node);
    std::vector<ObjectChild> out;
    if (n.kind == ObjectKind::Dict) {
        for (size_t i = 0; i + 1 < n.items.size(); i += 2)
            out.push_back({objectKeyText(tree, n.items[i]), n.items[i + 1]});
        return out;
    }
    const bool call = n.kind == ObjectKind::Object || n.kind == ObjectKind::Call;
    if (n.callee != kNoNode)
        out.push_back({"call", n.callee});
    for (size_t i = 0; i < n.items.size(); ++i)
        out.push_back({(call ? "args." : "") + std::to_string(i), n.items[i]});
    for (const auto& [part, child] : {std::pair<const char*, uint32_t>{"state", n.state},
                                      {"listitems", n.listItems},
                                      {"dictitems", n.dictItems}})
        if (child != kNoNode)
            out.push_back({part, child});
    return out;
}

} // namespace ckptscope
