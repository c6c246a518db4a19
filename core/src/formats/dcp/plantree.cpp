#include "formats/dcp/plantree.h"

#include "ckptscope/formats/oxck/metadatacodec.h"

#include "formats/pytorch/pickleimports.h"

#include <algorithm>
#include <array>

namespace ckptscope::dcp {

namespace {

// Deeper than a plan nests (Metadata → dict → TensorStorageMetadata → its
// dict → chunks → ChunkStorageMetadata → its dict → torch.Size → tuple →
// int is ten levels): left to the general machine's depth check.
constexpr uint32_t kMaxPlanDepth = 64;

// Not this machine's input: the general machine reads it.
struct Other {};

} // namespace

class PlanTree::Run {
public:
    Run(PlanTree& tree, std::string_view data) : t(tree), d(data) {
        // About one value per 6 bytes of a plan, and an item per value:
        // reserved once, not regrown (a copy touches new pages, and a fresh
        // page costs about a microsecond here).
        t.m_nodes.reserve(data.size() / 4);
        links.reserve(data.size() / 4);
        run.reserve(data.size() / 2);
        runs.reserve(data.size() / 8);
        memo.reserve(data.size() / 8);
    }

    void go();

private:
    // A container's items while the plan is read: runs of the shared array
    // (a list's APPENDS come 1 000 items at a time, between its items' own).
    struct Segment {
        uint32_t start, count, next;
    };
    static constexpr uint32_t kNone = UINT32_MAX;

    [[noreturn]] static void other() { throw Other{}; }
    std::string_view take(uint64_t n) {
        if (n > d.size() - p)
            other();
        const std::string_view s = d.substr(p, size_t(n));
        p += size_t(n);
        return s;
    }
    uint64_t le(int n) {
        const std::string_view s = take(uint64_t(n));
        uint64_t v = 0;
        for (int i = n - 1; i >= 0; --i)
            v = v << 8 | uint8_t(s[size_t(i)]);
        return v;
    }
    size_t floor() const { return marks.empty() ? 0 : marks.back(); }
    uint32_t pop() {
        if (stack.size() <= floor())
            other();
        const uint32_t v = stack.back();
        stack.pop_back();
        return v;
    }
    uint32_t top() const {
        if (stack.size() <= floor())
            other();
        return stack.back();
    }
    size_t takeMark() {
        if (marks.empty())
            other();
        const size_t m = marks.back();
        marks.pop_back();
        return m;
    }
    PlanNode& node(uint32_t n) { return t.m_nodes[n]; }
    uint32_t add(ObjectKind kind) {
        t.m_nodes.push_back({kind, kNoNode, 0, {}, {}});
        links.push_back({});
        return uint32_t(t.m_nodes.size() - 1);
    }
    // `child` put under `parent`. A value is complete when it is put in
    // another (the pickler writes a value whole, then uses it): one changed
    // after that, or put under itself, is left to the general machine. So
    // a height is final when it is used, and no cycle can form.
    void contain(uint32_t parent, uint32_t child) {
        if (child == parent)
            other();
        links[child].contained = true;
        links[parent].height = std::max(links[parent].height, uint16_t(links[child].height + 1));
        if (links[parent].height > kMaxPlanDepth)
            other();
    }
    void push(ObjectKind kind, int64_t integer = 0) {
        const uint32_t n = add(kind);
        node(n).integer = integer;
        stack.push_back(n);
    }
    // None, the bools, ints from -5 to 256 and the empty tuple: one node
    // each, as Python (and the general machine) keeps them. Most of a
    // plan's ints are offsets of 0 and small sizes.
    void pushShared(ObjectKind kind, int64_t integer = 0) {
        uint32_t& slot = kind == ObjectKind::Int     ? smallInts[size_t(integer + 5)]
                         : kind == ObjectKind::Bool  ? bools[integer != 0]
                         : kind == ObjectKind::Tuple ? emptyTuple
                                                     : none;
        if (slot == kNone) {
            push(kind, integer);
            slot = stack.back();
        } else {
            stack.push_back(slot);
        }
    }
    void pushInteger(int64_t v) {
        if (v >= -5 && v <= 256)
            pushShared(ObjectKind::Int, v);
        else
            push(ObjectKind::Int, v);
    }
    void append(uint32_t target, std::span<const uint32_t> items) {
        if (items.empty())
            return;
        if (links[target].contained)
            other();
        for (uint32_t i : items)
            contain(target, i);
        const Segment s{uint32_t(run.size()), uint32_t(items.size()), kNone};
        run.insert(run.end(), items.begin(), items.end());
        Links& l = links[target];
        (l.head == kNone ? l.head : runs[l.tail].next) = uint32_t(runs.size());
        l.tail = uint32_t(runs.size());
        runs.push_back(s);
    }
    // A new container of the stack's items from `from` on.
    void pushFrom(ObjectKind kind, size_t from) {
        const uint32_t n = add(kind);
        append(n, std::span<const uint32_t>(stack).subspan(from));
        stack.resize(from);
        stack.push_back(n);
    }
    void addItems(ObjectKind kind, uint32_t target, std::span<const uint32_t> items) {
        if (node(target).kind != kind || (kind == ObjectKind::Dict && items.size() % 2 != 0))
            other();
        append(target, items);
    }
    void pushInt(std::string_view bytes); // LONG1's little-endian two's complement
    void memoPut(uint64_t key) {
        if (key < memo.size())
            memo[size_t(key)] = top();
        else if (key == memo.size())
            memo.push_back(top());
        else
            other(); // the general machine reads sparse memos
    }
    void memoGet(uint64_t key) {
        if (key >= memo.size())
            other();
        stack.push_back(memo[size_t(key)]);
    }
    // A call of `callable` kept as an Object node, as the general machine
    // keeps a call of a global it does not rebuild: torch.Size and
    // torch.distributed's classes only.
    void call(uint32_t callable, uint32_t args, bool newobj);
    void finish(uint32_t root);

    PlanTree& t;
    std::string_view d;
    size_t p = 0;
    std::vector<uint32_t> stack, memo;
    std::vector<size_t> marks;
    std::vector<uint32_t> run; // the segments' items
    std::vector<Segment> runs;
    struct Links {
        uint32_t head = kNone, tail = kNone; // the node's first and last segment
        uint16_t height = 0;
        bool contained = false;
    };
    std::vector<Links> links;
    std::array<uint32_t, 262> smallInts = filled<262>();
    std::array<uint32_t, 2> bools = filled<2>();
    uint32_t emptyTuple = kNone, none = kNone;

    template <size_t N> static std::array<uint32_t, N> filled() {
        std::array<uint32_t, N> a;
        a.fill(kNone);
        return a;
    }
};

void PlanTree::Run::pushInt(std::string_view bytes) {
    // Beyond 8 bytes only sign extension: the value fits in 64 bits, as
    // the general machine reads it then.
    const bool negative = !bytes.empty() && (uint8_t(bytes.back()) & 0x80);
    for (size_t i = 8; i < bytes.size(); ++i)
        if (uint8_t(bytes[i]) != (negative ? 0xff : 0x00))
            other();
    if (bytes.size() > 8 && (negative != ((uint8_t(bytes[7]) & 0x80) != 0)))
        other();
    const size_t n = std::min<size_t>(bytes.size(), 8);
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
        v = v << 8 | uint8_t(bytes[i]);
    if (n > 0 && n < 8 && negative)
        v |= ~uint64_t(0) << (8 * n);
    if (n == 8 && bytes.size() == 8 && negative != (int64_t(v) < 0))
        other();
    pushInteger(int64_t(v));
}

void PlanTree::Run::call(uint32_t callable, uint32_t args, bool newobj) {
    const PlanNode& c = node(callable);
    if (c.kind != ObjectKind::Global || node(args).kind != ObjectKind::Tuple ||
        !(c.text.starts_with("torch.distributed.") || (!newobj && c.text == "torch.Size")))
        other();
    const std::string_view name = c.text;
    const uint32_t n = add(ObjectKind::Object);
    node(n).text = name;
    // The arguments' items, shared with their tuple (which no one changes).
    links[n].head = links[args].head;
    links[n].tail = links[args].tail;
    links[n].height = links[args].height;
    stack.push_back(n);
}

void PlanTree::Run::go() {
    for (;;) {
        if (p == d.size())
            other();
        const uint8_t code = uint8_t(d[p++]);
        switch (code) {
        case 0x80: // PROTO
            if (const uint64_t v = le(1); v < 2 || v > 5)
                other();
            break;
        case 0x95: // FRAME: a length hint
            le(8);
            break;
        case 0x94: // MEMOIZE
            memoPut(memo.size());
            break;
        case 'q': // BINPUT
            memoPut(le(1));
            break;
        case 'r': // LONG_BINPUT
            memoPut(le(4));
            break;
        case 'h': // BINGET
            memoGet(le(1));
            break;
        case 'j': // LONG_BINGET
            memoGet(le(4));
            break;
        case '(':
            marks.push_back(stack.size());
            break;
        case 'N':
            pushShared(ObjectKind::None);
            break;
        case 0x88:
        case 0x89:
            pushShared(ObjectKind::Bool, code == 0x88);
            break;
        case 'K':
            pushInteger(int64_t(le(1)));
            break;
        case 'M':
            pushInteger(int64_t(le(2)));
            break;
        case 'J':
            pushInteger(int64_t(int32_t(uint32_t(le(4)))));
            break;
        case 0x8a: // LONG1
            pushInt(take(le(1)));
            break;
        case 0x8c: // SHORT_BINUNICODE
        case 'X':  // BINUNICODE
        case 0x8d: // BINUNICODE8
        {
            const std::string_view s = take(le(code == 0x8c ? 1 : code == 'X' ? 4 : 8));
            if (!isValidUtf8(s))
                other();
            push(ObjectKind::String);
            node(stack.back()).text = s;
            break;
        }
        case ')':
            pushShared(ObjectKind::Tuple);
            break;
        case 0x85:
        case 0x86:
        case 0x87: { // TUPLE1-3
            const size_t n = size_t(code - 0x84);
            if (stack.size() < floor() + n)
                other();
            pushFrom(ObjectKind::Tuple, stack.size() - n);
            break;
        }
        case 't':
            pushFrom(ObjectKind::Tuple, takeMark());
            break;
        case ']':
            push(ObjectKind::List);
            break;
        case 'l':
            pushFrom(ObjectKind::List, takeMark());
            break;
        case '}':
            push(ObjectKind::Dict);
            break;
        case 'd': {
            const size_t from = takeMark();
            if ((stack.size() - from) % 2 != 0)
                other();
            pushFrom(ObjectKind::Dict, from);
            break;
        }
        case 'a': {
            const uint32_t v = pop();
            addItems(ObjectKind::List, top(), {&v, 1});
            break;
        }
        case 's': {
            const uint32_t v = pop(), k = pop();
            const uint32_t pair[2] = {k, v};
            addItems(ObjectKind::Dict, top(), pair);
            break;
        }
        case 'e':   // APPENDS
        case 'u': { // SETITEMS
            const size_t from = takeMark();
            if (from == 0)
                other();
            const std::span<const uint32_t> items = std::span<const uint32_t>(stack).subspan(from);
            addItems(code == 'e' ? ObjectKind::List : ObjectKind::Dict, stack[from - 1], items);
            stack.resize(from);
            break;
        }
        case 0x93: { // STACK_GLOBAL
            const uint32_t name = pop(), module = pop();
            if (node(name).kind != ObjectKind::String || node(module).kind != ObjectKind::String)
                other();
            std::string full;
            full.reserve(node(module).text.size() + 1 + node(name).text.size());
            full.append(node(module).text).append(1, '.').append(node(name).text);
            auto it = t.m_globals.find(full);
            if (it == t.m_globals.end()) {
                // The data globals, and torch.distributed's own classes
                // (an unknown global told for no other module): anything else
                // gets the general machine's warnings.
                if (!(pytorch::globalTier(full) == ImportRisk::Safe ||
                      full.starts_with("torch.distributed.") || full == "torch.strided"))
                    other();
                it = t.m_globals.emplace(std::move(full), 0).first;
            }
            ++it->second;
            push(ObjectKind::Global);
            node(stack.back()).text = it->first;
            break;
        }
        case 'R': {
            const uint32_t args = pop(), callable = pop();
            call(callable, args, false);
            break;
        }
        case 0x81: { // NEWOBJ
            const uint32_t args = pop(), cls = pop();
            call(cls, args, true);
            break;
        }
        case 'b': { // BUILD
            const uint32_t state = pop();
            const uint32_t target = top();
            if (node(target).kind != ObjectKind::Object || node(target).state != kNoNode ||
                links[target].contained)
                other();
            contain(target, state);
            node(target).state = state;
            break;
        }
        case '.': // STOP
            finish(pop());
            return;
        default:
            other();
        }
    }
}

// The items laid out: a node of one segment (nearly all) keeps it where
// it is, the items of several are joined at the end.
void PlanTree::Run::finish(uint32_t root) {
    for (size_t n = 0; n < t.m_nodes.size(); ++n) {
        const Links& l = links[n];
        if (l.head != kNone && runs[l.head].next != kNone) {
            const uint32_t start = uint32_t(run.size());
            for (uint32_t s = l.head; s != kNone; s = runs[s].next)
                for (uint32_t i = 0; i < runs[s].count; ++i)
                    run.push_back(run[runs[s].start + i]);
            runs[l.head] = {start, uint32_t(run.size()) - start, kNone};
        }
    }
    t.m_items = std::move(run);
    const std::span<const uint32_t> all(t.m_items);
    for (size_t n = 0; n < t.m_nodes.size(); ++n)
        if (const uint32_t h = links[n].head; h != kNone)
            t.m_nodes[n].items = all.subspan(runs[h].start, runs[h].count);
    t.m_root = root;
}

std::optional<PlanTree> PlanTree::read(std::string_view pickle) {
    PlanTree tree;
    try {
        Run(tree, pickle).go();
    } catch (const Other&) {
        return std::nullopt;
    }
    return tree;
}

std::vector<PickleImport> PlanTree::imports() const {
    std::vector<PickleImport> out;
    for (const auto& [name, count] : m_globals)
        out.push_back({name, count, pytorch::globalTier(name), {}});
    return out;
}

} // namespace ckptscope::dcp
