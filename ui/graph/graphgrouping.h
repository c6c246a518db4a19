#pragma once

#include "graph/graphindex.h"
#include "graph/graphscene.h"

#include "ckptscope/layout/collapsedlayout.h"

#include <memory>
#include <string>
#include <vector>

// Collapse by structure for the Graph page: each node's key (its op family,
// after the scope its metadata names, if any), the grouping, and the
// groups' labels. Qt-free enough to run off the GUI thread; the boxes'
// sizes are measured on it (groupedLayout).
struct GraphGrouping {
    ckptscope::NodeGrouping grouping;
    std::vector<std::string> labels;  // per group: its one or two ops, else "KEY (N ops)"
    std::vector<std::string> opLists; // per group: "op ×count" lines, most first
    std::vector<OpFamily> families;   // per group
};

// The index must have been made with its graph.
GraphGrouping groupGraph(const GraphIndex& index,
                         const std::vector<std::pair<uint32_t, uint32_t>>& edges);

// The collapsed layout of a grouped graph and what its boxes say. `input`
// holds the node sizes as the full layout would use them (left-right:
// already swapped); boxes are sized from the application font.
struct GroupedLayout {
    std::shared_ptr<ckptscope::CollapsedLayout> layout;
    std::vector<GraphScene::GroupInfo> info;
};
GroupedLayout groupedLayout(ckptscope::LayoutInput input, GraphGrouping grouping, bool leftToRight);
