#include "chart/linethinning.h"

#include <algorithm>

QList<QPointF> thinLine(const QList<QPointF>& points, int buckets) {
    if (buckets < 1 || points.size() <= qsizetype(4) * buckets)
        return points;
    const double x0 = points.front().x(), span = points.back().x() - x0;
    if (!(span > 0))
        return points;
    const auto bucketOf = [&](qsizetype i) {
        return std::min(buckets - 1, int((points[i].x() - x0) / span * buckets));
    };
    QList<QPointF> out;
    out.reserve(qsizetype(4) * buckets);
    qsizetype first = 0;
    while (first < points.size()) {
        const int bucket = bucketOf(first);
        qsizetype end = first, lo = first, hi = first;
        while (end < points.size() && bucketOf(end) == bucket) {
            if (points[end].y() < points[lo].y())
                lo = end;
            if (points[end].y() > points[hi].y())
                hi = end;
            ++end;
        }
        // In x order, each point once.
        qsizetype keep[4] = {first, std::min(lo, hi), std::max(lo, hi), end - 1};
        for (int k = 0; k < 4; ++k)
            if (k == 0 || keep[k] != keep[k - 1])
                out.append(points[keep[k]]);
        first = end;
    }
    return out;
}
