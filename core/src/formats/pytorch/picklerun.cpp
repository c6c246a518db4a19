#include "formats/pytorch/picklerun.h"

#include <bit>
#include <cstdio>

namespace ckptscope::pytorch {

using K = CheckpointError::Kind;

uint32_t TorchUnpickler::Run::go(uint64_t* consumed) {
    for (;;) {
        op = p;
        if (p == d.size()) [[unlikely]]
            truncated(1, "opcode");
        const uint8_t code = uint8_t(d[p++]);
        if (code == '.') { // STOP
            const uint32_t v = pop();
            if (consumed)
                *consumed = p;
            return v;
        }
        // The memo's opcodes first: every value a pickler makes is memoized.
        if (!stackAndMemo(code) && !numbers(code) && !containers(code) && !strings(code) &&
            !calls(code))
            unknown(code);
    }
}

// None, booleans, integers (64-bit or longer) and floats.
bool TorchUnpickler::Run::numbers(uint8_t code) {
    switch (code) {
    case 'N':
        stack.push_back(u.sharedValue(ObjectKind::None));
        break;
    case 0x88:
    case 0x89:
        stack.push_back(u.sharedValue(ObjectKind::Bool, code == 0x88));
        break;
    case 'I': { // INT: decimal text; I01 / I00 are True / False
        const std::string_view s = line("INT");
        if (s == "01" || s == "00") {
            stack.push_back(u.sharedValue(ObjectKind::Bool, s == "01"));
        } else {
            errno = 0;
            char* end = nullptr;
            const std::string t(s);
            const long long v = std::strtoll(t.c_str(), &end, 10);
            if (errno != 0 || end == t.c_str())
                fail(K::Invalid, "INT argument is not a 64-bit integer", op);
            pushInt(v);
        }
        break;
    }
    case 'J':
        pushInt(int32_t(uint32_t(le(4, "BININT"))));
        break;
    case 'K':
        pushInt(int64_t(le(1, "BININT1")));
        break;
    case 'M':
        pushInt(int64_t(le(2, "BININT2")));
        break;
    case 'L': { // LONG: decimal text ending in L
        std::string s(line("LONG"));
        if (!s.empty() && s.back() == 'L')
            s.pop_back();
        const bool neg = !s.empty() && s[0] == '-';
        if (s.empty() || s.find_first_not_of("0123456789", neg ? 1 : 0) != std::string::npos)
            fail(K::Invalid, "LONG argument is not an integer", op);
        errno = 0;
        const long long v = std::strtoll(s.c_str(), nullptr, 10);
        if (errno == 0)
            pushInt(v);
        else
            pushText(ObjectKind::BigInt, s);
        break;
    }
    case 0x8a: // LONG1
        pushLong(take(le(1, "LONG1 length"), "LONG1"));
        break;
    case 0x8b: { // LONG4
        const int64_t n = int32_t(uint32_t(le(4, "LONG4 length")));
        if (n < 0)
            fail(K::Invalid, "LONG4 with a negative length", op);
        pushLong(take(uint64_t(n), "LONG4"));
        break;
    }
    case 'F': {
        const std::string s(line("FLOAT"));
        ObjectNode n;
        n.kind = ObjectKind::Float;
        n.real = std::strtod(s.c_str(), nullptr);
        push(std::move(n));
        break;
    }
    case 'G': { // BINFLOAT: big-endian double
        const std::string_view s = take(8, "BINFLOAT");
        uint64_t bits = 0;
        for (char c : s)
            bits = bits << 8 | uint8_t(c);
        ObjectNode n;
        n.kind = ObjectKind::Float;
        n.real = std::bit_cast<double>(bits);
        push(std::move(n));
        break;
    }
    default:
        return false;
    }
    return true;
}

// Python 2 strings, bytes and str, in every length width.
bool TorchUnpickler::Run::strings(uint8_t code) {
    switch (code) {
    case 'S':
        pushPy2String(unquote(line("STRING")));
        break;
    case 'T': {
        const int64_t n = int32_t(uint32_t(le(4, "BINSTRING length")));
        if (n < 0)
            fail(K::Invalid, "BINSTRING with a negative length", op);
        pushPy2String(take(uint64_t(n), "BINSTRING"));
        break;
    }
    case 'U':
        pushPy2String(take(le(1, "SHORT_BINSTRING length"), "SHORT_BINSTRING"));
        break;
    case 'B':
        pushText(ObjectKind::Bytes, std::string(take(le(4, "BINBYTES length"), "BINBYTES")));
        break;
    case 'C':
        pushText(ObjectKind::Bytes,
                 std::string(take(le(1, "SHORT_BINBYTES length"), "SHORT_BINBYTES")));
        break;
    case 0x8e:
        pushText(ObjectKind::Bytes, std::string(take(le(8, "BINBYTES8 length"), "BINBYTES8")));
        break;
    case 0x96:
        pushText(ObjectKind::Bytes, std::string(take(le(8, "BYTEARRAY8 length"), "BYTEARRAY8")));
        break;
    case 'V': {
        const std::optional<std::string> text = rawUnicodeText(line("UNICODE"));
        if (!text)
            fail(K::Invalid, "UNICODE argument with a \\u or \\U escape of no hex code point", op);
        pushUnicode(*text);
        break;
    }
    case 'X':
        pushUnicode(take(le(4, "BINUNICODE length"), "BINUNICODE"));
        break;
    case 0x8c:
        pushUnicode(take(le(1, "SHORT_BINUNICODE length"), "SHORT_BINUNICODE"));
        break;
    case 0x8d:
        pushUnicode(take(le(8, "BINUNICODE8 length"), "BINUNICODE8"));
        break;
    default:
        return false;
    }
    return true;
}

// Lists, tuples, dicts and sets, and the items added to them.
bool TorchUnpickler::Run::containers(uint8_t code) {
    switch (code) {
    case ']':
        pushEmpty(ObjectKind::List);
        break;
    case 'l':
        pushMarked(ObjectKind::List);
        break;
    case ')':
        stack.push_back(u.sharedValue(ObjectKind::Tuple));
        break;
    case 't':
        pushMarked(ObjectKind::Tuple);
        break;
    case 0x85:
    case 0x86:
    case 0x87: { // TUPLE1-3: the top items, in their place
        const size_t n = size_t(code - 0x84);
        if (stack.size() < floor() + n)
            underflow();
        pushFrom(ObjectKind::Tuple, stack.size() - n);
        break;
    }
    case '}':
        pushEmpty(ObjectKind::Dict);
        break;
    case 'd':
        if (sinceMark().size() % 2 != 0)
            fail(K::Invalid, "DICT with a key and no value", op);
        pushMarked(ObjectKind::Dict);
        break;
    case 0x8f:
        pushEmpty(ObjectKind::Set);
        break;
    case 0x91:
        pushMarked(ObjectKind::FrozenSet);
        break;
    case 'a': {
        const uint32_t v = pop();
        addItems(top(), {&v, 1}, false);
        break;
    }
    case 'e':   // APPENDS
    case 0x90:  // ADDITEMS
    case 'u': { // SETITEMS
        const std::span<const uint32_t> items = sinceMark();
        addItems(belowMark(), items, code == 'u');
        dropMark();
        break;
    }
    case 's': {
        const uint32_t v = pop(), k = pop();
        const uint32_t pair[2] = {k, v};
        addItems(top(), pair, true);
        break;
    }
    default:
        return false;
    }
    return true;
}

// The protocol and frames, marks, stack copies and the memo.
bool TorchUnpickler::Run::stackAndMemo(uint8_t code) {
    switch (code) {
    case 0x80: { // PROTO
        const uint64_t v = le(1, "protocol");
        if (v > 5)
            fail(K::Invalid, "pickle protocol " + std::to_string(v) + " (0 to 5 are read)", op);
        break;
    }
    case 0x95: // FRAME: a length hint only
        le(8, "frame length");
        break;
    case '(':
        marks.push_back(stack.size());
        break;
    case '0':
        pop();
        break;
    case '1':
        sinceMark();
        dropMark();
        break;
    case '2':
        stack.push_back(top());
        break;
    case 'p': {
        const std::string s(line("PUT"));
        memoPut(std::strtoull(s.c_str(), nullptr, 10), top());
        break;
    }
    case 'q': {
        const uint64_t key = le(1, "BINPUT");
        memoPut(key, top());
        break;
    }
    case 'r': {
        const uint64_t key = le(4, "LONG_BINPUT");
        memoPut(key, top());
        break;
    }
    case 0x94:
        memoPut(memoSize(), top());
        break;
    case 'g':
    case 'h':
    case 'j': {
        uint64_t key;
        if (code == 'g') {
            const std::string s(line("GET"));
            key = std::strtoull(s.c_str(), nullptr, 10);
        } else {
            key = le(code == 'h' ? 1 : 4, "memo index");
        }
        stack.push_back(memoGet(key));
        break;
    }
    default:
        return false;
    }
    return true;
}

// Globals, the calls of them (kept as Object nodes, never made), BUILD
// and the persistent ids of storages.
bool TorchUnpickler::Run::calls(uint8_t code) {
    switch (code) {
    case 'c': { // GLOBAL module\nname\n
        std::string module(line("GLOBAL module"));
        const std::string name(line("GLOBAL name"));
        global(module + "." + name);
        break;
    }
    case 0x93: { // STACK_GLOBAL
        const uint32_t name = pop(), module = pop();
        if (node(name).kind != ObjectKind::String || node(module).kind != ObjectKind::String)
            fail(K::Invalid, "STACK_GLOBAL of values that are not strings", op);
        global(node(module).text + "." + node(name).text);
        break;
    }
    case 'R': {
        const uint32_t args = pop(), callable = pop();
        stack.push_back(u.reduce(callable, args, base + op));
        break;
    }
    case 0x81:   // NEWOBJ cls.__new__(cls, *args)
    case 0x92: { // NEWOBJ_EX (cls, args, kwargs): kwargs kept as a last argument
        const uint32_t kwargs = code == 0x92 ? pop() : kNoNode;
        const uint32_t args = pop(), cls = pop();
        const uint32_t v = u.reduce(cls, args, base + op);
        if (kwargs != kNoNode && !node(kwargs).items.empty()) {
            node(v).items.push_back(kwargs);
            u.gained(v, kwargs);
        }
        stack.push_back(v);
        break;
    }
    case 'i': { // INST module\nname\n, arguments since the mark
        std::string module(line("INST module"));
        const std::string name(line("INST name"));
        ObjectNode t;
        t.kind = ObjectKind::Tuple;
        t.items.assign(sinceMark());
        dropMark();
        const uint32_t cls = u.addGlobal(module + "." + name);
        stack.push_back(u.reduce(cls, u.add(std::move(t)), base + op));
        break;
    }
    case 'o': { // OBJ: class and arguments since the mark
        const std::span<const uint32_t> items = sinceMark();
        if (items.empty())
            fail(K::Invalid, "OBJ without a class", op);
        const uint32_t cls = items[0];
        ObjectNode t;
        t.kind = ObjectKind::Tuple;
        t.items.assign(items.subspan(1));
        dropMark();
        stack.push_back(u.reduce(cls, u.add(std::move(t)), base + op));
        break;
    }
    case 'b': { // BUILD: an object's state
        const uint32_t state = pop();
        const uint32_t target = top();
        ObjectNode& t = node(target);
        if (t.kind == ObjectKind::Object || t.kind == ObjectKind::Call) {
            if (t.state != kNoNode)
                u.m_exact = false; // a state replaced: the old one's figures would stay
            t.state = state;
            u.gained(target, state);
        }
        // A dict's BUILD is the _metadata state_dict() attaches: not part of the tree.
        break;
    }
    case 'P': { // PERSID: a text persistent id
        const std::string s(line("PERSID"));
        pushText(ObjectKind::String, s);
        stack.back() = u.storageNode(stack.back(), base + op);
        break;
    }
    case 'Q': {
        const uint32_t pid = pop();
        stack.push_back(u.storageNode(pid, base + op));
        break;
    }
    default:
        return false;
    }
    return true;
}

void TorchUnpickler::Run::unknown(uint8_t code) const {
    switch (code) {
    case 0x82:
    case 0x83:
    case 0x84:
        fail(K::Invalid, "pickle names an extension-registry code (EXT), which is not read", op);
    case 0x97:
    case 0x98:
        fail(K::Invalid, "pickle uses an out-of-band buffer, which a file cannot hold", op);
    default:
        fail(
            K::Invalid,
            "unknown pickle opcode 0x" +
                [&] {
                    char hex[4];
                    std::snprintf(hex, sizeof hex, "%02x", code);
                    return std::string(hex);
                }(),
            op);
    }
}

} // namespace ckptscope::pytorch
