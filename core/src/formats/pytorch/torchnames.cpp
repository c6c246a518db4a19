#include "formats/pytorch/torchnames.h"

#include "ckptscope/formats/checkpointerror.h"
#include "formats/objectsize.h"

#include <algorithm>
#include <vector>

namespace ckptscope::pytorch {

namespace {

std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}

// A tensor torch saves as its parts: the node whose items hold them and the
// names of those, in order. A sparse tensor's as torch names them
// (t.indices(), t.crow_indices()…): _rebuild_sparse_tensor(layout,
// (indices, values, size…)) or _rebuild_sparse_compressed_tensor(layout,
// (compressed, plain, values, size)); a nested tensor's as its rebuild call
// names its arguments: _rebuild_nested_tensor(buffer, sizes, strides,
// storage_offsets). No names for any other node.
struct TensorParts {
    uint32_t holder = kNoNode;
    std::vector<const char*> names;
};

TensorParts tensorParts(const ObjectTree& tree, const ObjectNode& n) {
    if (n.kind != ObjectKind::Object)
        return {};
    if (n.text == "torch._utils._rebuild_nested_tensor" && n.items.size() == 4)
        return {kNoNode, {"buffer", "sizes", "strides", "storage_offsets"}};
    if (n.items.size() != 2 || tree.at(n.items[0]).kind != ObjectKind::Global ||
        tree.at(n.items[1]).kind != ObjectKind::Tuple)
        return {};
    const std::string& layout = tree.at(n.items[0]).text;
    if (n.text == "torch._utils._rebuild_sparse_tensor" && layout == "torch.sparse_coo")
        return {n.items[1], {"indices", "values"}};
    if (n.text != "torch._utils._rebuild_sparse_compressed_tensor")
        return {};
    if (layout == "torch.sparse_csr" || layout == "torch.sparse_bsr")
        return {n.items[1], {"crow_indices", "col_indices", "values"}};
    if (layout == "torch.sparse_csc" || layout == "torch.sparse_bsc")
        return {n.items[1], {"ccol_indices", "row_indices", "values"}};
    return {};
}

// True when the strides are C order's for the sizes (dimensions of one
// element or none may have any stride, as torch's is_contiguous says).
bool contiguous(const std::vector<uint64_t>& size, const std::vector<uint64_t>& stride) {
    uint64_t expected = 1;
    for (size_t i = size.size(); i-- > 0;) {
        if (size[i] == 0)
            return true;
        if (size[i] != 1 && stride[i] != expected)
            return false;
        expected *= size[i];
    }
    return true;
}

class Namer {
public:
    Namer(FormatIndex& index, const TorchUnpickler& u, const std::vector<uint32_t>& storageOf)
        : m_index(index), m_tree(index.objects), m_u(u), m_storageOf(storageOf) {}

    void run() {
        const uint32_t root = m_tree.root;
        if (m_tree.at(root).kind == ObjectKind::Tensor)
            m_tree.root = nameTensor(root, "tensor");
        else
            visit(root, "");
        // Tensors the walk did not reach (inside other objects) name no entry.
        for (uint32_t i = 0; i < m_tree.nodes.size(); ++i)
            if (m_tree.nodes[i].kind == ObjectKind::Tensor && !has(i, kNamed))
                m_tree.nodes[i].tensor = kNoNode;
    }

private:
    // Node flags in a vector, not hash sets: an optimizer has 1.7 million nodes.
    static constexpr uint8_t kEntered = 1, kNamed = 2;
    bool has(uint32_t node, uint8_t flag) const {
        return node < m_flags.size() && (m_flags[node] & flag) != 0;
    }
    void set(uint32_t node, uint8_t flag) {
        if (node >= m_flags.size())
            m_flags.resize(std::max<size_t>(node + 1, m_tree.nodes.size()), 0);
        m_flags[node] |= flag;
    }
    bool enter(uint32_t node) {
        if (has(node, kEntered))
            return false;
        set(node, kEntered);
        return true;
    }

    // The state dict of a pickled nn.Module (its __dict__ holds
    // _parameters, _buffers and _modules), else kNoNode.
    uint32_t moduleState(uint32_t node) const {
        const ObjectNode& n = m_tree.at(node);
        if ((n.kind != ObjectKind::Object && n.kind != ObjectKind::Call) || n.state == kNoNode ||
            m_tree.at(n.state).kind != ObjectKind::Dict)
            return kNoNode;
        for (const char* key : {"_parameters", "_buffers", "_modules"})
            if (m_tree.find(n.state, key) == kNoNode)
                return kNoNode;
        return n.state;
    }

    // One level deeper in the walk. The open's depth check counts every path
    // of a tree without a cycle; through a cycle's shared values a walk can
    // reach deeper (a ladder of lists and tuples: 250 000 levels), refused
    // the same way rather than recursing that deep. The names' text is
    // bounded too: shared keys (one 64 KiB string as the key of 1 000 nested
    // dicts) would make names of gigabytes.
    class Level {
    public:
        Level(Namer& namer, size_t pathBytes) : m_namer(namer) {
            if (++m_namer.m_depth > kMaxObjectDepth)
                throw CheckpointError(CheckpointError::Kind::Invalid,
                                      "the pickled object nests more than " +
                                          std::to_string(kMaxObjectDepth) +
                                          " levels deep through shared values (too deep to show)");
            m_namer.spend(pathBytes);
        }
        ~Level() { --m_namer.m_depth; }
        Level(const Level&) = delete;
        Level& operator=(const Level&) = delete;

    private:
        Namer& m_namer;
    };

    // Counts a path the walk made against the budget of them all.
    void spend(size_t pathBytes) {
        if ((m_pathBytes += pathBytes) > kMaxPathBytes)
            throw CheckpointError(
                CheckpointError::Kind::Invalid,
                "the paths that name the pickled object's values take more than " +
                    std::to_string(kMaxPathBytes >> 20) + " MiB (long keys shared at many places)");
    }

    void visit(uint32_t node, const std::string& path) {
        const Level level(*this, path.size());
        const ObjectKind kind = m_tree.at(node).kind;
        if (kind == ObjectKind::Dict) {
            if (!enter(node))
                return;
            for (size_t i = 0; i + 1 < m_tree.at(node).items.size(); i += 2)
                visitSlot(node, i + 1, join(path, objectKeyText(m_tree, m_tree.at(node).items[i])));
        } else if (kind == ObjectKind::List || kind == ObjectKind::Tuple) {
            if (!enter(node))
                return;
            for (size_t i = 0; i < m_tree.at(node).items.size(); ++i)
                visitSlot(node, i, join(path, std::to_string(i)));
        } else if (moduleState(node) != kNoNode) {
            if (enter(node))
                walkModule(node, path);
        } else if (TensorParts parts = tensorParts(m_tree, m_tree.at(node)); !parts.names.empty()) {
            // A sparse or nested tensor is listed by its parts (sp.indices,
            // sp.values; nt.buffer…): dense tensors torch saves whole.
            const uint32_t holder = parts.holder == kNoNode ? node : parts.holder;
            if (!enter(node) || (holder != node && !enter(holder)))
                return;
            for (size_t i = 0; i < parts.names.size() && i < m_tree.at(holder).items.size(); ++i)
                if (m_tree.at(m_tree.at(holder).items[i]).kind == ObjectKind::Tensor)
                    visitSlot(holder, i, join(path, parts.names[i]));
        }
    }

    // state_dict()'s order: the module's parameters, its persistent buffers,
    // then each submodule's in turn.
    void walkModule(uint32_t module, const std::string& path) {
        const Level level(*this, path.size());
        const uint32_t state = moduleState(module);
        const uint32_t skip = m_tree.find(state, "_non_persistent_buffers_set");
        const auto nonPersistent = [&](uint32_t key) {
            if (skip == kNoNode)
                return false;
            for (uint32_t k : m_tree.at(skip).items)
                if (m_tree.at(k).kind == ObjectKind::String &&
                    m_tree.at(k).text == m_tree.at(key).text)
                    return true;
            return false;
        };
        for (const char* part : {"_parameters", "_buffers"}) {
            const uint32_t dict = m_tree.find(state, part);
            if (m_tree.at(dict).kind != ObjectKind::Dict || !enter(dict))
                continue;
            for (size_t i = 0; i + 1 < m_tree.at(dict).items.size(); i += 2) {
                const uint32_t key = m_tree.at(dict).items[i];
                const uint32_t value = m_tree.at(dict).items[i + 1];
                if (part[1] == 'b' && nonPersistent(key))
                    continue;
                // A tensor, or a sparse or nested one listed by its parts.
                if (m_tree.at(value).kind == ObjectKind::Tensor ||
                    !tensorParts(m_tree, m_tree.at(value)).names.empty())
                    visitSlot(dict, i + 1, join(path, objectKeyText(m_tree, key)));
            }
        }
        const uint32_t modules = m_tree.find(state, "_modules");
        if (m_tree.at(modules).kind != ObjectKind::Dict || !enter(modules))
            return;
        for (size_t i = 0; i + 1 < m_tree.at(modules).items.size(); i += 2) {
            const uint32_t child = m_tree.at(modules).items[i + 1];
            if (moduleState(child) != kNoNode && enter(child))
                walkModule(child, join(path, objectKeyText(m_tree, m_tree.at(modules).items[i])));
        }
    }

    void visitSlot(uint32_t parent, size_t slot, const std::string& path) {
        const uint32_t child = m_tree.at(parent).items[slot];
        if (m_tree.at(child).kind != ObjectKind::Tensor) {
            visit(child, path);
            return;
        }
        const uint32_t named = nameTensor(child, path);
        m_tree.nodes[parent].items[slot] = named;
    }

    // Lists the tensor of `node` as `name`; returns the node that names the
    // new entry (a copy when the node already names another).
    uint32_t nameTensor(uint32_t node, const std::string& name) {
        spend(name.size());
        if (!has(node, kNamed)) {
            const uint32_t pickled = m_tree.at(node).tensor;
            m_tree.nodes[node].tensor = addEntry(pickled, name, UINT32_MAX);
            set(node, kNamed);
            return node;
        }
        const uint32_t first = m_tree.at(node).tensor;
        ObjectNode copy = m_tree.at(node);
        copy.tensor = addEntry(m_pickledOf[first], name, first);
        const uint32_t id = m_tree.add(std::move(copy));
        set(id, kNamed);
        return id;
    }

    uint32_t addEntry(uint32_t pickled, const std::string& name, uint32_t sameAs) {
        const PickledTensor& t = m_u.tensors[pickled];
        uint64_t numel = 1;
        for (uint64_t d : t.size)
            if (__builtin_mul_overflow(numel, d, &numel))
                throw CheckpointError(CheckpointError::Kind::Invalid,
                                      "tensor " + quotedName(name) +
                                          ": its element count passes 2^64");
        TensorEntry e;
        e.name = name;
        e.shape = t.size;
        e.elementCount = numel;
        if (t.meta) { // a dtype and a shape, no bytes: 0 values stored
            e.dtype = t.dtype;
            e.dataLen = 0;
        } else {
            const uint32_t storage = m_storageOf[t.storage];
            const TensorStorage& s = m_index.storages[storage];
            e.dtype = s.dtype;
            e.dataLen = numel;
            const uint64_t item = dtypeSize(s.dtype);
            e.dataOffset = s.offset + std::min(t.offset, s.bytes / item) * item;
            TensorView v;
            v.storage = storage;
            v.elementOffset = t.offset;
            if (!contiguous(t.size, t.stride))
                v.strides.assign(t.stride.begin(), t.stride.end());
            e.view = uint32_t(m_index.views.size());
            m_index.views.push_back(std::move(v));
        }
        m_index.tensors.push_back(std::move(e));
        TensorTraits traits;
        traits.meta = t.meta;
        traits.sameAs = sameAs;
        traits.requiresGrad = t.requiresGrad;
        traits.isParameter = t.isParameter;
        traits.quantization = t.quantization;
        m_index.traits.push_back(std::move(traits));
        m_pickledOf.push_back(pickled);
        return uint32_t(m_index.tensors.size() - 1);
    }

    FormatIndex& m_index;
    ObjectTree& m_tree;
    const TorchUnpickler& m_u;
    const std::vector<uint32_t>& m_storageOf;
    std::vector<uint8_t> m_flags;
    uint32_t m_depth = 0;
    uint64_t m_pathBytes = 0;          // of every path the walk made
    std::vector<uint32_t> m_pickledOf; // per entry
};

} // namespace

void nameTensors(FormatIndex& index, const TorchUnpickler& u,
                 const std::vector<uint32_t>& storageOf) {
    Namer(index, u, storageOf).run();
}

} // namespace ckptscope::pytorch
