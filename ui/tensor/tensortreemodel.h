#pragma once

#include "ckptscope/document/document.h"

#include "tensor/nametreemodel.h"

#include <memory>
#include <vector>

// The tensors of a document as a tree: names split on '.' and '/' into
// groups, children in natural order, groups summing elements and bytes.
class TensorTreeModel : public NameTreeModel {
    Q_OBJECT
public:
    enum Column { Name, Shape, Elements, Size, Dtype, ColumnCount };
    enum Role {
        TensorIndexRole = Qt::UserRole + 1, // int: tensor index, -1 for a group
        FullNameRole,                       // QString: the tensor name / group path
        SortRole,                           // numbers for numeric columns
    };

    explicit TensorTreeModel(QObject* parent = nullptr);

    void setDocument(std::shared_ptr<const ckptscope::Document> document);
    // Flags a tensor found to hold NaN/Inf (known after its statistics ran).
    void markNonFinite(int tensorIndex);
    QModelIndex indexOfTensor(int tensorIndex) const;
    QModelIndex indexOfName(const QString& fullName) const;
    int tensorCount() const { return int(tree().nodeOfItem.size()); }

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Node { // per NameTree node: sums over the tensors below
        uint64_t elements = 0;
        uint64_t bytes = 0;
        bool overflow = false; // some element count overflowed
        bool warning = false;
    };

    void build();

    std::shared_ptr<const ckptscope::Document> m_document;
    std::vector<Node> m_nodes;          // by NameTree node id
    std::vector<QString> m_warningText; // per tensor, joined warnings
    // By node: the tensor or a tensor below holds NaN or Inf (the groups
    // carry the icon, as in the run window).
    std::vector<bool> m_nonFiniteBelow;
};
