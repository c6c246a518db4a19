#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ckptscope {

class JsonStreamWriter;

// What one value of an object tree is: the values a checkpoint's metadata
// can hold when it is a tree (a PyTorch pickle's object, a DCP folder's
// plan). A flat key/value list is its one-level case.
enum class ObjectKind : uint8_t {
    None,
    Bool,
    Int,    // fits in int64
    BigInt, // any size: `text` holds its decimal digits (Python ints)
    Float,  // NaN and ±Inf kept
    String, // UTF-8
    Bytes,  // raw
    List,
    Tuple,
    Set,
    FrozenSet,
    Dict,   // keys of any kind (objects too), in file order
    Tensor, // a tensor of the index: `tensor`
    Global, // a bare module.name (a dtype, a class), never called
    Object, // a call of the global `text` with `items` as arguments
    Call,   // a call of what `callee` gave (getattr(…)(…)), `items` as arguments
};

inline constexpr uint32_t kNoNode = UINT32_MAX;

// A node's children: node numbers, up to two kept in place (most of a
// pickle's tuples: a stride, a shape, a storage's key; an optimizer's state
// makes millions), more in a heap block. 16 bytes; a vector's reading and
// appending, and spans of it.
class ObjectItems {
public:
    ObjectItems() = default;
    ObjectItems(std::initializer_list<uint32_t> items) { append({items.begin(), items.size()}); }
    ObjectItems(const std::vector<uint32_t>& items) { append(items); }
    ObjectItems(const ObjectItems& o) { append(o); }
    ObjectItems(ObjectItems&& o) noexcept { take(o); }
    ObjectItems& operator=(const ObjectItems& o) {
        if (this != &o)
            assign(o);
        return *this;
    }
    ObjectItems& operator=(ObjectItems&& o) noexcept {
        if (this != &o) {
            release();
            take(o);
        }
        return *this;
    }
    ~ObjectItems() { release(); }

    size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    const uint32_t* data() const { return m_capacity > kInline ? m_heap : m_inline; }
    uint32_t* data() { return m_capacity > kInline ? m_heap : m_inline; }
    const uint32_t* begin() const { return data(); }
    const uint32_t* end() const { return data() + m_size; }
    uint32_t* begin() { return data(); }
    uint32_t* end() { return data() + m_size; }
    const uint32_t& operator[](size_t i) const { return data()[i]; }
    uint32_t& operator[](size_t i) { return data()[i]; }
    const uint32_t& at(size_t i) const;
    operator std::span<const uint32_t>() const { return {data(), m_size}; }
    operator std::vector<uint32_t>() const { return {begin(), end()}; }
    bool operator==(const ObjectItems& o) const;

    void push_back(uint32_t v) { append({&v, 1}); }
    void append(std::span<const uint32_t> items);
    void assign(std::span<const uint32_t> items) {
        m_size = 0; // `items` is not a view of these items
        append(items);
    }
    void clear() { m_size = 0; }

private:
    static constexpr uint32_t kInline = 2;
    void release() {
        if (m_capacity > kInline)
            delete[] m_heap;
        m_capacity = kInline;
        m_size = 0;
    }
    void take(ObjectItems& o) {
        m_size = o.m_size;
        m_capacity = o.m_capacity;
        if (o.m_capacity > kInline) {
            m_heap = o.m_heap;
        } else { // member by member: each assignment makes m_inline the active member
            m_inline[0] = o.m_inline[0];
            m_inline[1] = o.m_inline[1];
        }
        o.m_size = 0;
        o.m_capacity = kInline;
    }
    uint32_t m_size = 0, m_capacity = kInline;
    union {
        uint32_t m_inline[kInline] = {};
        uint32_t* m_heap;
    };
};

// One value. Children are node numbers in the same tree, so an object
// reached by two paths (a pickle's memo) is one node with two parents, and
// a cycle is a path back to a node above.
struct ObjectNode {
    ObjectKind kind = ObjectKind::None;
    uint32_t tensor = kNoNode; // Tensor: FormatIndex::tensors
    int64_t integer = 0;       // Int; Bool as 0/1
    double real = 0;           // Float
    std::string text;          // String, Bytes, BigInt (decimal), Global and Object (module.name)
    // List, Tuple, Set, FrozenSet: the items; Dict: key, value, key, value…;
    // Object, Call: the arguments.
    ObjectItems items;
    uint32_t callee = kNoNode; // Call: the node whose result is called
    // Object: what BUILD gave it, and APPENDS / SETITEMS made on it (a List
    // node, a Dict node).
    uint32_t state = kNoNode;
    uint32_t listItems = kNoNode;
    uint32_t dictItems = kNoNode;
};

// A tree of values kept as one array of nodes; `root` is kNoNode when the
// index has no tree.
struct ObjectTree {
    std::vector<ObjectNode> nodes;
    uint32_t root = kNoNode;

    bool empty() const { return root == kNoNode; }
    const ObjectNode& at(uint32_t node) const { return nodes.at(node); }
    uint32_t add(ObjectNode node) {
        nodes.push_back(std::move(node));
        return uint32_t(nodes.size() - 1);
    }
    // Dict only: the value under the string key, else kNoNode.
    uint32_t find(uint32_t dict, std::string_view key) const;
};

// The sizes a torch.Size((…)), a tuple or a list of ints holds; nullopt for
// anything else (a negative size too).
std::optional<std::vector<uint64_t>> objectSizes(const ObjectTree& tree, uint32_t node);

// Copies every node of `from` after those of `to` (their links moved with
// them); returns the node `from.root` became, kNoNode for an empty tree.
uint32_t appendTree(ObjectTree& to, const ObjectTree& from);

// Python's str() of a key: 0 → "0", None → "None", True → "True", a
// string as it is, a tuple as "(1, 'a')"; the text a tensor's name and a
// path are made of. Objects as "module.name(…)".
std::string objectKeyText(const ObjectTree& tree, uint32_t node);
// Python's type name of a key that is not a str ("int", "bool", "None",
// "float", "tuple", "bytes", an object's class), for key_types.
std::string objectKeyType(const ObjectTree& tree, uint32_t node);

// Writes the tree as JSON, as the PyTorch corpus renders `objects`: None →
// null, bools, ints (outside int64 {"int": "…"}), floats (NaN, ±Inf as
// "nan", "inf", "-inf"), strings, {"bytes_hex"}, lists, {"tuple"}, {"set"},
// {"frozenset"}, a dict as an object keyed by str(key) — {"dict", "key_types"}
// when a key is not a str —, {"tensor": NAME}, {"global"}, {"object", "args",
// "state", "listitems", "dictitems"}, {"call", "args"}. A shared node is
// written in full at each place while the output stays within `nodeBudget`
// nodes (a text over 1 KiB counts 64 bytes a node and is shared the same
// way); past that, and always for a cycle, a later place is written
// {"ref": PATH} (the keys to its first place joined by '.'). A value more
// than 1000 levels down (only a cycle's shared values lead there: a deeper
// tree is refused at open) is written {"too_deep": true}.
// Returns true when a reference was written (the caller warns "shared
// references"). `from` writes the subtree of that node instead (a GUI's
// copy of one value; its paths start there).
bool writeObjectJson(JsonStreamWriter& json, const ObjectTree& tree,
                     const std::vector<std::string>& tensorNames, uint64_t nodeBudget = 1000000,
                     uint32_t from = kNoNode);

} // namespace ckptscope
