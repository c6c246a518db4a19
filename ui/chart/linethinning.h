#pragma once

#include <QList>
#include <QPointF>

// A long line (a Trainer's loss at every logging step: 10^5 points and
// more) thinned for drawing: `points` (x ascending) cut into `buckets`
// equal spans of x, of each the first, lowest, highest and last point in x
// order. Drawn at no more than one span a pixel it looks the same as every
// point, every spike included, and paints in a fraction of the time. Shorter
// lines come back whole. No packaged Qt Charts call thins a series.
QList<QPointF> thinLine(const QList<QPointF>& points, int buckets = 2048);
