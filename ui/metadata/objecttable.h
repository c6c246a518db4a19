#pragma once

#include <QModelIndex>

class QAbstractItemModel;
class QStandardItemModel;
class QWidget;

// A list of dicts (an optimizer's param_groups, a scheduler's per-group
// state) as one table: a row per item, a column per key in the order the
// keys first appear, each cell the value as the tree shows it (empty where
// an item lacks the key). Read from an ObjectTreeModel through its rows.
namespace objecttable {

// True when the row at `list` holds a list (or tuple) whose items are all
// dicts, at least one.
bool applies(const QAbstractItemModel* tree, const QModelIndex& list);
// The table of that list; the caller owns it.
QStandardItemModel* tableOf(QAbstractItemModel* tree, const QModelIndex& list);
// Shows it in a window of its own, titled with the list's path.
void show(QWidget* parent, QAbstractItemModel* tree, const QModelIndex& list);

} // namespace objecttable
