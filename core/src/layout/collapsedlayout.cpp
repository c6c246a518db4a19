// A grouped graph drawn band by band (see collapsedlayout.h).
#include "ckptscope/layout/collapsedlayout.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace ckptscope {

namespace {

struct Box {
    double x, y, w, h; // centre and size
};

// From the side of a facing b to the side of b facing a: bottom to top when
// b lies below, top to bottom when above, else side to side.
std::vector<std::pair<double, double>> join(const Box& a, const Box& b) {
    if (b.y - b.h / 2 >= a.y + a.h / 2)
        return {{a.x, a.y + a.h / 2}, {b.x, b.y - b.h / 2}};
    if (b.y + b.h / 2 <= a.y - a.h / 2)
        return {{a.x, a.y - a.h / 2}, {b.x, b.y + b.h / 2}};
    const double s = b.x >= a.x ? 1 : -1;
    return {{a.x + s * a.w / 2, a.y}, {b.x - s * b.w / 2, b.y}};
}

} // namespace

CollapsedLayout::CollapsedLayout(LayoutInput input, NodeGrouping grouping,
                                 std::vector<std::pair<double, double>> collapsedSizes,
                                 Options options)
    : m_input(std::move(input)), m_g(std::move(grouping)), m_collapsed(std::move(collapsedSizes)),
      m_opt(options) {
    const size_t n = m_input.widths.size();
    if (m_g.groupOf.size() != n || m_input.heights.size() != n ||
        m_collapsed.size() != m_g.groupCount() || m_g.reversed.size() != m_input.edges.size())
        throw std::invalid_argument("collapsed layout: the grouping does not match its graph (" +
                                    std::to_string(n) + " nodes, " +
                                    std::to_string(m_g.groupOf.size()) + " grouped)");
    for (double h : m_input.heights)
        m_rowHeight = std::max(m_rowHeight, h);
    // Predecessors along the drawing's direction (cycles broken as ranked).
    m_upStart.assign(n + 1, 0);
    auto ends = [this](size_t e) {
        const auto [a, b] = m_input.edges[e];
        return m_g.reversed[e] ? std::pair(b, a) : std::pair(a, b);
    };
    for (size_t e = 0; e < m_input.edges.size(); ++e)
        ++m_upStart[ends(e).second + 1];
    for (size_t v = 1; v <= n; ++v)
        m_upStart[v] += m_upStart[v - 1];
    m_up.resize(m_input.edges.size());
    std::vector<uint32_t> fill(m_upStart.begin(), m_upStart.end() - 1);
    for (size_t e = 0; e < m_input.edges.size(); ++e)
        m_up[fill[ends(e).second]++] = ends(e).first;
    m_expanded.assign(m_g.groupCount(), 0);
    m_inner.resize(m_g.groupCount());
    m_placed.assign(m_g.groupCount(), 0);
}

uint32_t CollapsedLayout::expandedCount() const {
    return uint32_t(std::count(m_expanded.begin(), m_expanded.end(), char(1)));
}

void CollapsedLayout::setExpanded(uint32_t group, bool on) {
    if (group >= m_g.groupCount())
        return;
    if (on && !m_placed[group])
        place(group);
    m_expanded[group] = on ? 1 : 0;
}

void CollapsedLayout::setAllExpanded(bool on) {
    for (uint32_t g = 0; g < m_g.groupCount(); ++g)
        setExpanded(g, on);
}

void CollapsedLayout::place(uint32_t group) {
    // The group's nodes on the band's rank rows; in a row, ordered by where
    // their predecessors in the group stand (in the rows above), then packed
    // from the left. Members come sorted by rank.
    Inner& in = m_inner[group];
    const uint32_t first = m_g.memberStart[group], last = m_g.memberStart[group + 1];
    const int bandTop = int(m_g.groupBand[group] * m_g.bandRanks);
    in.x.assign(last - first, 0);
    in.y.assign(last - first, 0);
    in.firstRow = m_g.rank[m_g.members[first]] - bandTop;
    std::vector<std::pair<double, uint32_t>> row;
    // Node → position in this group, for the predecessor look-ups.
    std::vector<std::pair<uint32_t, uint32_t>> slot; // (node, member index), sorted
    slot.reserve(last - first);
    for (uint32_t i = first; i < last; ++i)
        slot.push_back({m_g.members[i], i - first});
    std::sort(slot.begin(), slot.end());
    auto indexOf = [&slot](uint32_t v) -> int {
        const auto it = std::lower_bound(slot.begin(), slot.end(), std::pair(v, 0u));
        return it != slot.end() && it->first == v ? int(it->second) : -1;
    };
    double width = 0;
    std::vector<std::pair<uint32_t, uint32_t>> rows; // [begin, end) member indices
    for (uint32_t i = first; i < last;) {
        uint32_t j = i;
        while (j < last && m_g.rank[m_g.members[j]] == m_g.rank[m_g.members[i]])
            ++j;
        row.clear();
        for (uint32_t k = i; k < j; ++k) {
            const uint32_t v = m_g.members[k];
            double sum = 0;
            int count = 0;
            for (uint32_t p = m_upStart[v]; p < m_upStart[v + 1]; ++p)
                if (const int s = indexOf(m_up[p]); s >= 0 && uint32_t(s) < i - first) {
                    sum += in.x[size_t(s)];
                    ++count;
                }
            row.push_back({count ? sum / count : std::numeric_limits<double>::infinity(), k});
        }
        std::stable_sort(row.begin(), row.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        // Packed, centred on 0: the rows below see their predecessors where
        // they will be drawn, whatever the rows' widths.
        double x = 0;
        for (const auto& [bary, k] : row)
            x += m_input.widths[m_g.members[k]] + m_opt.nodeSeparation;
        const double used = x - m_opt.nodeSeparation;
        x = -used / 2;
        for (const auto& [bary, k] : row) {
            const double w = m_input.widths[m_g.members[k]];
            in.x[k - first] = x + w / 2;
            x += w + m_opt.nodeSeparation;
        }
        width = std::max(width, used);
        rows.push_back({i - first, j - first});
        i = j;
    }
    // Rows centred in the frame; y by rank row from the frame's first row.
    for (const auto& [b, e] : rows) {
        const double shift = width / 2 + m_opt.padding;
        const int r = m_g.rank[m_g.members[first + b]] - bandTop - in.firstRow;
        for (uint32_t k = b; k < e; ++k) {
            in.x[k] += shift;
            in.y[k] = m_opt.title + m_opt.padding + r * pitch() + m_rowHeight / 2;
        }
    }
    const int lastRow = m_g.rank[m_g.members[last - 1]] - bandTop;
    in.width = width + 2 * m_opt.padding;
    in.height = m_opt.title + 2 * m_opt.padding + (lastRow - in.firstRow) * pitch() + m_rowHeight;
    m_placed[group] = 1;
}

std::vector<CollapsedLayout::Group> CollapsedLayout::placeGroups() const {
    // Band by band, a centred row of boxes; an expanded frame starts at its
    // first rank row, so the rows of expanded groups of a band line up.
    const uint32_t groups = m_g.groupCount();
    std::vector<Group> out(groups);
    std::vector<double> top(groups, 0);               // offset of the box in its band
    std::vector<std::pair<uint32_t, uint32_t>> bands; // [first, last) group per band
    for (uint32_t g = 0; g < groups; ++g) {
        if (g == 0 || m_g.groupBand[g] != m_g.groupBand[g - 1])
            bands.push_back({g, g});
        bands.back().second = g + 1;
        Group& box = out[g];
        box.expanded = m_expanded[g] != 0;
        box.width =
            box.expanded ? std::max(m_inner[g].width, m_collapsed[g].first) : m_collapsed[g].first;
        box.height = box.expanded ? m_inner[g].height : m_collapsed[g].second;
        top[g] = box.expanded ? m_inner[g].firstRow * pitch() : 0;
    }
    double widest = 0;
    std::vector<double> rowWidth(bands.size(), 0);
    for (size_t b = 0; b < bands.size(); ++b) {
        for (uint32_t g = bands[b].first; g < bands[b].second; ++g)
            rowWidth[b] += out[g].width + (g > bands[b].first ? m_opt.groupSeparation : 0);
        widest = std::max(widest, rowWidth[b]);
    }
    double y = 0;
    for (size_t b = 0; b < bands.size(); ++b) {
        double x = (widest - rowWidth[b]) / 2, bottom = y;
        for (uint32_t g = bands[b].first; g < bands[b].second; ++g) {
            out[g].x = x + out[g].width / 2;
            out[g].y = y + top[g] + out[g].height / 2;
            x += out[g].width + m_opt.groupSeparation;
            bottom = std::max(bottom, y + top[g] + out[g].height);
        }
        y = bottom + m_opt.bandSeparation;
    }
    return out;
}

CollapsedLayout::Drawing CollapsedLayout::compose() const {
    Drawing d;
    d.groups = placeGroups();
    const size_t n = m_input.widths.size();
    GraphLayout& l = d.layout;
    l.nodes.resize(n);
    for (uint32_t g = 0; g < m_g.groupCount(); ++g) {
        const Group& box = d.groups[g];
        const double left = box.x - box.width / 2, top = box.y - box.height / 2;
        const double dx = (box.width - m_inner[g].width) / 2; // a frame wider than its nodes
        for (uint32_t i = m_g.memberStart[g]; i < m_g.memberStart[g + 1]; ++i) {
            const uint32_t v = m_g.members[i];
            LayoutNode& node = l.nodes[v];
            node.rank = m_g.rank[v];
            if (!box.expanded) { // no size: not drawn, located at its box
                node.x = box.x;
                node.y = box.y;
                continue;
            }
            node.width = m_input.widths[v];
            node.height = m_input.heights[v];
            node.x = left + dx + m_inner[g].x[i - m_g.memberStart[g]];
            node.y = top + m_inner[g].y[i - m_g.memberStart[g]];
        }
        l.width = std::max(l.width, box.x + box.width / 2);
        l.height = std::max(l.height, box.y + box.height / 2);
    }
    auto nodeBox = [&l](uint32_t v) {
        const LayoutNode& node = l.nodes[v];
        return Box{node.x, node.y, node.width, node.height};
    };
    auto groupBox = [&d](uint32_t g) {
        const Group& box = d.groups[g];
        return Box{box.x, box.y, box.width, box.height};
    };
    // Drawn ends: node v, or its collapsed group (numbered after the nodes).
    auto unitOf = [&](uint32_t v) -> uint64_t {
        const uint32_t g = m_g.groupOf[v];
        return m_expanded[g] ? v : n + g;
    };
    l.edges.resize(m_input.edges.size());
    std::vector<std::pair<uint64_t, uint64_t>> bundled;
    for (size_t e = 0; e < m_input.edges.size(); ++e) {
        const auto [a, b] = m_input.edges[e];
        LayoutEdge& edge = l.edges[e];
        edge.from = a;
        edge.to = b;
        edge.reversed = m_g.reversed[e] != 0;
        const uint64_t ua = unitOf(a), ub = unitOf(b);
        if (ua < n && ub < n)
            edge.points = join(nodeBox(a), nodeBox(b));
        else if (ua != ub)
            bundled.push_back({ua, ub});
    }
    std::sort(bundled.begin(), bundled.end());
    auto boxOf = [&](uint64_t unit) {
        return unit < n ? nodeBox(uint32_t(unit)) : groupBox(uint32_t(unit - n));
    };
    for (size_t i = 0; i < bundled.size(); ++i) {
        if (i > 0 && bundled[i] == bundled[i - 1]) {
            ++d.bundles.back().count;
            continue;
        }
        const auto [ua, ub] = bundled[i];
        Bundle bundle;
        bundle.fromNode = ua < n ? int(ua) : -1;
        bundle.toNode = ub < n ? int(ub) : -1;
        bundle.fromGroup = ua < n ? m_g.groupOf[ua] : uint32_t(ua - n);
        bundle.toGroup = ub < n ? m_g.groupOf[ub] : uint32_t(ub - n);
        bundle.count = 1;
        bundle.points = join(boxOf(ua), boxOf(ub));
        d.bundles.push_back(std::move(bundle));
    }
    return d;
}

} // namespace ckptscope
