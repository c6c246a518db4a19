#pragma once

#include "ckptscope/formats/gradient/computationnode.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ckptscope {

// Collapse by structure: nodes grouped by bands of consecutive ranks of the
// layered drawing (a transformer's blocks repeat as bands) and, within a
// band, by a key the caller gives each node (op family, or a scope from the
// node's metadata). A 100k-node graph becomes a few hundred groups that can
// be drawn as boxes and expanded one at a time.
struct GroupingOptions {
    uint32_t maxGroups = 400; // bands are widened until the groups fit
};

struct GroupBundle {
    uint32_t from = 0, to = 0; // groups
    uint32_t count = 0;        // graph edges between them
};

struct NodeGrouping {
    uint32_t bandRanks = 1;        // ranks per band
    std::vector<int> rank;         // per node: rank of the layered drawing
    std::vector<char> reversed;    // per edge: reversed to break a cycle
    std::vector<uint32_t> groupOf; // per node
    // Group g's nodes are members[memberStart[g], memberStart[g + 1]), by
    // rank, then node number.
    std::vector<uint32_t> memberStart, members;
    std::vector<uint32_t> groupBand, groupKey; // per group
    // Edges between different groups, one per ordered group pair, sorted.
    std::vector<GroupBundle> bundles;

    uint32_t groupCount() const { return uint32_t(groupBand.size()); }
    uint32_t groupSize(uint32_t g) const { return memberStart[g + 1] - memberStart[g]; }
    uint32_t bandCount() const;
};

// nodeCount nodes with a key each, edges from → to (no self loops).
// Groups are numbered band by band, within a band by key.
NodeGrouping groupByStructure(uint32_t nodeCount,
                              const std::vector<std::pair<uint32_t, uint32_t>>& edges,
                              const std::vector<uint32_t>& keys,
                              const GroupingOptions& options = {});

// The structural part of a node's grouping key from its metadata: "scope"
// or "layer" as given, or "name" without its last component
// ("layers.3.attn.q" → "layers.3.attn"); empty when none is present.
std::string structureScope(const ComputationNode& node);

} // namespace ckptscope
