#pragma once

#include "ckptscope/layout/graphgroups.h"
#include "ckptscope/layout/graphlayout.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace ckptscope {

// A grouped graph drawn band by band: each band of ranks is a row of group
// boxes (collapsed: one box; expanded: a frame with the group's nodes on the
// band's own rank rows). Expanding a group places only its nodes, inside its
// frame, and moves the boxes after it (a few hundred rectangles): nothing is
// laid out again. Edges between two expanded groups' nodes are drawn one by
// one; every other edge joins a bundle, one per pair of drawn ends (a
// collapsed group or a node) with its multiplicity.
class CollapsedLayout {
public:
    struct Options {
        double rankSeparation = 50; // between rank rows inside a band
        double nodeSeparation = 20; // between neighbours in a row
        double groupSeparation = 40;
        double bandSeparation = 90;
        double padding = 10;
        double title = 22; // an expanded frame's title strip
    };
    // collapsedSizes: each group's box (width, height) while collapsed.
    CollapsedLayout(LayoutInput input, NodeGrouping grouping,
                    std::vector<std::pair<double, double>> collapsedSizes, Options options);
    CollapsedLayout(LayoutInput input, NodeGrouping grouping,
                    std::vector<std::pair<double, double>> collapsedSizes)
        : CollapsedLayout(std::move(input), std::move(grouping), std::move(collapsedSizes),
                          Options()) {}

    const NodeGrouping& grouping() const { return m_g; }
    bool isExpanded(uint32_t group) const { return m_expanded[group] != 0; }
    uint32_t expandedCount() const;
    void setExpanded(uint32_t group, bool on);
    void setAllExpanded(bool on);

    struct Group {
        double x = 0, y = 0, width = 0, height = 0; // centre and size, like LayoutNode
        bool expanded = false;
    };
    struct Bundle {
        // The drawn ends: a node (of an expanded group) or -1 for the
        // collapsed group.
        int fromNode = -1, toNode = -1;
        uint32_t fromGroup = 0, toGroup = 0;
        uint32_t count = 0; // graph edges it stands for
        std::vector<std::pair<double, double>> points;
    };
    struct Drawing {
        // Every node and input edge, in input order: nodes of collapsed
        // groups have no size and edges not drawn one by one no points.
        GraphLayout layout;
        std::vector<Group> groups;
        std::vector<Bundle> bundles;
    };
    Drawing compose() const;

private:
    struct Inner {
        std::vector<double> x, y; // per member (in members order), frame coordinates
        double width = 0, height = 0;
        int firstRow = 0; // rank row of the band the frame starts at
    };
    void place(uint32_t group);
    std::vector<Group> placeGroups() const;
    double pitch() const { return m_rowHeight + m_opt.rankSeparation; }

    LayoutInput m_input;
    NodeGrouping m_g;
    std::vector<std::pair<double, double>> m_collapsed;
    Options m_opt;
    double m_rowHeight = 0;
    std::vector<uint32_t> m_upStart, m_up; // per node, its predecessors (cycles broken)
    std::vector<char> m_expanded;
    std::vector<Inner> m_inner; // placed on first expansion
    std::vector<char> m_placed;
};

} // namespace ckptscope
