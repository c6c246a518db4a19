#include "formats/pytorch/torchunpickler.h"

#include "formats/pytorch/picklerun.h"

#include <algorithm>
#include <type_traits>

namespace ckptscope::pytorch {

namespace {

using K = CheckpointError::Kind;

// torch's storage classes and the element types they hold.
struct StorageType {
    const char* name; // as the pickle names it
    Dtype dtype;
};
constexpr StorageType kStorageTypes[] = {
    {"torch.FloatStorage", Dtype::F32},
    {"torch.DoubleStorage", Dtype::F64},
    {"torch.HalfStorage", Dtype::F16},
    {"torch.BFloat16Storage", Dtype::BF16},
    {"torch.CharStorage", Dtype::I8},
    {"torch.ShortStorage", Dtype::I16},
    {"torch.IntStorage", Dtype::I32},
    {"torch.LongStorage", Dtype::I64},
    {"torch.ByteStorage", Dtype::U8},
    {"torch.BoolStorage", Dtype::Bool},
    {"torch.ComplexFloatStorage", Dtype::C64},
    {"torch.ComplexDoubleStorage", Dtype::C128},
    // Quantized tensors' integers (torch._utils._rebuild_qtensor). 4-bit and
    // 2-bit ones are packed two and four to a byte: their bytes, and their
    // tensors stay the rebuild call's object.
    {"torch.QInt8Storage", Dtype::QI8},
    {"torch.QUInt8Storage", Dtype::QU8},
    {"torch.QInt32Storage", Dtype::QI32},
    {"torch.QUInt4x2Storage", Dtype::U8},
    {"torch.QUInt2x4Storage", Dtype::U8},
    // torch >= 2.1 for dtypes with no typed storage class (float8, uint16…):
    // bytes, typed by the _rebuild_tensor_v3 that views them.
    {"torch.UntypedStorage", Dtype::U8},
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

// Sums of sizes stop at 2^32 - 1 (budgets are below it).
uint32_t saturatedSum(uint32_t a, uint32_t b) {
    return uint32_t(std::min<uint64_t>(uint64_t(a) + b, UINT32_MAX));
}

bool isBuiltin(std::string_view name, std::string_view fn) {
    for (std::string_view module : {"__builtin__.", "builtins."})
        if (name.size() == module.size() + fn.size() && name.starts_with(module) &&
            name.ends_with(fn))
            return true;
    return false;
}

constexpr uint8_t kNoStorageType = UINT8_MAX;

uint8_t storageTypeNamed(std::string_view name) {
    for (size_t i = 0; i < std::size(kStorageTypes); ++i)
        if (name == kStorageTypes[i].name)
            return uint8_t(i);
    return kNoStorageType;
}

// A canonical decimal ("0", "17"; not "007", "-1", "1e3"): the keys
// torch.save gives storages.
std::optional<uint64_t> storageNumber(std::string_view key) {
    if (key.empty() || key.size() > 9 || (key[0] == '0' && key.size() > 1))
        return std::nullopt;
    uint64_t v = 0;
    for (char c : key) {
        if (c < '0' || c > '9')
            return std::nullopt;
        v = v * 10 + uint64_t(c - '0');
    }
    return v;
}

} // namespace

TorchUnpickler::Role TorchUnpickler::roleOf(std::string_view name) {
    if (storageTypeNamed(name) != kNoStorageType)
        return Role::Storage;
    if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor" ||
        name == "torch._utils._rebuild_tensor_v3")
        return Role::RebuildTensor;
    if (name == "torch._utils._rebuild_meta_tensor_no_storage")
        return Role::MetaTensor;
    if (name == "torch._utils._rebuild_qtensor")
        return Role::QTensor;
    if (name == "torch._utils._rebuild_parameter" ||
        name == "torch._utils._rebuild_parameter_with_state")
        return Role::Parameter;
    if (name == "collections.OrderedDict")
        return Role::OrderedDict;
    if (name == "_codecs.encode")
        return Role::CodecsEncode;
    if (isBuiltin(name, "bytes"))
        return Role::Bytes;
    if (isBuiltin(name, "set"))
        return Role::Set;
    if (isBuiltin(name, "frozenset"))
        return Role::FrozenSet;
    return Role::Other;
}

uint32_t TorchUnpickler::addGlobal(std::string name) {
    ObjectNode n;
    n.kind = ObjectKind::Global;
    n.text = std::move(name);
    const uint32_t id = add(std::move(n));
    ++globalOf(id).use->second.count;
    return id;
}

const TorchUnpickler::GlobalNode& TorchUnpickler::globalOf(uint32_t node) {
    // Nodes are numbered in order: a node made now goes at the end.
    const auto it = std::lower_bound(m_globalNodes.begin(), m_globalNodes.end(), node,
                                     [](const GlobalNode& g, uint32_t n) { return g.node < n; });
    if (it != m_globalNodes.end() && it->node == node)
        return *it;
    const std::string& name = m_tree.at(node).text;
    return *m_globalNodes.insert(
        it, {node, &*globals.try_emplace(name).first, roleOf(name), storageTypeNamed(name)});
}

uint32_t TorchUnpickler::findStorage(const std::string& key) const {
    if (const std::optional<uint64_t> n = storageNumber(key); n && *n < m_storageByNumber.size())
        return m_storageByNumber[*n];
    const auto it = m_storageByKey.find(key);
    return it == m_storageByKey.end() ? kNoNode : it->second;
}

void TorchUnpickler::keepStorage(const std::string& key, uint32_t storage) {
    // A number within reach of the storages seen grows the vector (never
    // what a file merely claims: at most twice the storages plus 1 024).
    const std::optional<uint64_t> n = storageNumber(key);
    if (n && *n <= 2 * uint64_t(storages.size()) + 1024) {
        if (*n >= m_storageByNumber.size())
            m_storageByNumber.resize(*n + 1, kNoNode);
        m_storageByNumber[*n] = storage;
        return;
    }
    m_storageByKey.emplace(key, storage);
}

TorchUnpickler::TorchUnpickler(ObjectTree& tree, std::string where)
    : m_tree(tree), m_where(std::move(where)), m_first(uint32_t(tree.nodes.size())) {
    m_smallInts.fill(kNoNode);
}

uint32_t TorchUnpickler::sharedValue(ObjectKind kind, int64_t value) {
    uint32_t& slot = kind == ObjectKind::None    ? m_none
                     : kind == ObjectKind::Bool  ? m_bools[value != 0]
                     : kind == ObjectKind::Tuple ? m_emptyTuple
                                                 : m_smallInts.at(size_t(value + 5));
    if (slot == kNoNode) {
        ObjectNode n;
        n.kind = kind;
        n.integer = kind == ObjectKind::Bool ? value != 0 : kind == ObjectKind::Int ? value : 0;
        slot = add(std::move(n));
    }
    return slot;
}

uint32_t TorchUnpickler::add(ObjectNode n) {
    uint32_t depth = 1;
    uint32_t size = 1;
    const auto child = [&](uint32_t c) {
        if (c == kNoNode)
            return;
        if (c < m_first || c - m_first >= m_depth.size()) {
            m_exact = false; // a node this unpickler did not make
            return;
        }
        m_held[c - m_first] = 1;
        depth = std::max(depth, m_depth[c - m_first] + 1);
        size = saturatedSum(size, m_size[c - m_first]);
    };
    for (uint32_t c : n.items)
        child(c);
    for (uint32_t c : {n.callee, n.state, n.listItems, n.dictItems})
        child(c);
    const uint32_t id = m_tree.add(std::move(n));
    if (id - m_first != m_depth.size())
        m_exact = false; // another writer added nodes in between
    m_depth.push_back(depth);
    m_size.push_back(size);
    m_held.push_back(0);
    m_deepest = std::max(m_deepest, depth);
    return id;
}

void TorchUnpickler::gained(uint32_t node, uint32_t child) {
    if (child == kNoNode)
        return;
    const uint64_t n = uint64_t(node) - m_first, c = uint64_t(child) - m_first;
    if (node < m_first || child < m_first || n >= m_depth.size() || c >= m_depth.size()) {
        m_exact = false;
        return;
    }
    m_held[c] = 1; // first: a node given itself is then held
    if (m_held[n]) {
        m_exact = false;
        return;
    }
    m_depth[n] = std::max(m_depth[n], m_depth[c] + 1);
    m_size[n] = saturatedSum(m_size[n], m_size[c]);
    m_deepest = std::max(m_deepest, m_depth[n]);
}

std::optional<uint32_t> TorchUnpickler::depth() const {
    if (!m_exact || m_first != 0)
        return std::nullopt;
    return m_deepest;
}

uint32_t TorchUnpickler::depthWithin(uint32_t limit) const {
    const std::optional<uint32_t> kept = depth();
    return kept ? *kept : objectDepth(m_tree, limit);
}

std::optional<uint64_t> TorchUnpickler::expandedSize(uint32_t node, uint64_t limit) const {
    if (node == kNoNode)
        return 0;
    if (!m_exact || node < m_first || node - m_first >= m_size.size() || limit >= UINT32_MAX)
        return std::nullopt;
    return std::min<uint64_t>(m_size[node - m_first], limit + 1);
}

uint32_t TorchUnpickler::run(std::string_view data, uint64_t fileOffset, uint64_t* consumed) {
    // Up to one value per 4 bytes of pickle (a DCP plan: one per 5; a state
    // dict: one per 12): reserved once, not regrown.
    m_tree.nodes.reserve(m_tree.nodes.size() + data.size() / 4);
    m_depth.reserve(m_tree.nodes.capacity() - m_first);
    m_size.reserve(m_tree.nodes.capacity() - m_first);
    m_held.reserve(m_tree.nodes.capacity() - m_first);
    Run r(*this, data, fileOffset);
    return r.go(consumed);
}

uint32_t TorchUnpickler::storageNode(uint32_t pid, uint64_t at) {
    const auto fail = [&](K kind, const std::string& what) {
        throw CheckpointError(kind, m_where + ": byte " + std::to_string(at) + ": " + what, at);
    };
    const ObjectNode& p = m_tree.at(pid); // no node is added before its last use
    const auto item = [&](size_t i) -> const ObjectNode& { return m_tree.at(p.items[i]); };
    if (p.kind != ObjectKind::Tuple || p.items.size() < 5 || item(0).kind != ObjectKind::String ||
        item(0).text != "storage")
        fail(K::Invalid, "a persistent id that is not ('storage', type, key, location, numel)");
    if (item(1).kind != ObjectKind::Global)
        fail(K::Invalid, "a storage whose type is not a class");
    const std::string& type = item(1).text;
    const uint8_t typeIndex = globalOf(p.items[1]).storageType;
    if (typeIndex == kNoStorageType)
        fail(K::Invalid, "unknown storage type " + type);
    const StorageType* st = &kStorageTypes[typeIndex];
    if (item(2).kind != ObjectKind::String)
        fail(K::Invalid, "a storage key that is not a string");
    const std::string& key = item(2).text;
    if (item(4).kind != ObjectKind::Int || item(4).integer < 0)
        fail(K::Invalid, "storage \"" + key + "\": its element count is not a count (negative)");
    const uint64_t numel = uint64_t(item(4).integer);
    if (numel > uint64_t(INT64_MAX) / dtypeSize(st->dtype))
        fail(K::Invalid, "storage \"" + key + "\": " + std::to_string(numel) + " elements of " +
                             std::to_string(dtypeSize(st->dtype)) + " bytes overflow 2^63 bytes");
    uint32_t index = findStorage(key);
    if (index == kNoNode) {
        index = uint32_t(storages.size());
        keepStorage(key, index);
        PickledStorage s;
        s.key = key;
        s.type = st->name;
        s.dtype = st->dtype;
        s.numel = numel;
        s.location = item(3).kind == ObjectKind::String ? item(3).text : std::string();
        storages.push_back(std::move(s));
    } else {
        if (storages[index].dtype != st->dtype)
            fail(K::Invalid, "storage \"" + key + "\": dtype conflict: named as " +
                                 std::string(storages[index].type) + " and as " + type);
        storages[index].numel = std::max(storages[index].numel, numel);
    }
    ObjectNode n;
    n.kind = ObjectKind::Object;
    n.text = st->name;
    n.items = {p.items[2]};
    const uint32_t id = add(std::move(n));
    m_storageOfNode.emplace_back(id, index);
    return id;
}

uint32_t TorchUnpickler::storageOf(uint32_t node) const {
    const auto it = std::lower_bound(m_storageOfNode.begin(), m_storageOfNode.end(),
                                     std::pair<uint32_t, uint32_t>(node, 0));
    return it != m_storageOfNode.end() && it->first == node ? it->second : kNoNode;
}

void TorchUnpickler::failCall(const std::string& fn, const std::string& what, uint64_t at) const {
    throw CheckpointError(K::Invalid,
                          m_where + ": byte " + std::to_string(at) + ": " + fn + ": " + what, at);
}

uint64_t TorchUnpickler::countArg(uint32_t node, const char* what, const std::string& fn,
                                  uint64_t at) const {
    const ObjectNode& n = m_tree.at(node);
    if (n.kind != ObjectKind::Int)
        failCall(fn, std::string(what) + " is not an integer", at);
    if (n.integer < 0)
        failCall(fn, std::string("negative ") + what + " " + std::to_string(n.integer), at);
    return uint64_t(n.integer);
}

std::vector<uint64_t> TorchUnpickler::countsArg(uint32_t node, const char* what,
                                                const std::string& fn, uint64_t at) const {
    const ObjectNode* n = &m_tree.at(node);
    if (n->kind == ObjectKind::Object && n->items.size() == 1) // torch.Size((…))
        n = &m_tree.at(n->items[0]);
    if (n->kind != ObjectKind::Tuple && n->kind != ObjectKind::List)
        failCall(fn, std::string(what) + " is not a tuple", at);
    std::vector<uint64_t> v;
    v.reserve(n->items.size());
    for (uint32_t i : n->items)
        v.push_back(countArg(i, what, fn, at));
    return v;
}

uint32_t TorchUnpickler::metaTensor(const std::string& fn, std::span<const uint32_t> args,
                                    uint64_t at) {
    // (dtype, size, stride, requires_grad): no storage, no values.
    if (args.size() < 3)
        failCall(fn, "expected (dtype, size, stride, …)", at);
    const ObjectNode& d = m_tree.at(args[0]);
    const std::optional<Dtype> dtype =
        d.kind == ObjectKind::Global ? torchDtypeNamed(d.text) : std::nullopt;
    if (!dtype)
        failCall(fn,
                 "a dtype torch does not have: " +
                     (d.kind == ObjectKind::Global ? d.text : std::string("(not a dtype)")),
                 at);
    PickledTensor t;
    t.meta = true;
    t.dtype = *dtype;
    t.size = countsArg(args[1], "size", fn, at);
    t.stride = countsArg(args[2], "stride", fn, at);
    if (t.size.size() != t.stride.size())
        failCall(fn,
                 std::to_string(t.size.size()) + " sizes but " + std::to_string(t.stride.size()) +
                     " strides",
                 at);
    if (args.size() > 3 && m_tree.at(args[3]).kind == ObjectKind::Bool)
        t.requiresGrad = m_tree.at(args[3]).integer != 0;
    ObjectNode n;
    n.kind = ObjectKind::Tensor;
    n.tensor = uint32_t(tensors.size());
    tensors.push_back(std::move(t));
    return add(std::move(n));
}

uint32_t TorchUnpickler::rebuildTensor(const std::string& fn, std::span<const uint32_t> args,
                                       uint64_t at) {
    const auto fail = [&](const std::string& what) { failCall(fn, what, at); };
    if (args.size() < 4)
        fail("expected (storage, offset, size, stride, …)");
    const uint32_t storage = storageOf(args[0]);
    if (storage == kNoNode)
        fail("its first argument is not a storage");
    PickledTensor t;
    t.storage = storage;
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
    t.offset = countArg(args[1], "storage offset", fn, at);
    t.size = countsArg(args[2], "size", fn, at);
    t.stride = countsArg(args[3], "stride", fn, at);
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
    return add(std::move(n));
}

uint32_t TorchUnpickler::reduce(uint32_t callable, uint32_t args, uint64_t at) {
    // The arguments are read where they are: a tuple's items past two are a
    // heap block that adding nodes (moving the tree's nodes, which move
    // without copying) leaves in place; two or fewer live in the node and
    // are copied out first.
    static_assert(std::is_nothrow_move_constructible_v<ObjectNode>);
    const ObjectKind kind = m_tree.at(callable).kind;
    const ObjectNode& argsNode = m_tree.at(args);
    std::span<const uint32_t> a = argsNode.kind == ObjectKind::Tuple
                                      ? std::span<const uint32_t>(argsNode.items)
                                      : std::span<const uint32_t>(&args, 1);
    uint32_t few[2];
    if (a.size() <= 2) {
        std::copy(a.begin(), a.end(), few);
        a = std::span<const uint32_t>(few, a.size());
    }
    ObjectNode n;
    if (kind != ObjectKind::Global) { // a call of what a call gave
        n.kind = ObjectKind::Call;
        n.callee = callable;
        n.items.assign(a);
        const uint32_t id = add(std::move(n));
        calledResults.push_back(id);
        return id;
    }
    // The global's name from `globals`, whose keys do not move (a node's
    // text may: adding a node can move the tree), and what it is, found
    // when its node was made: a DCP plan makes thousands of calls.
    const GlobalNode& g = globalOf(callable);
    auto* const use = g.use;
    const Role role = g.role;
    const std::string& fn = use->first;
    if (role == Role::RebuildTensor)
        return rebuildTensor(fn, a, at);
    if (role == Role::MetaTensor)
        return metaTensor(fn, a, at);
    if (role == Role::QTensor && a.size() > 4) {
        // (storage, offset, size, stride, quantizer parameters, requires_grad,
        // hooks): a tensor of stored integers, its parameters kept as text.
        const uint32_t storage = storageOf(a[0]);
        if (storage != kNoNode && isQuantized(storages[storage].dtype)) {
            const std::string params = objectKeyText(m_tree, a[4]);
            const uint32_t node = rebuildTensor(fn, a, at);
            PickledTensor& t = tensors.back();
            t.quantization = params;
            if (a.size() > 5 && m_tree.at(a[5]).kind == ObjectKind::Bool)
                t.requiresGrad = m_tree.at(a[5]).integer != 0;
            return node;
        }
    }
    if (role == Role::Parameter && !a.empty() && m_tree.at(a[0]).kind == ObjectKind::Tensor) {
        PickledTensor& t = tensors[m_tree.at(a[0]).tensor];
        t.isParameter = true;
        if (a.size() > 1 && m_tree.at(a[1]).kind == ObjectKind::Bool)
            t.requiresGrad = m_tree.at(a[1]).integer != 0;
        return a[0];
    }
    if (role == Role::OrderedDict && a.empty()) {
        n.kind = ObjectKind::Dict;
        return add(std::move(n));
    }
    if (role == Role::CodecsEncode && a.size() == 2 && m_tree.at(a[0]).kind == ObjectKind::String &&
        m_tree.at(a[1]).kind == ObjectKind::String &&
        (m_tree.at(a[1]).text == "latin1" || m_tree.at(a[1]).text == "latin-1")) {
        std::string bytes;
        if (latin1Bytes(m_tree.at(a[0]).text, bytes)) {
            n.kind = ObjectKind::Bytes;
            n.text = std::move(bytes);
            return add(std::move(n));
        }
    }
    if (role == Role::Bytes && a.empty()) {
        n.kind = ObjectKind::Bytes;
        return add(std::move(n));
    }
    if ((role == Role::Set || role == Role::FrozenSet) &&
        (a.empty() || (a.size() == 1 && m_tree.at(a[0]).kind == ObjectKind::List))) {
        n.kind = role == Role::Set ? ObjectKind::Set : ObjectKind::FrozenSet;
        if (!a.empty())
            n.items = m_tree.at(a[0]).items;
        return add(std::move(n));
    }
    n.kind = ObjectKind::Object;
    n.items.assign(a);
    n.text = fn;
    const uint32_t id = add(std::move(n));
    use->second.calls.push_back(id);
    return id;
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
