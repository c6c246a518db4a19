#include "graph/graphgrid.h"

#include <algorithm>
#include <cmath>

void GraphGrid::clear() {
    *this = GraphGrid();
}

void GraphGrid::build(const QRectF& bounds, const std::vector<Entry>& entries, size_t itemCount) {
    clear();
    if (bounds.isEmpty() || entries.empty())
        return;
    m_bounds = bounds;
    // About four entries a cell, and never more cells than a few million.
    const double cellTarget = std::clamp(double(entries.size()) / 4, 1.0, 4e6);
    m_cell = std::max(32.0, std::sqrt(bounds.width() * bounds.height() / cellTarget));
    m_cols = std::max(1, int(std::ceil(bounds.width() / m_cell)));
    m_rows = std::max(1, int(std::ceil(bounds.height() / m_cell)));
    const size_t cellCount = size_t(m_cols) * size_t(m_rows);
    m_start.assign(cellCount + 1, 0);
    // Two passes: count per cell, then fill (compressed rows).
    for (const Entry& e : entries) {
        int c0, c1, r0, r1;
        if (cells(e.box, c0, c1, r0, r1))
            for (int r = r0; r <= r1; ++r)
                for (int c = c0; c <= c1; ++c)
                    ++m_start[size_t(r) * size_t(m_cols) + size_t(c) + 1];
    }
    for (size_t i = 1; i <= cellCount; ++i)
        m_start[i] += m_start[i - 1];
    m_items.resize(m_start[cellCount]);
    std::vector<uint32_t> next(m_start.begin(), m_start.end() - 1);
    for (const Entry& e : entries) {
        int c0, c1, r0, r1;
        if (cells(e.box, c0, c1, r0, r1))
            for (int r = r0; r <= r1; ++r)
                for (int c = c0; c <= c1; ++c)
                    m_items[next[size_t(r) * size_t(m_cols) + size_t(c)]++] = e.item;
    }
    m_seen.assign(itemCount, 0);
}

bool GraphGrid::cells(const QRectF& rect, int& c0, int& c1, int& r0, int& r1) const {
    // Compared by hand: QRectF::intersects is false for a zero-width box
    // (a vertical segment) or a point.
    const QRectF r = rect.normalized();
    if (m_cols == 0 || r.left() > m_bounds.right() || r.right() < m_bounds.left() ||
        r.top() > m_bounds.bottom() || r.bottom() < m_bounds.top())
        return false;
    auto at = [this](double v, double origin, int count) {
        return std::clamp(int(std::floor((v - origin) / m_cell)), 0, count - 1);
    };
    c0 = at(r.left(), m_bounds.left(), m_cols);
    c1 = at(r.right(), m_bounds.left(), m_cols);
    r0 = at(r.top(), m_bounds.top(), m_rows);
    r1 = at(r.bottom(), m_bounds.top(), m_rows);
    return true;
}
