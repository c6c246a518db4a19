#pragma once

#include "ckptscope/common/taskcontrol.h"
#include "ckptscope/formats/gradient/computationgraphstore.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ckptscope {

// Input of the layered layout: nodes 0..n-1 with sizes, directed edges.
struct LayoutInput {
    std::vector<double> widths, heights;              // per node, > 0
    std::vector<std::pair<uint32_t, uint32_t>> edges; // from → to, indices into nodes
};

// cancel is checked between phases and sweeps.
struct LayoutOptions : TaskControl {
    double rankSeparation = 50; // vertical gap between ranks
    double nodeSeparation = 20; // horizontal gap between neighbours
    int crossingSweeps = 8;     // bounded barycenter/median passes
};

struct LayoutNode {
    double x = 0, y = 0; // centre; y grows with rank
    double width = 0, height = 0;
    int rank = 0;
};

struct LayoutEdge {
    uint32_t from = 0, to = 0;
    // Polyline from the border of `from` to the border of `to`, through the
    // positions of the dummy nodes of long edges.
    std::vector<std::pair<double, double>> points;
    bool reversed = false; // reversed to break a cycle (drawn against rank)
};

struct GraphLayout {
    std::vector<LayoutNode> nodes;
    std::vector<LayoutEdge> edges; // same order as LayoutInput::edges (minus self loops)
    uint64_t crossings = 0;        // edge crossings between adjacent ranks
    double width = 0, height = 0;  // bounding box, origin at (0, 0)
};

// Layered (Sugiyama-style) layout: cycles broken by reversing edges, longest
// path ranks, dummy nodes on long edges, crossing reduction by bounded
// barycenter/median sweeps, coordinates that keep chains straight, edge
// routes through the dummies. Deterministic; throws Cancelled (taskcontrol.h)
// when *cancel becomes true.
GraphLayout layoutGraph(const LayoutInput& input, const LayoutOptions& options = {});

// Crossings between adjacent ranks of a finished layout, counted from the
// node positions and edge routes (used to check the reported count).
uint64_t countCrossings(const GraphLayout& layout);

// A computation graph as layout input: nodes in id order (ids[i] is node i),
// edges naming unknown nodes, self loops and repeats left out. widthOf gives
// each node's width (label width), height is fixed.
struct GraphLayoutInput {
    LayoutInput input;
    std::vector<std::string> ids;
};
GraphLayoutInput layoutInputFromGraph(const ComputationGraphStore& graph,
                                      const std::function<double(const ComputationNode&)>& widthOf,
                                      double height = 28);

} // namespace ckptscope
