#pragma once

class QTableView;

// Table rows one line of the view's font tall plus `padding` pixels, now
// and whenever that font (or the style) changes: a fixed default section
// size does not follow the font by itself, and a larger desktop font would
// otherwise cut every line.
namespace rowheight {

void followFont(QTableView* view, int padding);

} // namespace rowheight
