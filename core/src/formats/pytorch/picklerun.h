#pragma once

// The pickle machine's evaluation loop (TorchUnpickler::Run), apart from
// the data globals it understands (torchunpickler.cpp).

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/oxck/metadatacodec.h"

#include "formats/pytorch/pickletext.h"
#include "formats/pytorch/torchunpickler.h"

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ckptscope::pytorch {

// One evaluation: the byte cursor, the stack, the marks and the memo.
class TorchUnpickler::Run {
public:
    Run(TorchUnpickler& owner, std::string_view data, uint64_t offset)
        : u(owner), d(data), base(offset) {}

    uint32_t go(uint64_t* consumed);

private:
    // The opcodes by kind; each returns false for an opcode not its own.
    bool numbers(uint8_t code);
    bool strings(uint8_t code);
    bool containers(uint8_t code);
    bool stackAndMemo(uint8_t code);
    bool calls(uint8_t code);
    [[noreturn]] void unknown(uint8_t code) const;

    [[noreturn]] void fail(CheckpointError::Kind kind, const std::string& what, uint64_t at) const {
        throw CheckpointError(kind, u.m_where + ": byte " + std::to_string(base + at) + ": " + what,
                              base + at);
    }
    [[noreturn, gnu::cold, gnu::noinline]] void truncated(uint64_t n, const char* what) const {
        fail(CheckpointError::Kind::Truncated,
             std::string("truncated pickle: ") + what + " of " + std::to_string(n) +
                 " bytes claimed, " + std::to_string(d.size() - p) + " left",
             op);
    }
    [[noreturn, gnu::cold, gnu::noinline]] void underflow() const {
        fail(CheckpointError::Kind::Invalid, "pickle stack underflow", op);
    }
    std::string_view take(uint64_t n, const char* what) {
        if (n > d.size() - p) [[unlikely]]
            truncated(n, what);
        const std::string_view s = d.substr(p, n);
        p += n;
        return s;
    }
    uint64_t le(int n, const char* what) {
        const std::string_view s = take(uint64_t(n), what);
        uint64_t v = 0;
        for (int i = n - 1; i >= 0; --i)
            v = v << 8 | uint8_t(s[size_t(i)]);
        return v;
    }
    std::string_view line(const char* what) {
        const size_t nl = d.find('\n', p);
        if (nl == std::string_view::npos)
            fail(CheckpointError::Kind::Truncated,
                 std::string("truncated pickle: ") + what + " without its newline", op);
        const std::string_view s = d.substr(p, nl - p);
        p = nl + 1;
        return s;
    }
    uint32_t pop() {
        if (stack.size() <= floor()) [[unlikely]]
            underflow();
        const uint32_t v = stack.back();
        stack.pop_back();
        return v;
    }
    uint32_t& top() {
        if (stack.size() <= floor()) [[unlikely]]
            underflow();
        return stack.back();
    }
    size_t floor() const { return marks.empty() ? 0 : marks.back(); }
    // The items since the last mark, read in place on the stack (no copy:
    // a DCP plan has a mark per dataclass) until dropMark() removes them.
    std::span<const uint32_t> sinceMark() const {
        if (marks.empty()) [[unlikely]]
            fail(CheckpointError::Kind::Invalid, "pickle mark missing", op);
        return std::span<const uint32_t>(stack).subspan(marks.back());
    }
    // Where the last mark stood, the mark taken away (its items stay).
    size_t takeMark() {
        if (marks.empty()) [[unlikely]]
            fail(CheckpointError::Kind::Invalid, "pickle mark missing", op);
        const size_t at = marks.back();
        marks.pop_back();
        return at;
    }
    void dropMark() { stack.resize(takeMark()); }
    // The value below the last mark, which APPENDS and SETITEMS add to.
    uint32_t belowMark() const {
        const size_t below = marks.size() > 1 ? marks[marks.size() - 2] : 0;
        if (marks.back() <= below) [[unlikely]]
            underflow();
        return stack[marks.back() - 1];
    }
    uint32_t push(ObjectNode n) {
        const uint32_t id = u.add(std::move(n));
        stack.push_back(id);
        return id;
    }
    ObjectNode& node(uint32_t id) { return u.m_tree.nodes[id]; }
    void pushInt(int64_t v) {
        if (v >= -5 && v <= 256) {
            stack.push_back(u.sharedValue(ObjectKind::Int, v));
            return;
        }
        ObjectNode n;
        n.kind = ObjectKind::Int;
        n.integer = v;
        push(std::move(n));
    }
    void pushLong(std::string_view bytes) {
        if (const std::optional<int64_t> v = pickleInt64(bytes)) {
            pushInt(*v);
            return;
        }
        pushText(ObjectKind::BigInt, pickleDecimal(bytes));
    }
    void pushText(ObjectKind kind, std::string text) {
        ObjectNode n;
        n.kind = kind;
        n.text = std::move(text);
        push(std::move(n));
    }
    void pushEmpty(ObjectKind kind) {
        ObjectNode n;
        n.kind = kind;
        push(std::move(n));
    }
    // The stack's items from `from` on as one container in their place.
    void pushFrom(ObjectKind kind, size_t from) {
        ObjectNode n;
        n.kind = kind;
        n.items.assign(std::span<const uint32_t>(stack).subspan(from));
        stack.resize(from);
        push(std::move(n));
    }
    // The items since the mark, the mark taken away.
    void pushMarked(ObjectKind kind) { pushFrom(kind, takeMark()); }
    void global(std::string name) { stack.push_back(u.addGlobal(std::move(name))); }
    // The items an APPENDS / SETITEMS adds to `target`: a list or dict, or an
    // object's listitems / dictitems. `items` is not a view of a node's items.
    void addItems(uint32_t target, std::span<const uint32_t> items, bool dict) {
        ObjectNode& t = node(target);
        if (dict && items.size() % 2 != 0)
            fail(CheckpointError::Kind::Invalid, "SETITEMS with a key and no value", op);
        if ((dict && t.kind == ObjectKind::Dict) ||
            (!dict && (t.kind == ObjectKind::List || t.kind == ObjectKind::Set ||
                       t.kind == ObjectKind::FrozenSet))) {
            t.items.append(items);
            for (uint32_t i : items)
                u.gained(target, i);
            return;
        }
        if (t.kind == ObjectKind::Object || t.kind == ObjectKind::Call) {
            uint32_t& part = dict ? t.dictItems : t.listItems;
            if (part == kNoNode) { // made with its first items, then attached
                ObjectNode c;
                c.kind = dict ? ObjectKind::Dict : ObjectKind::List;
                c.items.assign(items);
                const uint32_t id = u.add(std::move(c));
                node(target).*(dict ? &ObjectNode::dictItems : &ObjectNode::listItems) = id;
                u.gained(target, id);
                return;
            }
            const uint32_t id = part;
            node(id).items.append(items);
            for (uint32_t i : items)
                u.gained(id, i);
            return;
        }
        fail(CheckpointError::Kind::Invalid,
             std::string(dict ? "SETITEMS" : "APPENDS") + " on a value that holds no items", op);
    }
    std::string unquote(std::string_view s) {
        std::optional<std::string> text = unquotedString(s);
        if (!text)
            fail(CheckpointError::Kind::Invalid,
                 "STRING argument not in quotes, or with an \\x escape of no two hex digits", op);
        return std::move(*text);
    }
    // Python 2 str: text when it is UTF-8 (torch.load decodes it so), else
    // the bytes it is.
    void pushPy2String(std::string_view s) {
        pushText(isValidUtf8(s) ? ObjectKind::String : ObjectKind::Bytes, std::string(s));
    }
    // A str: UTF-8, as Python's unpickler requires.
    void pushUnicode(std::string_view s) {
        if (!isValidUtf8(s))
            fail(CheckpointError::Kind::Invalid, "a string that is not UTF-8", op);
        pushText(ObjectKind::String, std::string(s));
    }
    // The memo: a vector while its indexes are dense (Python numbers them
    // 0, 1, 2…), a map for the rest (a hostile LONG_BINPUT 4 000 000 000
    // allocates nothing).
    void memoPut(uint64_t key, uint32_t node) {
        if (key < denseMemo.size()) {
            denseMemo[key] = node;
        } else if (key == denseMemo.size()) {
            denseMemo.push_back(node);
        } else {
            memo[key] = node;
        }
    }
    uint32_t memoGet(uint64_t key) {
        if (key < denseMemo.size() && denseMemo[key] != kNoNode)
            return denseMemo[key];
        const auto it = memo.find(key);
        if (it == memo.end())
            fail(CheckpointError::Kind::Invalid,
                 "memo " + std::to_string(key) + " read before it is set", op);
        return it->second;
    }
    uint64_t memoSize() const { return denseMemo.size() + memo.size(); }

    TorchUnpickler& u;
    std::string_view d;
    uint64_t base;
    size_t p = 0, op = 0;
    std::vector<uint32_t> stack;
    std::vector<size_t> marks;
    std::unordered_map<uint64_t, uint32_t> memo;
    std::vector<uint32_t> denseMemo;
};

} // namespace ckptscope::pytorch
