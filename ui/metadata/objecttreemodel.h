#pragma once

#include "ckptscope/formats/objecttree.h"

#include <QAbstractItemModel>

#include <memory>
#include <string>
#include <vector>

// A document's metadata when it is a tree of values (a PyTorch checkpoint's
// object): one row per place, in the file's order — a dict's keys, a list's
// or tuple's items, an object's arguments, state and items. Rows are made
// when their parent is expanded, so a million-node tree opens at once. An
// object reached by several paths (a pickle's memo) is drawn once, at its
// first place in depth-first order; its other places, and a path that leads
// back into itself, are link rows naming that place (LinkRole).
class ObjectTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Key, Value, Type, ColumnCount };
    enum Role {
        PathRole = Qt::UserRole + 1, // QString: the keys from the root joined by '.'
        LinkRole,                    // QString: the path a link row stands for, else empty
        JsonRole,                    // QString: the value as JSON (info --json's "objects")
    };

    explicit ObjectTreeModel(QObject* parent = nullptr);

    // The tree and the names of the tensors its Tensor nodes refer to.
    void setTree(std::shared_ptr<const ckptscope::ObjectTree> tree,
                 std::vector<std::string> tensorNames);
    bool isEmpty() const { return !m_tree || m_tree->empty(); }
    // The row at `path` (as PathRole gives it), made on the way; invalid when
    // there is none.
    QModelIndex indexOfPath(const QString& path);
    // The ObjectTree node a row shows (kNoNode for none).
    uint32_t nodeAt(const QModelIndex& index) const;
    const ckptscope::ObjectTree* tree() const { return m_tree.get(); }

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    bool hasChildren(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Row {
        int parent = -1; // row id; -1 under the root
        int row = 0;     // among its parent's rows
        QString key;
        QString path;
        uint32_t node = ckptscope::kNoNode;
        bool link = false; // drawn elsewhere: its first place, or an ancestor
        bool built = false;
        std::vector<int> children;
    };
    std::vector<int> childRows(int parent, uint32_t node, const QString& path) const;
    void build(int id) const; // makes a row's children
    int rowId(const QModelIndex& index) const;
    QString valueText(const ckptscope::ObjectNode& n) const;
    // An enum member as Python 3.11 pickles one, getattr(Class, 'NAME'), by
    // its name (IntervalStrategy.STEPS); empty for any other node.
    QString enumMember(const ckptscope::ObjectNode& n) const;
    bool isSecret(const Row& r, const ckptscope::ObjectNode& n) const;
    QString json(uint32_t node) const;

    std::shared_ptr<const ckptscope::ObjectTree> m_tree;
    std::vector<std::string> m_tensorNames;
    std::vector<QString> m_firstPath; // per node with children: its first place
    mutable std::vector<Row> m_rows;
    mutable std::vector<int> m_top;
};
