#pragma once

#include "ckptscope/formats/dtype.h"
#include "ckptscope/formats/objecttree.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ckptscope::pytorch {

// A storage a pickle names by persistent id ('storage', type, key, location,
// numel): its bytes lie in the archive's data/KEY record (zip) or after the
// pickles (legacy).
struct PickledStorage {
    std::string key;
    std::string_view type; // "torch.FloatStorage", as the pickle names it (a static name)
    Dtype dtype = Dtype::F32;
    uint64_t numel = 0;
    std::string location; // "cpu", "cuda:0": not used to read
};

// A tensor the pickle rebuilds (torch._utils._rebuild_tensor*): a view of
// one storage, in the storage's elements.
struct PickledTensor {
    uint32_t storage = 0; // into TorchUnpickler::storages
    uint64_t offset = 0;
    std::vector<uint64_t> size;
    std::vector<uint64_t> stride;
    bool requiresGrad = false;
    bool isParameter = false;
    std::string quantization; // a quantized tensor's quantizer parameters, as Python writes them
    // A tensor on the meta device (_rebuild_meta_tensor_no_storage): its
    // dtype and shape only, no storage (`storage` and `offset` unused).
    bool meta = false;
    Dtype dtype = Dtype::F32;
};

// How often a pickle names a global, and the nodes its calls made.
struct GlobalUse {
    uint64_t count = 0;
    std::vector<uint32_t> calls; // Object nodes: the global called (REDUCE, NEWOBJ…)
};

// Evaluates pickles into an ObjectTree without importing or calling
// anything: a loop over the opcodes of protocols 0-5 with a stack and a
// memo, the data globals understood (tensors, parameters, storages,
// OrderedDict, bytes, sets) and every other call kept as an Object node
// (its name and arguments), shown and never run. Shared references stay
// shared: a memo entry is one node however often it is fetched.
class TorchUnpickler {
public:
    // `where` names the pickle in messages ("model.pt: archive/data.pkl").
    TorchUnpickler(ObjectTree& tree, std::string where);

    // Runs one pickle whose first byte lies at `fileOffset` (for messages);
    // returns the node STOP leaves and sets `consumed` to the bytes read.
    // Throws CheckpointError ("truncated", "memo", "unknown storage type",
    // "dtype conflict", "negative"…), naming the byte.
    uint32_t run(std::string_view data, uint64_t fileOffset, uint64_t* consumed = nullptr);

    // objectDepth of the tree and objectExpandedSize of one of its nodes, as
    // the runs left them, without a walk of its (millions of) nodes; nullopt
    // when a run could not keep them exact and a walk must count.
    std::optional<uint32_t> depth() const;
    std::optional<uint64_t> expandedSize(uint32_t node, uint64_t limit) const;
    // The tree's depth: the kept figure, else objectDepth's walk up to `limit`.
    uint32_t depthWithin(uint32_t limit) const;

    std::vector<PickledStorage> storages;
    std::vector<PickledTensor> tensors; // ObjectNode::tensor indexes these
    std::map<std::string, GlobalUse> globals;
    std::vector<uint32_t> calledResults; // Call nodes: a call's result called

private:
    class Run;
    // Adds a node to the tree, noting its depth and expanded size.
    uint32_t add(ObjectNode n);
    // The one node of a value Python itself keeps once — None, False, True,
    // the empty tuple, the ints -5 to 256 (`value`) —, made on first use: an
    // optimizer's state makes five of them per tensor.
    uint32_t sharedValue(ObjectKind kind, int64_t value = 0);
    // A child given to a node after it was made (APPENDS, SETITEMS, BUILD):
    // its figures stay exact while no other node holds it yet, as a pickle
    // fills a container before putting it in its parent. Any other case (a
    // cycle can only be made so) gives the figures up.
    void gained(uint32_t node, uint32_t child);
    uint32_t storageNode(uint32_t pid, uint64_t at);
    uint32_t reduce(uint32_t callable, uint32_t args, uint64_t at);
    uint32_t rebuildTensor(const std::string& fn, std::span<const uint32_t> args, uint64_t at);
    uint32_t metaTensor(const std::string& fn, std::span<const uint32_t> args, uint64_t at);
    // The storage a storage node stands for, kNoNode for any other node.
    uint32_t storageOf(uint32_t node) const;
    // A call's argument that must be a count, or a tuple (torch.Size) of
    // them; throws naming the call and `what`.
    uint64_t countArg(uint32_t node, const char* what, const std::string& fn, uint64_t at) const;
    std::vector<uint64_t> countsArg(uint32_t node, const char* what, const std::string& fn,
                                    uint64_t at) const;
    [[noreturn]] void failCall(const std::string& fn, const std::string& what, uint64_t at) const;

    ObjectTree& m_tree;
    std::string m_where;
    // Per node from m_first on: the longest chain of values it heads (itself
    // included), its size with every shared value written out in full
    // (saturated at 2^32 - 1: compared with budgets below that), whether
    // another node holds it.
    uint32_t m_first = 0;
    std::vector<uint32_t> m_depth;
    std::vector<uint32_t> m_size;
    std::vector<uint8_t> m_held;
    uint32_t m_deepest = 0;
    bool m_exact = true;
    std::array<uint32_t, 262> m_smallInts; // sharedValue's nodes
    uint32_t m_none = kNoNode, m_emptyTuple = kNoNode;
    std::array<uint32_t, 2> m_bools{kNoNode, kNoNode};
    // Storage key → storage. torch.save numbers its storages "0", "1", "2"…
    // in order: such keys index a vector (a hash lookup per storage was a
    // cache miss each, 13% of an optimizer's evaluation); any other key, or
    // a number far past the storages seen, goes to the map.
    uint32_t findStorage(const std::string& key) const;
    void keepStorage(const std::string& key, uint32_t storage);
    std::vector<uint32_t> m_storageByNumber;
    std::unordered_map<std::string, uint32_t> m_storageByKey;
    // (storage node, storage) in node order: nodes are made in increasing order.
    std::vector<std::pair<uint32_t, uint32_t>> m_storageOfNode;
    // What a global is to the machine, found once from its name when its
    // node is made: the data functions and classes it understands.
    enum class Role : uint8_t {
        Other,
        RebuildTensor, // torch._utils._rebuild_tensor, _v2, _v3
        MetaTensor,
        QTensor,
        Parameter, // _rebuild_parameter, _with_state
        OrderedDict,
        CodecsEncode,
        Bytes,
        Set,
        FrozenSet,
        Storage, // a storage class: `storageType` indexes the table
    };
    struct GlobalNode {
        uint32_t node;
        std::pair<const std::string, GlobalUse>* use; // in `globals`: its key is a stable name
        Role role;
        uint8_t storageType; // into the storage classes' table; UINT8_MAX for none
    };
    static Role roleOf(std::string_view name);
    // A new Global node for `name`, counted in `globals`.
    uint32_t addGlobal(std::string name);
    // What the Global node `node` is, found from its name on first use.
    const GlobalNode& globalOf(uint32_t node);
    std::vector<GlobalNode> m_globalNodes; // in node order
};

// The globals named by the opcodes of `data` from byte `from` on, read
// without evaluating anything (as pickletools' genops walks a pickle): what
// a pickle broken on purpose hides after the spot where evaluation stopped.
// Stops at the end, at STOP, or at a byte that is no opcode.
std::vector<std::string> globalsByOpcodes(std::string_view data, size_t from);

// The dtype a torch global names ("torch.bfloat16"), nullopt for any other.
std::optional<Dtype> torchDtypeNamed(std::string_view global);

// The deepest chain of nested values in the tree, from any node (a value the
// pickle made and dropped too; a cycle counted once), computed without
// recursion; stops counting past `limit`. The recursive walks (JSON, repr,
// warnings) run only on trees within the limit.
uint32_t objectDepth(const ObjectTree& tree, uint32_t limit);

} // namespace ckptscope::pytorch
