#include "formats/pytorch/torchunpickler.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/oxck/metadatacodec.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace ckptscope::pytorch {

namespace {

using K = CheckpointError::Kind;

// torch's storage classes and the element types they hold.
struct StorageType {
    const char* name;
    Dtype dtype;
};
constexpr StorageType kStorageTypes[] = {
    {"FloatStorage", Dtype::F32},
    {"DoubleStorage", Dtype::F64},
    {"HalfStorage", Dtype::F16},
    {"BFloat16Storage", Dtype::BF16},
    {"CharStorage", Dtype::I8},
    {"ShortStorage", Dtype::I16},
    {"IntStorage", Dtype::I32},
    {"LongStorage", Dtype::I64},
    {"ByteStorage", Dtype::U8},
    {"BoolStorage", Dtype::Bool},
    {"ComplexFloatStorage", Dtype::C64},
    {"ComplexDoubleStorage", Dtype::C128},
    // torch >= 2.1 for dtypes with no typed storage class (float8, uint16…):
    // bytes, typed by the _rebuild_tensor_v3 that views them.
    {"UntypedStorage", Dtype::U8},
};

// The dtypes _rebuild_tensor_v3 names (torch.<name>).
struct TorchDtype {
    const char* name;
    Dtype dtype;
};
constexpr TorchDtype kTorchDtypes[] = {
    {"float32", Dtype::F32},
    {"float64", Dtype::F64},
    {"float16", Dtype::F16},
    {"bfloat16", Dtype::BF16},
    {"int8", Dtype::I8},
    {"int16", Dtype::I16},
    {"int32", Dtype::I32},
    {"int64", Dtype::I64},
    {"uint8", Dtype::U8},
    {"bool", Dtype::Bool},
    {"complex64", Dtype::C64},
    {"complex128", Dtype::C128},
    {"uint16", Dtype::U16},
    {"uint32", Dtype::U32},
    {"uint64", Dtype::U64},
    {"float8_e4m3fn", Dtype::F8E4M3},
    {"float8_e5m2", Dtype::F8E5M2},
};

bool isBuiltin(const std::string& name, const char* fn) {
    return name == std::string("__builtin__.") + fn || name == std::string("builtins.") + fn;
}

// A little-endian two's-complement integer of any length in decimal.
std::string decimal(std::string_view bytes) {
    std::vector<uint8_t> mag(bytes.begin(), bytes.end());
    const bool negative = !mag.empty() && (mag.back() & 0x80);
    if (negative) { // two's complement: invert and add one
        bool carry = true;
        for (uint8_t& b : mag) {
            b = uint8_t(~b + (carry ? 1 : 0));
            carry = carry && b == 0;
        }
    }
    std::string digits;
    // Repeated division by 10^9, most significant byte last.
    while (std::any_of(mag.begin(), mag.end(), [](uint8_t b) { return b != 0; })) {
        uint64_t rem = 0;
        for (size_t i = mag.size(); i-- > 0;) {
            const uint64_t cur = rem << 8 | mag[i];
            mag[i] = uint8_t(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        std::string chunk = std::to_string(rem);
        const bool more = std::any_of(mag.begin(), mag.end(), [](uint8_t b) { return b != 0; });
        if (more)
            chunk.insert(0, 9 - chunk.size(), '0');
        digits.insert(0, chunk);
    }
    if (digits.empty())
        digits = "0";
    return negative ? "-" + digits : digits;
}

// UTF-8 of one code point.
void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xc0 | cp >> 6);
        out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += char(0xe0 | cp >> 12);
        out += char(0x80 | (cp >> 6 & 0x3f));
        out += char(0x80 | (cp & 0x3f));
    } else {
        out += char(0xf0 | cp >> 18);
        out += char(0x80 | (cp >> 12 & 0x3f));
        out += char(0x80 | (cp >> 6 & 0x3f));
        out += char(0x80 | (cp & 0x3f));
    }
}

// The code points of UTF-8 text as bytes, when every one is below 256
// (_codecs.encode(text, 'latin1')).
bool latin1Bytes(const std::string& text, std::string& out) {
    for (size_t i = 0; i < text.size();) {
        const unsigned char c = text[i];
        if (c < 0x80) {
            out += char(c);
            ++i;
        } else if ((c & 0xe0) == 0xc0 && i + 1 < text.size()) {
            const uint32_t cp = (c & 0x1fu) << 6 | (uint8_t(text[i + 1]) & 0x3fu);
            if (cp > 0xff)
                return false;
            out += char(cp);
            i += 2;
        } else {
            return false;
        }
    }
    return true;
}

} // namespace

// One evaluation: the byte cursor, the stack, the marks and the memo.
class TorchUnpickler::Run {
public:
    Run(TorchUnpickler& owner, std::string_view data, uint64_t offset)
        : u(owner), d(data), base(offset) {}

    uint32_t go(uint64_t* consumed);

private:
    [[noreturn]] void fail(K kind, const std::string& what, uint64_t at) const {
        throw CheckpointError(kind, u.m_where + ": byte " + std::to_string(base + at) + ": " + what,
                              base + at);
    }
    std::string_view take(uint64_t n, const char* what) {
        if (n > d.size() - p)
            fail(K::Truncated,
                 std::string("truncated pickle: ") + what + " of " + std::to_string(n) +
                     " bytes claimed, " + std::to_string(d.size() - p) + " left",
                 op);
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
            fail(K::Truncated, std::string("truncated pickle: ") + what + " without its newline",
                 op);
        const std::string_view s = d.substr(p, nl - p);
        p = nl + 1;
        return s;
    }
    uint32_t pop() {
        if (stack.size() <= floor())
            fail(K::Invalid, "pickle stack underflow", op);
        const uint32_t v = stack.back();
        stack.pop_back();
        return v;
    }
    uint32_t& top() {
        if (stack.size() <= floor())
            fail(K::Invalid, "pickle stack underflow", op);
        return stack.back();
    }
    size_t floor() const { return marks.empty() ? 0 : marks.back(); }
    std::vector<uint32_t> popMark() {
        if (marks.empty())
            fail(K::Invalid, "pickle mark missing", op);
        std::vector<uint32_t> items(stack.begin() + long(marks.back()), stack.end());
        stack.resize(marks.back());
        marks.pop_back();
        return items;
    }
    uint32_t push(ObjectNode n) {
        const uint32_t id = u.m_tree.add(std::move(n));
        stack.push_back(id);
        return id;
    }
    ObjectNode& node(uint32_t id) { return u.m_tree.nodes[id]; }
    void pushInt(int64_t v) {
        ObjectNode n;
        n.kind = ObjectKind::Int;
        n.integer = v;
        push(std::move(n));
    }
    void pushLong(std::string_view bytes) {
        ObjectNode n;
        if (bytes.size() <= 8) {
            uint64_t v = 0;
            for (size_t i = bytes.size(); i-- > 0;)
                v = v << 8 | uint8_t(bytes[i]);
            if (!bytes.empty() && bytes.size() < 8 && (uint8_t(bytes.back()) & 0x80))
                v |= ~uint64_t(0) << (8 * bytes.size()); // sign-extend
            const bool negative = !bytes.empty() && (uint8_t(bytes.back()) & 0x80);
            if (bytes.size() < 8 || negative == (int64_t(v) < 0)) {
                n.kind = ObjectKind::Int;
                n.integer = int64_t(v);
                push(std::move(n));
                return;
            }
        }
        n.kind = ObjectKind::BigInt;
        n.text = decimal(bytes);
        if (n.text.size() <= 19 || (n.text[0] == '-' && n.text.size() <= 20)) {
            errno = 0;
            const long long v = std::strtoll(n.text.c_str(), nullptr, 10);
            if (errno == 0) {
                n.kind = ObjectKind::Int;
                n.integer = v;
                n.text.clear();
            }
        }
        push(std::move(n));
    }
    void pushText(ObjectKind kind, std::string text) {
        ObjectNode n;
        n.kind = kind;
        n.text = std::move(text);
        push(std::move(n));
    }
    void pushContainer(ObjectKind kind, std::vector<uint32_t> items) {
        ObjectNode n;
        n.kind = kind;
        n.items = std::move(items);
        push(std::move(n));
    }
    void global(std::string name) {
        ++u.globals[name].count;
        pushText(ObjectKind::Global, std::move(name));
    }
    // The items an APPENDS / SETITEMS adds to `target`: a list or dict, or an
    // object's listitems / dictitems.
    void addItems(uint32_t target, std::vector<uint32_t> items, bool dict) {
        ObjectNode& t = node(target);
        if (dict && items.size() % 2 != 0)
            fail(K::Invalid, "SETITEMS with a key and no value", op);
        if ((dict && t.kind == ObjectKind::Dict) ||
            (!dict && (t.kind == ObjectKind::List || t.kind == ObjectKind::Set ||
                       t.kind == ObjectKind::FrozenSet))) {
            t.items.insert(t.items.end(), items.begin(), items.end());
            return;
        }
        if (t.kind == ObjectKind::Object || t.kind == ObjectKind::Call) {
            uint32_t& part = dict ? t.dictItems : t.listItems;
            if (part == kNoNode) {
                ObjectNode c;
                c.kind = dict ? ObjectKind::Dict : ObjectKind::List;
                const uint32_t id = u.m_tree.add(std::move(c));
                node(target).*(dict ? &ObjectNode::dictItems : &ObjectNode::listItems) = id;
            }
            const uint32_t id =
                node(target).*(dict ? &ObjectNode::dictItems : &ObjectNode::listItems);
            auto& dst = node(id).items;
            dst.insert(dst.end(), items.begin(), items.end());
            return;
        }
        fail(K::Invalid,
             std::string(dict ? "SETITEMS" : "APPENDS") + " on a value that holds no items", op);
    }
    std::string unquote(std::string_view s) {
        // Protocol 0's STRING: a repr in quotes; backslash escapes for
        // quotes, backslash, \n \t \r and \xNN.
        if (s.size() < 2 || (s.front() != '\'' && s.front() != '"') || s.back() != s.front())
            fail(K::Invalid, "STRING argument not in quotes", op);
        std::string out;
        for (size_t i = 1; i + 1 < s.size(); ++i) {
            if (s[i] != '\\' || i + 2 >= s.size()) {
                out += s[i];
                continue;
            }
            const char c = s[++i];
            if (c == 'n')
                out += '\n';
            else if (c == 't')
                out += '\t';
            else if (c == 'r')
                out += '\r';
            else if (c == 'x' && i + 2 < s.size()) {
                out += char(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
                i += 2;
            } else
                out += c;
        }
        return out;
    }
    std::string rawUnicode(std::string_view s) {
        std::string out;
        for (size_t i = 0; i < s.size(); ++i) {
            if (s[i] == '\\' && i + 5 < s.size() + 0 && (s[i + 1] == 'u') && i + 6 <= s.size()) {
                appendUtf8(out, uint32_t(std::stoul(std::string(s.substr(i + 2, 4)), nullptr, 16)));
                i += 5;
            } else if (s[i] == '\\' && i + 10 <= s.size() && s[i + 1] == 'U') {
                appendUtf8(out, uint32_t(std::stoul(std::string(s.substr(i + 2, 8)), nullptr, 16)));
                i += 9;
            } else {
                appendUtf8(out, uint8_t(s[i]));
            }
        }
        return out;
    }
    // Python 2 str: text when it is UTF-8 (torch.load decodes so), else bytes.
    // Python 2 str: text when it is UTF-8 (torch.load decodes it so), else
    // the bytes it is.
    void pushPy2String(std::string_view s) {
        pushText(isValidUtf8(s) ? ObjectKind::String : ObjectKind::Bytes, std::string(s));
    }
    // A str: UTF-8, as Python's unpickler requires.
    void pushUnicode(std::string_view s) {
        if (!isValidUtf8(s))
            fail(K::Invalid, "a string that is not UTF-8", op);
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
            fail(K::Invalid, "memo " + std::to_string(key) + " read before it is set", op);
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

uint32_t TorchUnpickler::Run::go(uint64_t* consumed) {
    for (;;) {
        op = p;
        const uint8_t code = uint8_t(take(1, "opcode")[0]);
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
        case '.': { // STOP
            const uint32_t v = pop();
            if (consumed)
                *consumed = p;
            return v;
        }
        case '(':
            marks.push_back(stack.size());
            break;
        case '0':
            pop();
            break;
        case '1':
            popMark();
            break;
        case '2':
            stack.push_back(top());
            break;
        case 'N':
            push(ObjectNode{});
            break;
        case 0x88:
        case 0x89: {
            ObjectNode n;
            n.kind = ObjectKind::Bool;
            n.integer = code == 0x88;
            push(std::move(n));
            break;
        }
        case 'I': { // INT: decimal text; I01 / I00 are True / False
            const std::string_view s = line("INT");
            if (s == "01" || s == "00") {
                ObjectNode n;
                n.kind = ObjectKind::Bool;
                n.integer = s == "01";
                push(std::move(n));
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
            pushText(ObjectKind::Bytes,
                     std::string(take(le(8, "BYTEARRAY8 length"), "BYTEARRAY8")));
            break;
        case 'V':
            pushUnicode(rawUnicode(line("UNICODE")));
            break;
        case 'X':
            pushUnicode(take(le(4, "BINUNICODE length"), "BINUNICODE"));
            break;
        case 0x8c:
            pushUnicode(take(le(1, "SHORT_BINUNICODE length"), "SHORT_BINUNICODE"));
            break;
        case 0x8d:
            pushUnicode(take(le(8, "BINUNICODE8 length"), "BINUNICODE8"));
            break;
        case ']':
            pushContainer(ObjectKind::List, {});
            break;
        case 'l':
            pushContainer(ObjectKind::List, popMark());
            break;
        case ')':
            pushContainer(ObjectKind::Tuple, {});
            break;
        case 't':
            pushContainer(ObjectKind::Tuple, popMark());
            break;
        case 0x85:
        case 0x86:
        case 0x87: {
            std::vector<uint32_t> items(size_t(code - 0x84));
            for (size_t i = items.size(); i-- > 0;)
                items[i] = pop();
            pushContainer(ObjectKind::Tuple, std::move(items));
            break;
        }
        case '}':
            pushContainer(ObjectKind::Dict, {});
            break;
        case 'd': {
            std::vector<uint32_t> items = popMark();
            if (items.size() % 2 != 0)
                fail(K::Invalid, "DICT with a key and no value", op);
            pushContainer(ObjectKind::Dict, std::move(items));
            break;
        }
        case 0x8f:
            pushContainer(ObjectKind::Set, {});
            break;
        case 0x91:
            pushContainer(ObjectKind::FrozenSet, popMark());
            break;
        case 'a': {
            const uint32_t v = pop();
            addItems(top(), {v}, false);
            break;
        }
        case 'e': {
            std::vector<uint32_t> items = popMark();
            addItems(top(), std::move(items), false);
            break;
        }
        case 0x90: {
            std::vector<uint32_t> items = popMark();
            addItems(top(), std::move(items), false);
            break;
        }
        case 's': {
            const uint32_t v = pop(), k = pop();
            addItems(top(), {k, v}, true);
            break;
        }
        case 'u': {
            std::vector<uint32_t> items = popMark();
            addItems(top(), std::move(items), true);
            break;
        }
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
            if (kwargs != kNoNode && !node(kwargs).items.empty())
                node(v).items.push_back(kwargs);
            stack.push_back(v);
            break;
        }
        case 'i': { // INST module\nname\n, arguments since the mark
            std::string module(line("INST module"));
            const std::string name(line("INST name"));
            std::vector<uint32_t> args = popMark();
            global(module + "." + name);
            const uint32_t cls = pop();
            ObjectNode t;
            t.kind = ObjectKind::Tuple;
            t.items = std::move(args);
            stack.push_back(u.reduce(cls, u.m_tree.add(std::move(t)), base + op));
            break;
        }
        case 'o': { // OBJ: class and arguments since the mark
            std::vector<uint32_t> items = popMark();
            if (items.empty())
                fail(K::Invalid, "OBJ without a class", op);
            ObjectNode t;
            t.kind = ObjectKind::Tuple;
            t.items.assign(items.begin() + 1, items.end());
            stack.push_back(u.reduce(items[0], u.m_tree.add(std::move(t)), base + op));
            break;
        }
        case 'b': { // BUILD: an object's state
            const uint32_t state = pop();
            ObjectNode& t = node(top());
            if (t.kind == ObjectKind::Object || t.kind == ObjectKind::Call)
                t.state = state;
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
        case 0x82:
        case 0x83:
        case 0x84:
            fail(K::Invalid, "pickle names an extension-registry code (EXT), which is not read",
                 op);
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
}

TorchUnpickler::TorchUnpickler(ObjectTree& tree, std::string where)
    : m_tree(tree), m_where(std::move(where)) {}

uint32_t TorchUnpickler::run(std::string_view data, uint64_t fileOffset, uint64_t* consumed) {
    // About one value per 8 bytes of pickle: reserved once, not regrown.
    m_tree.nodes.reserve(m_tree.nodes.size() + data.size() / 8);
    Run r(*this, data, fileOffset);
    return r.go(consumed);
}

uint32_t TorchUnpickler::storageNode(uint32_t pid, uint64_t at) {
    const auto fail = [&](K kind, const std::string& what) {
        throw CheckpointError(kind, m_where + ": byte " + std::to_string(at) + ": " + what, at);
    };
    const ObjectNode p = m_tree.at(pid);
    const auto item = [&](size_t i) -> const ObjectNode& { return m_tree.at(p.items[i]); };
    if (p.kind != ObjectKind::Tuple || p.items.size() < 5 || item(0).kind != ObjectKind::String ||
        item(0).text != "storage")
        fail(K::Invalid, "a persistent id that is not ('storage', type, key, location, numel)");
    if (item(1).kind != ObjectKind::Global)
        fail(K::Invalid, "a storage whose type is not a class");
    const std::string& type = item(1).text;
    const StorageType* st = nullptr;
    for (const StorageType& s : kStorageTypes)
        if (type == std::string("torch.") + s.name)
            st = &s;
    if (!st)
        fail(K::Invalid, "unknown storage type " + type);
    if (item(2).kind != ObjectKind::String)
        fail(K::Invalid, "a storage key that is not a string");
    const std::string& key = item(2).text;
    if (item(4).kind != ObjectKind::Int || item(4).integer < 0)
        fail(K::Invalid, "storage \"" + key + "\": its element count is not a count (negative)");
    const uint64_t numel = uint64_t(item(4).integer);
    if (numel > uint64_t(INT64_MAX) / dtypeSize(st->dtype))
        fail(K::Invalid, "storage \"" + key + "\": " + std::to_string(numel) + " elements of " +
                             std::to_string(dtypeSize(st->dtype)) + " bytes overflow 2^63 bytes");
    uint32_t index;
    const auto found = m_storageByKey.find(key);
    if (found == m_storageByKey.end()) {
        index = uint32_t(storages.size());
        m_storageByKey.emplace(key, index);
        PickledStorage s;
        s.key = key;
        s.type = type;
        s.dtype = st->dtype;
        s.numel = numel;
        s.location = item(3).kind == ObjectKind::String ? item(3).text : std::string();
        storages.push_back(std::move(s));
    } else {
        index = found->second;
        if (storages[index].dtype != st->dtype)
            fail(K::Invalid, "storage \"" + key + "\": dtype conflict: named as " +
                                 storages[index].type + " and as " + type);
        storages[index].numel = std::max(storages[index].numel, numel);
    }
    ObjectNode n;
    n.kind = ObjectKind::Object;
    n.text = type;
    n.items = {p.items[2]};
    const uint32_t id = m_tree.add(std::move(n));
    m_storageOfNode.emplace(id, index);
    return id;
}

uint32_t TorchUnpickler::rebuildTensor(const std::string& fn, const std::vector<uint32_t>& args,
                                       uint64_t at) {
    const auto fail = [&](const std::string& what) {
        throw CheckpointError(
            K::Invalid, m_where + ": byte " + std::to_string(at) + ": " + fn + ": " + what, at);
    };
    if (args.size() < 4)
        fail("expected (storage, offset, size, stride, …)");
    const auto storage = m_storageOfNode.find(args[0]);
    if (storage == m_storageOfNode.end())
        fail("its first argument is not a storage");
    const auto count = [&](uint32_t id, const char* what) {
        const ObjectNode& n = m_tree.at(id);
        if (n.kind != ObjectKind::Int)
            fail(std::string(what) + " is not an integer");
        if (n.integer < 0)
            fail(std::string("negative ") + what + " " + std::to_string(n.integer));
        return uint64_t(n.integer);
    };
    const auto counts = [&](uint32_t id, const char* what) {
        const ObjectNode* n = &m_tree.at(id);
        if (n->kind == ObjectKind::Object && n->items.size() == 1) // torch.Size((…))
            n = &m_tree.at(n->items[0]);
        if (n->kind != ObjectKind::Tuple && n->kind != ObjectKind::List)
            fail(std::string(what) + " is not a tuple");
        std::vector<uint64_t> v;
        for (uint32_t i : std::vector<uint32_t>(n->items))
            v.push_back(count(i, what));
        return v;
    };
    PickledTensor t;
    t.storage = storage->second;
    // v3 names the tensor's dtype: an untyped storage takes it (its numel
    // was bytes), a typed one must already hold it.
    if (fn == "torch._utils._rebuild_tensor_v3" && args.size() > 6) {
        const ObjectNode& d = m_tree.at(args[6]);
        const std::optional<Dtype> found =
            d.kind == ObjectKind::Global ? torchDtypeNamed(d.text) : std::nullopt;
        if (!found)
            fail("a dtype torch does not have: " +
                 (d.kind == ObjectKind::Global ? d.text : std::string("(not a dtype)")));
        const std::string name = d.text.substr(6); // "bfloat16", as torch spells it
        PickledStorage& s = storages[t.storage];
        if (s.type == "torch.UntypedStorage" && s.dtype == Dtype::U8 && *found != Dtype::U8) {
            const size_t item = dtypeSize(*found);
            if (s.numel % item != 0)
                fail("storage \"" + s.key + "\" of " + std::to_string(s.numel) +
                     " bytes is not a whole number of " + name + " elements");
            s.dtype = *found;
            s.numel /= item;
        } else if (s.dtype != *found) {
            fail("storage \"" + s.key + "\": dtype conflict: it holds " + dtypeName(s.dtype) +
                 ", the tensor says " + name);
        }
    }
    t.offset = count(args[1], "storage offset");
    t.size = counts(args[2], "size");
    t.stride = counts(args[3], "stride");
    if (t.size.size() != t.stride.size())
        fail(std::to_string(t.size.size()) + " sizes but " + std::to_string(t.stride.size()) +
             " strides");
    if (args.size() > 4 && m_tree.at(args[4]).kind == ObjectKind::Bool)
        t.requiresGrad = m_tree.at(args[4]).integer != 0;
    // The last element must lie inside the storage (an empty view anywhere).
    const PickledStorage& s = storages[t.storage];
    bool empty = false, past = false; // past: the sum passes 64 bits
    uint64_t last = t.offset;
    for (size_t i = 0; i < t.size.size(); ++i) {
        empty = empty || t.size[i] == 0;
        uint64_t term = 0;
        if (t.size[i] > 0 && (__builtin_mul_overflow(t.size[i] - 1, t.stride[i], &term) ||
                              __builtin_add_overflow(last, term, &last)))
            past = true;
    }
    if (!empty && (past || last >= s.numel))
        fail("view out of range: its last element " +
             (past ? std::string("(past 2^64)") : std::to_string(last)) + " is past storage \"" +
             s.key + "\" of " + std::to_string(s.numel) + " elements");
    ObjectNode n;
    n.kind = ObjectKind::Tensor;
    n.tensor = uint32_t(tensors.size());
    tensors.push_back(std::move(t));
    return m_tree.add(std::move(n));
}

uint32_t TorchUnpickler::reduce(uint32_t callable, uint32_t args, uint64_t at) {
    const ObjectNode c = m_tree.at(callable);
    std::vector<uint32_t> a;
    if (m_tree.at(args).kind == ObjectKind::Tuple)
        a = m_tree.at(args).items;
    else
        a = {args};
    ObjectNode n;
    if (c.kind != ObjectKind::Global) { // a call of what a call gave
        n.kind = ObjectKind::Call;
        n.callee = callable;
        n.items = std::move(a);
        const uint32_t id = m_tree.add(std::move(n));
        calledResults.push_back(id);
        return id;
    }
    const std::string& fn = c.text;
    if (fn == "torch._utils._rebuild_tensor_v2" || fn == "torch._utils._rebuild_tensor" ||
        fn == "torch._utils._rebuild_tensor_v3")
        return rebuildTensor(fn, a, at);
    if ((fn == "torch._utils._rebuild_parameter" ||
         fn == "torch._utils._rebuild_parameter_with_state") &&
        !a.empty() && m_tree.at(a[0]).kind == ObjectKind::Tensor) {
        PickledTensor& t = tensors[m_tree.at(a[0]).tensor];
        t.isParameter = true;
        if (a.size() > 1 && m_tree.at(a[1]).kind == ObjectKind::Bool)
            t.requiresGrad = m_tree.at(a[1]).integer != 0;
        return a[0];
    }
    if (fn == "collections.OrderedDict" && a.empty()) {
        n.kind = ObjectKind::Dict;
        return m_tree.add(std::move(n));
    }
    if (fn == "_codecs.encode" && a.size() == 2 && m_tree.at(a[0]).kind == ObjectKind::String &&
        m_tree.at(a[1]).kind == ObjectKind::String &&
        (m_tree.at(a[1]).text == "latin1" || m_tree.at(a[1]).text == "latin-1")) {
        std::string bytes;
        if (latin1Bytes(m_tree.at(a[0]).text, bytes)) {
            n.kind = ObjectKind::Bytes;
            n.text = std::move(bytes);
            return m_tree.add(std::move(n));
        }
    }
    if (isBuiltin(fn, "bytes") && a.empty()) {
        n.kind = ObjectKind::Bytes;
        return m_tree.add(std::move(n));
    }
    if ((isBuiltin(fn, "set") || isBuiltin(fn, "frozenset")) &&
        (a.empty() || (a.size() == 1 && m_tree.at(a[0]).kind == ObjectKind::List))) {
        n.kind = isBuiltin(fn, "set") ? ObjectKind::Set : ObjectKind::FrozenSet;
        if (!a.empty())
            n.items = m_tree.at(a[0]).items;
        return m_tree.add(std::move(n));
    }
    n.kind = ObjectKind::Object;
    n.text = fn;
    n.items = std::move(a);
    const uint32_t id = m_tree.add(std::move(n));
    globals[fn].calls.push_back(id);
    return id;
}

std::vector<std::string> globalsByOpcodes(std::string_view d, size_t p) {
    std::vector<std::string> names;
    std::vector<std::string> strings;               // the strings pushed lately, for STACK_GLOBAL
    std::unordered_map<uint64_t, std::string> memo; // memoized strings
    std::string last;
    bool lastIsString = false;
    const auto le = [&](size_t n, uint64_t& v) {
        if (n > d.size() - p)
            return false;
        v = 0;
        for (size_t i = n; i-- > 0;)
            v = v << 8 | uint8_t(d[p + i]);
        p += n;
        return true;
    };
    const auto line = [&](std::string& out) {
        const size_t nl = d.find('\n', p);
        if (nl == std::string_view::npos)
            return false;
        out.assign(d.substr(p, nl - p));
        p = nl + 1;
        return true;
    };
    const auto pushString = [&](std::string s) {
        strings.push_back(s);
        if (strings.size() > 2)
            strings.erase(strings.begin());
        last = std::move(s);
        lastIsString = true;
    };
    while (p < d.size()) {
        const uint8_t code = uint8_t(d[p++]);
        const bool wasString = lastIsString;
        lastIsString = false;
        uint64_t n = 0;
        std::string a, b;
        switch (code) {
        case '.':
            return names;
        case 'c':
        case 'i':
            if (!line(a) || !line(b))
                return names;
            names.push_back(a + "." + b);
            break;
        case 0x93:
            if (strings.size() == 2)
                names.push_back(strings[0] + "." + strings[1]);
            strings.clear();
            break;
        case 'X':
        case 0x8c:
        case 0x8d:
            if (!le(code == 'X' ? 4 : code == 0x8c ? 1 : 8, n) || n > d.size() - p)
                return names;
            pushString(std::string(d.substr(p, n)));
            p += n;
            break;
        case 'V':
        case 'S':
            if (!line(a))
                return names;
            pushString(a);
            break;
        case 'q':
        case 'r':
        case 0x94:
        case 'p': {
            uint64_t key = memo.size();
            if (code == 'p') {
                if (!line(a))
                    return names;
                key = std::strtoull(a.c_str(), nullptr, 10);
            } else if (code != 0x94 && !le(code == 'q' ? 1 : 4, key)) {
                return names;
            }
            if (wasString)
                memo[key] = last;
            lastIsString = wasString;
            break;
        }
        case 'h':
        case 'j':
        case 'g': {
            uint64_t key = 0;
            if (code == 'g') {
                if (!line(a))
                    return names;
                key = std::strtoull(a.c_str(), nullptr, 10);
            } else if (!le(code == 'h' ? 1 : 4, key)) {
                return names;
            }
            if (const auto it = memo.find(key); it != memo.end())
                pushString(it->second);
            break;
        }
        // Fixed-size arguments.
        case 0x80:
        case 'K':
        case 0x82:
            if (!le(1, n))
                return names;
            break;
        case 'M':
        case 0x83:
            if (!le(2, n))
                return names;
            break;
        case 'J':
        case 0x84:
            if (!le(4, n))
                return names;
            break;
        case 0x95:
        case 'G':
            if (!le(8, n))
                return names;
            break;
        // Length-prefixed arguments.
        case 0x8a:
        case 'U':
        case 'C':
        case 0x8b:
        case 'T':
        case 'B':
        case 0x8e:
        case 0x96: {
            const size_t width = (code == 0x8a || code == 'U' || code == 'C') ? 1
                                 : (code == 0x8e || code == 0x96)             ? 8
                                                                              : 4;
            if (!le(width, n) || n > d.size() - p)
                return names;
            p += n;
            break;
        }
        // One line of text.
        case 'I':
        case 'L':
        case 'F':
        case 'P':
            if (!line(a))
                return names;
            break;
        // No argument.
        case '(':
        case '0':
        case '1':
        case '2':
        case 'N':
        case 0x88:
        case 0x89:
        case ']':
        case 'l':
        case ')':
        case 't':
        case 0x85:
        case 0x86:
        case 0x87:
        case '}':
        case 'd':
        case 0x8f:
        case 0x91:
        case 'a':
        case 'e':
        case 0x90:
        case 's':
        case 'u':
        case 'R':
        case 0x81:
        case 0x92:
        case 'o':
        case 'b':
        case 'Q':
        case 0x97:
        case 0x98:
            break;
        default:
            break; // no opcode (the damage itself): on to the next byte
        }
    }
    return names;
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

std::optional<Dtype> torchDtypeNamed(std::string_view global) {
    if (!global.starts_with("torch."))
        return std::nullopt;
    for (const TorchDtype& x : kTorchDtypes)
        if (global.substr(6) == x.name)
            return x.dtype;
    return std::nullopt;
}

} // namespace ckptscope::pytorch
