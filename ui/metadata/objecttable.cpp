#include "metadata/objecttable.h"

#include "metadata/objecttreemodel.h"

#include <QDialog>
#include <QHeaderView>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

namespace objecttable {

namespace {

bool isA(const QModelIndex& row, const char* type) {
    return row.siblingAtColumn(ObjectTreeModel::Type).data(Qt::EditRole).toString() ==
           QLatin1String(type);
}

} // namespace

bool applies(const QAbstractItemModel* tree, const QModelIndex& list) {
    const QModelIndex at = list.siblingAtColumn(ObjectTreeModel::Key);
    if (!at.isValid() || !(isA(at, "list") || isA(at, "tuple")) ||
        !at.data(ObjectTreeModel::LinkRole).toString().isEmpty() || tree->rowCount(at) == 0)
        return false;
    for (int i = 0; i < tree->rowCount(at); ++i)
        if (!isA(tree->index(i, 0, at), "dict"))
            return false;
    return true;
}

QStandardItemModel* tableOf(QAbstractItemModel* tree, const QModelIndex& list) {
    const QModelIndex at = list.siblingAtColumn(ObjectTreeModel::Key);
    auto* table = new QStandardItemModel;
    QStringList keys;
    for (int i = 0; i < tree->rowCount(at); ++i) {
        const QModelIndex item = tree->index(i, 0, at);
        table->insertRow(i);
        table->setVerticalHeaderItem(i, new QStandardItem(QString::number(i)));
        for (int k = 0; k < tree->rowCount(item); ++k) {
            const QModelIndex entry = tree->index(k, ObjectTreeModel::Key, item);
            const QString key = entry.data(Qt::EditRole).toString();
            qsizetype column = keys.indexOf(key);
            if (column < 0) {
                column = keys.size();
                keys << key;
                table->setColumnCount(int(keys.size()));
                table->setHorizontalHeaderItem(int(column), new QStandardItem(key));
            }
            const QModelIndex value = entry.siblingAtColumn(ObjectTreeModel::Value);
            auto* cell = new QStandardItem(value.data(Qt::DisplayRole).toString());
            cell->setToolTip(value.data(Qt::ToolTipRole).toString());
            cell->setEditable(false);
            table->setItem(i, int(column), cell);
        }
    }
    return table;
}

void show(QWidget* parent, QAbstractItemModel* tree, const QModelIndex& list) {
    auto* dialog = new QDialog(parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    const QString path = list.siblingAtColumn(0).data(ObjectTreeModel::PathRole).toString();
    dialog->setWindowTitle(QObject::tr("%1 as a table").arg(path));
    auto* layout = new QVBoxLayout(dialog);
    auto* view = new QTableView;
    QStandardItemModel* table = tableOf(tree, list);
    table->setParent(dialog);
    view->setModel(table);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    layout->addWidget(view);
    dialog->resize(720, 360);
    dialog->show();
}

} // namespace objecttable
