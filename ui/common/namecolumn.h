#pragma once

class QTreeView;

// The width of a tree's name column: as wide as the names it shows (the
// first thousand rows from the one in view, as Qt measures them), up to half
// the viewport or 80 characters, whichever is wider. A longer name (a
// 300-character one would push every other column out of sight) ends in the
// middle with "…" and is whole in its tooltip and the detail's title.
int nameColumnWidth(const QTreeView* tree, int column);

// Names that do not fit are elided in the middle: both ends stay readable.
void elideNamesInTheMiddle(QTreeView* tree);
