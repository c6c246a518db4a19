#pragma once

#include <functional>

class QTreeView;

// A tree's name column. Its names are measured over the 10 000 rows from the
// one in view (Qt's default of 1 000 missed long names further down a large
// model), and names too wide for it end in the middle with "…", both ends
// readable, whole in their tooltips.
void prepareNameColumn(QTreeView* tree);

// The widest name the tree shows in `column`, as measured above.
int namesWidth(const QTreeView* tree, int column);

// The column's width for names `need` wide: all of it, up to half the
// viewport or 80 characters, whichever is wider (a 300-character name would
// push every other column out of sight).
int nameColumnWidth(const QTreeView* tree, int need);

// Calls `fit` each time the tree's viewport changes size: the cap above
// follows the tree's width, so names cut in a narrow tree show whole once
// it is widened.
void refitOnResize(QTreeView* tree, std::function<void()> fit);
