// thinLine: a long line drawn as its first, lowest, highest and last point
// per span of x — every extreme kept, in x order, each point once.
#include "chart/linethinning.h"

#include <QTest>

#include <algorithm>
#include <cmath>

class TestLineThinning : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void shortLinesComeBackWhole() {
        QList<QPointF> line;
        for (int i = 0; i < 400; ++i)
            line.append({double(i), std::sin(i * 0.1)});
        QCOMPARE(thinLine(line, 100), line);
        QCOMPARE(thinLine({}, 100), QList<QPointF>{});
    }

    void extremesOfEverySpanKept() {
        // 100 000 logged steps, a spike and a dip between the buckets' edges.
        QList<QPointF> line;
        for (int i = 0; i < 100000; ++i)
            line.append({double(10 * i), 1.0 + 0.1 * std::sin(i * 0.37)});
        line[31337].setY(9.5);
        line[77777].setY(-4.25);
        const int buckets = 500;
        const QList<QPointF> thin = thinLine(line, buckets);
        QVERIFY(thin.size() <= 4 * buckets);
        QVERIFY(thin.size() >= 2 * buckets);
        QCOMPARE(thin.front(), line.front());
        QCOMPARE(thin.back(), line.back());
        QVERIFY(std::is_sorted(thin.begin(), thin.end(),
                               [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); }));
        QVERIFY(std::adjacent_find(thin.begin(), thin.end()) == thin.end());
        QVERIFY(thin.contains(line[31337]) && thin.contains(line[77777]));
        // Every point kept is a point of the line, and in each span of x the
        // lowest and highest of the line are kept.
        const double x0 = line.front().x(), span = line.back().x() - x0;
        const auto bucketOf = [&](const QPointF& p) {
            return std::min(buckets - 1, int((p.x() - x0) / span * buckets));
        };
        std::vector<double> lo(buckets, INFINITY), hi(buckets, -INFINITY);
        for (const QPointF& p : line) {
            lo[size_t(bucketOf(p))] = std::min(lo[size_t(bucketOf(p))], p.y());
            hi[size_t(bucketOf(p))] = std::max(hi[size_t(bucketOf(p))], p.y());
        }
        std::vector<double> keptLo(buckets, INFINITY), keptHi(buckets, -INFINITY);
        for (const QPointF& p : thin) {
            QVERIFY(line.contains(p));
            keptLo[size_t(bucketOf(p))] = std::min(keptLo[size_t(bucketOf(p))], p.y());
            keptHi[size_t(bucketOf(p))] = std::max(keptHi[size_t(bucketOf(p))], p.y());
        }
        QCOMPARE(keptLo, lo);
        QCOMPARE(keptHi, hi);
    }
};

QTEST_APPLESS_MAIN(TestLineThinning)
#include "tst_linethinning.moc"
