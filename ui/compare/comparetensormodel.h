#pragma once

#include "ckptscope/diff/tensordiff.h"
#include "ckptscope/document/document.h"

#include "tensor/nametreemodel.h"

#include <QColor>
#include <QIcon>

#include <array>
#include <memory>
#include <optional>
#include <vector>

// The compared tensors as a tree like the main window's (names split on '.'
// and '/', natural order): each tensor with its status (colour and icon),
// shapes and the figures that rank changes; each group with the worst
// status below it, how many of its tensors differ, the largest relative L2
// change and max |Δ| below it, and the sums of differing and compared
// elements. SortRole gives numbers for the numeric columns (a group its
// largest figure), nothing where a figure is missing. A quantization pair
// (B block-quantized or in other dtypes: an f32 model against its GGUF) adds
// the cosine and B's bits per weight (a group: its bits over its weights).
class CompareTensorModel : public NameTreeModel {
    Q_OBJECT
public:
    // Dtype (A → B) is worth showing only when some dtype differs
    // (anyDtypeDiffers); NonFinite counts the NaN/Inf mismatches; Cosine and
    // BitsPerWeight (B's) are for quantization pairs (quantizationReport).
    enum Column {
        Name,
        Status,
        Shape,
        Dtype,
        NonFinite,
        RelL2,
        MaxAbsDiff,
        Cosine,
        BitsPerWeight,
        Differing,
        Count,
        ColumnCount
    };
    enum Role {
        SortRole = Qt::UserRole + 1,
        StatusRole,      // int DiffStatus: a tensor's, a group's worst
        TensorIndexRole, // int: index into TensorDiff::tensors, -1 for a group
        FullNameRole,    // QString: the tensor name / group path
    };

    explicit CompareTensorModel(QObject* parent = nullptr);
    // b: B's document, for its tensors' bits per weight (none: no figure).
    void setDiff(std::shared_ptr<const ckptscope::TensorDiff> diff,
                 std::shared_ptr<const ckptscope::Document> b = {});
    // The tensor at this index of TensorDiff::tensors, or nullptr.
    const ckptscope::TensorDiffEntry* entry(int tensor) const;
    int tensorCount() const { return int(tree().nodeOfItem.size()); }
    bool anyDtypeDiffers() const { return m_anyDtypeDiffers; }
    // Some dtype differs, or B has block-quantized tensors.
    bool quantizationReport() const { return m_quantized || m_anyDtypeDiffers; }
    QModelIndex indexOfTensor(int tensor, int column = Name) const;

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    static QString statusText(ckptscope::DiffStatus status);
    // "in B: NAME" for a pair under mapped names (with how B's rows were
    // ordered when llama.cpp reordered them), else empty.
    static QString nameInB(const ckptscope::TensorDiffEntry& e);
    static QColor statusColor(ckptscope::DiffStatus status);
    static QIcon statusIcon(ckptscope::DiffStatus status);
    // Which status a group shows: same < dtype changed < changed < added <
    // removed < shape changed (the structural changes rank above changed
    // values).
    static int severity(ckptscope::DiffStatus status);

private:
    struct Node { // per NameTree node: a tensor's figures, a group's below it
        ckptscope::DiffStatus worst = ckptscope::DiffStatus::Same;
        std::array<uint64_t, 6> statusCounts{};   // tensors below, by DiffStatus
        std::optional<double> relL2, maxAbsDiff;  // a group: the largest below
        std::optional<uint64_t> differing, count; // a group: sums below
        uint64_t nan = 0, inf = 0;                // NaN/Inf mismatches (sums below)
        std::optional<double> cosine;             // a tensor's only
        std::optional<double> bpwB;               // a tensor's: B's bits per weight
        uint64_t bitsB = 0, weightsB = 0;         // B's stored bits, elements (sums below)
    };
    void build();
    QVariant groupData(const NameTree::Node& n, const Node& f, int column, int role) const;
    QVariant tensorData(const NameTree::Node& n, const Node& f, const ckptscope::TensorDiffEntry& e,
                        int column, int role) const;
    QVariant nonFiniteData(const Node& f, int role) const;
    QVariant bitsPerWeightData(const Node& f, int role) const;

    std::shared_ptr<const ckptscope::TensorDiff> m_diff;
    std::vector<Node> m_nodes{Node{}}; // by NameTree node id
    std::shared_ptr<const ckptscope::Document> m_b;
    bool m_anyDtypeDiffers = false;
    bool m_quantized = false;
};
