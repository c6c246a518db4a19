#include "formats/dcp/plantree.h"

#include "ckptscope/formats/oxck/metadatacodec.h"

#include "formats/pytorch/pickleimports.h"
#include "formats/pytorch/pickletext.h"

#include <algorithm>
#include <array>
#include <new>

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
        // About one value per 6 bytes of a plan: reserved once, seldom
        // regrown (a copy touches new pages, and a fresh page costs about a
        // microsecond here).
        t.m_nodes.reserve(data.size() / 4);
        shape.reserve(data.size() / 4);
        // Every item was once on the stack, pushed by an opcode of at least
        // a byte: the items never outgrow this, so their spans stay valid.
        t.m_items.reserve(data.size());
        memo.reserve(data.size() / 8);
    }

    void go();

private:
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
        shape.push_back(0);
        return uint32_t(t.m_nodes.size() - 1);
    }
    // `child` put under `parent`. A value is complete when it is put in
    // another (the pickler writes a value whole, then uses it): one changed
    // after that, or put under itself, is left to the general machine. So
    // a height is final when it is used, and no cycle can form.
    void contain(uint32_t parent, uint32_t child) {
        if (child == parent)
            other();
        shape[child] |= kContained;
        const uint8_t h = std::max(height(parent), uint8_t(height(child) + 1));
        if (h > kMaxPlanDepth)
            other();
        shape[parent] = uint8_t((shape[parent] & kContained) | h);
    }
    uint8_t height(uint32_t n) const { return shape[n] & ~kContained; }
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
    // Values that cannot change — ints, tuples, torch.Size — are one node
    // per value while the table has room, as equal values may be: a plan
    // repeats few (64 tensors over 8 ranks: 2 500 ints of 71 values, 1 600
    // sizes of a few dozen), so it makes half the nodes. Equal items are
    // the same nodes, so items compare by node.
    struct Value {
        ObjectKind kind;
        int64_t integer;
        std::string_view text; // a global's name: the same view for the same name
        std::span<const uint32_t> items;
    };
    static uint64_t hashOf(const Value& v) {
        uint64_t h = uint64_t(v.kind) * 0x100000001b3u ^ uint64_t(v.integer) ^
                     reinterpret_cast<uintptr_t>(v.text.data());
        for (uint32_t i : v.items)
            h = (h ^ i) * 0x100000001b3u;
        return h * 0x9e3779b97f4a7c15u;
    }
    bool same(uint32_t n, const Value& v) {
        const PlanNode& x = node(n);
        return x.kind == v.kind && x.integer == v.integer && x.text.data() == v.text.data() &&
               std::equal(x.items.begin(), x.items.end(), v.items.begin(), v.items.end());
    }
    // The node of `v`, or the slot to keep its new node in (nullptr: the
    // table is full, or the probes ran out).
    uint32_t* interned(const Value& v, uint32_t*& empty) {
        empty = nullptr;
        for (size_t i = size_t(hashOf(v) >> 52), probes = 0; probes < 8;
             i = (i + 1) % kValues, ++probes) {
            if (values[i] == kNone) {
                if (internedValues < kValues / 2) // stays sparse: probes end soon
                    empty = &values[i];
                return nullptr;
            }
            if (same(values[i], v))
                return &values[i];
        }
        return nullptr;
    }
    void keep(uint32_t* slot) {
        if (slot) {
            *slot = stack.back();
            ++internedValues;
        }
    }
    void pushInteger(int64_t v) {
        if (v >= -5 && v <= 256)
            return pushShared(ObjectKind::Int, v);
        uint32_t* empty;
        if (const uint32_t* found = interned({ObjectKind::Int, v, {}, {}}, empty))
            return stack.push_back(*found);
        push(ObjectKind::Int, v);
        keep(empty);
    }
    // A container's items: one run of the items' array (nearly every
    // container gets all its items at once); the runs a list or dict gets
    // later (APPENDS come 1 000 items at a time) are kept apart, joined at
    // the end.
    void append(uint32_t target, std::span<const uint32_t> items) {
        if (items.empty())
            return;
        if (shape[target] & kContained)
            other();
        for (uint32_t i : items)
            contain(target, i);
        const size_t at = t.m_items.size();
        if (items.size() > t.m_items.capacity() - at) // never: each item was pushed by an opcode
            other();
        t.m_items.insert(t.m_items.end(), items.begin(), items.end());
        const std::span<const uint32_t> run = std::span<const uint32_t>(t.m_items).subspan(at);
        std::span<const uint32_t>& first = node(target).items;
        if (first.empty())
            first = run;
        else
            later[target].push_back(run);
    }
    // A new container of the stack's items from `from` on.
    void pushFrom(ObjectKind kind, size_t from) {
        const std::span<const uint32_t> items = std::span<const uint32_t>(stack).subspan(from);
        uint32_t* empty = nullptr;
        if (kind == ObjectKind::Tuple) {
            if (const uint32_t* found = interned({kind, 0, {}, items}, empty)) {
                const uint32_t n = *found;
                stack.resize(from);
                return stack.push_back(n);
            }
        }
        const uint32_t n = add(kind);
        append(n, items);
        stack.resize(from);
        stack.push_back(n);
        keep(empty);
    }
    void addItems(ObjectKind kind, uint32_t target, std::span<const uint32_t> items) {
        if (node(target).kind != kind || (kind == ObjectKind::Dict && items.size() % 2 != 0))
            other();
        append(target, items);
    }
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
    // Per node: its height (at most kMaxPlanDepth), and whether it is
    // in a container yet.
    static constexpr uint8_t kContained = 0x80;
    std::vector<uint8_t> shape;
    std::map<uint32_t, std::vector<std::span<const uint32_t>>> later; // runs after the first
    std::array<uint32_t, 262> smallInts = filled<262>();
    std::array<uint32_t, 2> bools = filled<2>();
    uint32_t emptyTuple = kNone, none = kNone;
    static constexpr size_t kValues = 4096; // hash >> 52: 12 bits; 16 KiB, four fresh pages
    std::vector<uint32_t> values = std::vector<uint32_t>(kValues, kNone);
    size_t internedValues = 0;

    template <size_t N> static std::array<uint32_t, N> filled() {
        std::array<uint32_t, N> a;
        a.fill(kNone);
        return a;
    }
};

void PlanTree::Run::call(uint32_t callable, uint32_t args, bool newobj) {
    const PlanNode& c = node(callable);
    if (c.kind != ObjectKind::Global || node(args).kind != ObjectKind::Tuple ||
        !(c.text.starts_with("torch.distributed.") || (!newobj && c.text == "torch.Size")))
        other();
    const std::string_view name = c.text;
    // torch.Size is a tuple: one node per size. Any other call's object is
    // its own (BUILD may give it a state).
    uint32_t* empty = nullptr;
    if (!newobj && name == "torch.Size") {
        if (const uint32_t* found =
                interned({ObjectKind::Object, 0, name, node(args).items}, empty))
            return stack.push_back(*found);
    }
    const uint32_t n = add(ObjectKind::Object);
    node(n).text = name;
    // The arguments' items, shared with their tuple (which no one changes).
    node(n).items = node(args).items;
    shape[n] = uint8_t(height(args));
    stack.push_back(n);
    keep(empty);
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
        case 0x8a: { // LONG1: one past 64 bits is the general machine's
            const std::optional<int64_t> v = pytorch::pickleInt64(take(le(1)));
            if (!v)
                other();
            pushInteger(*v);
            break;
        }
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
            if (from <= floor()) // the target below an enclosing mark: an underflow
                other();
            const std::span<const uint32_t> items = std::span<const uint32_t>(stack).subspan(from);
            addItems(code == 'e' ? ObjectKind::List : ObjectKind::Dict, stack[from - 1], items);
            stack.resize(from);
            break;
        }
        case 0x93: { // STACK_GLOBAL
            const uint32_t name = pop(), module = pop();
            // A plan's names are short; a long one (rebuilt at each use) is
            // left to the general machine.
            if (node(name).kind != ObjectKind::String || node(module).kind != ObjectKind::String ||
                node(module).text.size() + node(name).text.size() > 1024)
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
                      full.starts_with("torch.distributed.")))
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
                (shape[target] & kContained) || node(target).text == "torch.Size")
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

// The lists and dicts that got items more than once: their runs joined.
void PlanTree::Run::finish(uint32_t root) {
    size_t joined = 0;
    for (const auto& [n, runs] : later) {
        joined += node(n).items.size();
        for (const std::span<const uint32_t> r : runs)
            joined += r.size();
    }
    t.m_joined.reserve(joined); // not regrown: the spans into it stay valid
    for (const auto& [n, runs] : later) {
        const size_t at = t.m_joined.size();
        t.m_joined.insert(t.m_joined.end(), node(n).items.begin(), node(n).items.end());
        for (const std::span<const uint32_t> r : runs)
            t.m_joined.insert(t.m_joined.end(), r.begin(), r.end());
        node(n).items = std::span<const uint32_t>(t.m_joined).subspan(at);
    }
    t.m_root = root;
}

std::optional<PlanTree> PlanTree::read(std::string_view pickle) {
    PlanTree tree;
    try {
        Run(tree, pickle).go();
    } catch (const Other&) {
        return std::nullopt;
    } catch (const std::bad_alloc&) { // the general machine needs less, or says so
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
