#include "formats/pytorch/torchunpickler.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

namespace ckptscope::pytorch {

namespace {

// How an opcode's argument is laid out (pickletools' ArgumentDescriptor):
// no argument, a fixed number of bytes, a length of `width` bytes and that
// many bytes, or lines of text. Opcodes the walk reads itself are absent.
struct Argument {
    enum Kind : uint8_t { None, Fixed, Counted, Line } kind;
    uint8_t width;
};

Argument argumentOf(uint8_t code) {
    switch (code) {
    case 0x80: // PROTO
    case 'K':  // BININT1
    case 0x82: // EXT1
        return {Argument::Fixed, 1};
    case 'M':  // BININT2
    case 0x83: // EXT2
        return {Argument::Fixed, 2};
    case 'J':  // BININT
    case 0x84: // EXT4
        return {Argument::Fixed, 4};
    case 0x95: // FRAME
    case 'G':  // BINFLOAT
        return {Argument::Fixed, 8};
    case 0x8a: // LONG1
    case 'U':  // SHORT_BINSTRING
    case 'C':  // SHORT_BINBYTES
        return {Argument::Counted, 1};
    case 0x8b: // LONG4
    case 'T':  // BINSTRING
    case 'B':  // BINBYTES
        return {Argument::Counted, 4};
    case 0x8e: // BINBYTES8
    case 0x96: // BYTEARRAY8
        return {Argument::Counted, 8};
    case 'I': // INT
    case 'L': // LONG
    case 'F': // FLOAT
    case 'P': // PERSID
        return {Argument::Line, 1};
    default: // no argument, or no opcode (the damage itself): on to the next byte
        return {Argument::None, 0};
    }
}

// The walk of globalsByOpcodes: the strings pushed lately (for
// STACK_GLOBAL) and those memoized, so that a global named by memo gets is
// found too.
class GlobalsWalk {
public:
    GlobalsWalk(std::string_view data, size_t from) : d(data), p(from) {}

    std::vector<std::string> run() {
        while (p < d.size() && step(uint8_t(d[p++]))) {
        }
        return std::move(names);
    }

private:
    // False at STOP, or where the bytes end inside an argument.
    bool step(uint8_t code) {
        const bool wasString = lastIsString;
        lastIsString = false;
        uint64_t n = 0;
        std::string a, b;
        switch (code) {
        case '.':
            return false;
        case 'c': // GLOBAL
        case 'i': // INST
            if (!line(a) || !line(b))
                return false;
            names.push_back(a + "." + b);
            return true;
        case 0x93: // STACK_GLOBAL
            if (strings.size() == 2)
                names.push_back(strings[0] + "." + strings[1]);
            strings.clear();
            return true;
        case 'X':  // BINUNICODE
        case 0x8c: // SHORT_BINUNICODE
        case 0x8d: // BINUNICODE8
            if (!le(code == 'X' ? 4 : code == 0x8c ? 1 : 8, n) || n > d.size() - p)
                return false;
            pushString(std::string(d.substr(p, n)));
            p += n;
            return true;
        case 'V': // UNICODE
        case 'S': // STRING
            if (!line(a))
                return false;
            pushString(a);
            return true;
        case 'q':  // BINPUT
        case 'r':  // LONG_BINPUT
        case 0x94: // MEMOIZE
        case 'p':  // PUT
            return put(code, wasString);
        case 'h': // BINGET
        case 'j': // LONG_BINGET
        case 'g': // GET
            return get(code);
        default:
            return skip(argumentOf(code));
        }
    }
    bool put(uint8_t code, bool wasString) {
        uint64_t key = memo.size();
        std::string a;
        if (code == 'p') {
            if (!line(a))
                return false;
            key = std::strtoull(a.c_str(), nullptr, 10);
        } else if (code != 0x94 && !le(code == 'q' ? 1 : 4, key)) {
            return false;
        }
        if (wasString)
            memo[key] = last;
        lastIsString = wasString;
        return true;
    }
    bool get(uint8_t code) {
        uint64_t key = 0;
        std::string a;
        if (code == 'g') {
            if (!line(a))
                return false;
            key = std::strtoull(a.c_str(), nullptr, 10);
        } else if (!le(code == 'h' ? 1 : 4, key)) {
            return false;
        }
        if (const auto it = memo.find(key); it != memo.end())
            pushString(it->second);
        return true;
    }
    bool skip(Argument arg) {
        uint64_t n = 0;
        std::string a;
        switch (arg.kind) {
        case Argument::None:
            return true;
        case Argument::Fixed:
            return le(arg.width, n);
        case Argument::Counted:
            if (!le(arg.width, n) || n > d.size() - p)
                return false;
            p += n;
            return true;
        case Argument::Line:
            return line(a);
        }
        return true;
    }
    bool le(size_t n, uint64_t& v) {
        if (n > d.size() - p)
            return false;
        v = 0;
        for (size_t i = n; i-- > 0;)
            v = v << 8 | uint8_t(d[p + i]);
        p += n;
        return true;
    }
    bool line(std::string& out) {
        const size_t nl = d.find('\n', p);
        if (nl == std::string_view::npos)
            return false;
        out.assign(d.substr(p, nl - p));
        p = nl + 1;
        return true;
    }
    void pushString(std::string s) {
        strings.push_back(s);
        if (strings.size() > 2)
            strings.erase(strings.begin());
        last = std::move(s);
        lastIsString = true;
    }

    std::string_view d;
    size_t p;
    std::vector<std::string> names;
    std::vector<std::string> strings;               // the last two strings pushed
    std::unordered_map<uint64_t, std::string> memo; // memoized strings
    std::string last;
    bool lastIsString = false;
};

} // namespace

std::vector<std::string> globalsByOpcodes(std::string_view d, size_t p) {
    return GlobalsWalk(d, p).run();
}

uint32_t objectDepth(const ObjectTree& tree, uint32_t limit) {
    // Iterative DFS from every node not yet reached (values a pickle made
    // and dropped count too: an import's call may be one); a node's depth is
    // known once its children are done, a shared node computed once.
    std::vector<uint32_t> depth(tree.nodes.size(), 0);
    std::vector<uint8_t> state(tree.nodes.size(), 0); // 0 new, 1 open, 2 done
    struct Frame {
        uint32_t node;
        size_t next;
    };
    constexpr uint32_t kEnd = UINT32_MAX - 1;
    const auto childAt = [&](const ObjectNode& n, size_t i) -> uint32_t {
        if (i < n.items.size())
            return n.items[i];
        i -= n.items.size();
        const uint32_t extra[] = {n.callee, n.state, n.listItems, n.dictItems};
        return i < 4 ? extra[i] : kEnd;
    };
    uint32_t deepest = 0;
    std::vector<Frame> stack;
    for (uint32_t root = 0; root < tree.nodes.size(); ++root) {
        if (state[root] != 0)
            continue;
        stack.push_back({root, 0});
        state[root] = 1;
        while (!stack.empty()) {
            Frame& f = stack.back();
            const uint32_t c = childAt(tree.nodes[f.node], f.next++);
            if (c == kEnd) {
                uint32_t d = 1;
                const ObjectNode& n = tree.nodes[f.node];
                for (size_t i = 0; childAt(n, i) != kEnd; ++i) {
                    const uint32_t k = childAt(n, i);
                    if (k != kNoNode && k < depth.size())
                        d = std::max(d, depth[k] + 1);
                }
                depth[f.node] = d;
                deepest = std::max(deepest, d);
                state[f.node] = 2;
                stack.pop_back();
                continue;
            }
            if (c == kNoNode || c >= tree.nodes.size() || state[c] != 0)
                continue; // done, or a cycle back to a node on the path
            state[c] = 1;
            stack.push_back({c, 0});
            if (stack.size() > limit)
                return uint32_t(stack.size());
        }
        if (deepest > limit)
            return deepest;
    }
    return deepest;
}

} // namespace ckptscope::pytorch
