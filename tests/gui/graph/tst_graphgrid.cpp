#include "graph/graphgrid.h"

#include <QRandomGenerator>
#include <QTest>

#include <algorithm>
#include <set>

// The grid must report every item with a box meeting a rectangle (it may
// report more, never fewer), each once.
class TestGraphGrid : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void reportsEveryItemMeetingARectOnce() {
        QRandomGenerator rng(25);
        const QRectF bounds(0, 0, 20000, 5000);
        std::vector<GraphGrid::Entry> entries;
        const uint32_t items = 3000;
        for (uint32_t i = 0; i < items; ++i) {
            // Boxes, points, and (for a third of the items) segments spread
            // over the drawing, zero-width and zero-height ones included.
            const int parts = i % 3 == 0 ? 4 : 1;
            for (int p = 0; p < parts; ++p) {
                const double x = rng.bounded(20000.0), y = rng.bounded(5000.0);
                const double w = i % 7 == 0 ? 0 : rng.bounded(300.0);
                const double h = i % 11 == 0 ? 0 : rng.bounded(p == 0 ? 40.0 : 2000.0);
                entries.push_back({i, QRectF(x, y, std::min(w, 20000 - x), std::min(h, 5000 - y))});
            }
        }
        GraphGrid grid;
        grid.build(bounds, entries, items);
        for (int q = 0; q < 200; ++q) {
            const QRectF rect(rng.bounded(22000.0) - 1000, rng.bounded(6000.0) - 500,
                              q % 5 == 0 ? 0 : rng.bounded(4000.0),
                              q % 5 == 0 ? 0 : rng.bounded(2000.0));
            std::set<uint32_t> expected;
            for (const auto& e : entries)
                if (e.box.left() <= rect.right() && e.box.right() >= rect.left() &&
                    e.box.top() <= rect.bottom() && e.box.bottom() >= rect.top())
                    expected.insert(e.item);
            std::vector<uint32_t> got;
            grid.forEachIn(rect, [&](uint32_t i) { got.push_back(i); });
            const std::set<uint32_t> unique(got.begin(), got.end());
            QCOMPARE(unique.size(), got.size()); // each once
            QVERIFY(std::includes(unique.begin(), unique.end(), expected.begin(), expected.end()));
        }
        // Far outside: nothing.
        int outside = 0;
        grid.forEachIn(QRectF(-5000, -5000, 100, 100), [&](uint32_t) { ++outside; });
        QCOMPARE(outside, 0);
    }

    void emptyGridReportsNothing() {
        GraphGrid grid;
        grid.build(QRectF(0, 0, 100, 100), {}, 0);
        int n = 0;
        grid.forEachIn(QRectF(0, 0, 100, 100), [&](uint32_t) { ++n; });
        QCOMPARE(n, 0);
    }
};

QTEST_MAIN(TestGraphGrid)
#include "tst_graphgrid.moc"
