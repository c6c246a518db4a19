#pragma once

// A DCP plan (.metadata) read by a narrow pickle machine into a compact
// tree: the general one (pytorch::TorchUnpickler) builds an ObjectNode of
// 88 bytes with its own text for each of a plan's values — 11 000 of them
// for 64 tensors over 8 ranks, 0.66 ms, half of opening the folder. This
// one reads only what torch.distributed.checkpoint's pickler writes: its
// dataclasses (NEWOBJ + BUILD of a dict), torch.Size, dtypes, ints, str,
// tuples, lists, dicts and the memo. Texts are views of the pickle's bytes,
// items one shared array; nothing is called or imported, as in the general
// machine. Anything else — another opcode or global, a global that is not
// a data global or torch.distributed's, a cycle, a plan nested deeper than
// a dataclass plan is — makes read() return nullopt, and the general
// machine reads the plan (and words its errors and warnings).

#include "ckptscope/formats/formatindex.h"
#include "ckptscope/formats/objecttree.h"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ckptscope::dcp {

// One value, with the members formats/objectfields.h reads.
struct PlanNode {
    ObjectKind kind = ObjectKind::None;
    uint32_t state = kNoNode; // Object: what BUILD gave it
    int64_t integer = 0;      // Int; Bool as 0/1
    std::string_view text;    // String; Global and Object: module.name
    std::span<const uint32_t> items;
};

class PlanTree {
public:
    // The plan in `pickle` (which must outlive the tree), or nullopt when it
    // holds anything this machine does not read.
    static std::optional<PlanTree> read(std::string_view pickle);

    const PlanNode& at(uint32_t n) const { return m_nodes.at(n); }
    uint32_t root() const { return m_root; }
    size_t size() const { return m_nodes.size(); }
    // The globals named, by name, with how often and their risk (Safe, or
    // Unknown for torch.distributed's classes): classifyImports' figures.
    std::vector<PickleImport> imports() const;

    PlanTree(PlanTree&&) noexcept = default;
    PlanTree& operator=(PlanTree&&) noexcept = default;

private:
    PlanTree() = default;
    class Run;

    std::vector<PlanNode> m_nodes;
    std::vector<uint32_t> m_items;  // the containers' items, a run each
    std::vector<uint32_t> m_joined; // the items of containers filled in several runs
    std::map<std::string, uint64_t, std::less<>> m_globals; // keys: the Global nodes' texts
    uint32_t m_root = kNoNode;
};

} // namespace ckptscope::dcp
