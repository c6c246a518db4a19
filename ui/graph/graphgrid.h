#pragma once

#include <QRectF>

#include <cstdint>
#include <vector>

// A uniform grid over a drawing: each cell lists the items whose boxes meet
// it (compressed rows, no per-cell allocation), so drawing and picking visit
// what lies in a rectangle instead of every node and edge of a 100k graph.
class GraphGrid {
public:
    struct Entry {
        uint32_t item;
        QRectF box; // an item may have several (an edge: one per segment)
    };

    // Items are 0..itemCount-1; bounds covers every box.
    void build(const QRectF& bounds, const std::vector<Entry>& entries, size_t itemCount);
    void clear();

    // Calls f(item) once for every item with a box in a cell meeting rect
    // (a superset of those meeting rect itself: callers test the box).
    template <class F> void forEachIn(const QRectF& rect, F&& f) const {
        int c0, c1, r0, r1;
        if (!cells(rect, c0, c1, r0, r1))
            return;
        if (++m_epoch == 0) { // wrapped: forget every mark
            std::fill(m_seen.begin(), m_seen.end(), 0u);
            m_epoch = 1;
        }
        for (int r = r0; r <= r1; ++r)
            for (int c = c0; c <= c1; ++c) {
                const size_t cell = size_t(r) * size_t(m_cols) + size_t(c);
                for (uint32_t k = m_start[cell]; k < m_start[cell + 1]; ++k) {
                    const uint32_t item = m_items[k];
                    if (m_seen[item] != m_epoch) {
                        m_seen[item] = m_epoch;
                        f(item);
                    }
                }
            }
    }

private:
    bool cells(const QRectF& rect, int& c0, int& c1, int& r0, int& r1) const;

    QRectF m_bounds;
    double m_cell = 1;
    int m_cols = 0, m_rows = 0;
    std::vector<uint32_t> m_start; // per cell, into m_items; one past the last cell too
    std::vector<uint32_t> m_items;
    mutable std::vector<uint32_t> m_seen; // per item: the query that last reported it
    mutable uint32_t m_epoch = 0;
};
