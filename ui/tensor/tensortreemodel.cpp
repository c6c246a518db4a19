#include "tensor/tensortreemodel.h"

#include "ckptscope/common/saturating.h"
#include "common/plaintext.h"
#include "common/sizeformat.h"
#include "tensor/nametree.h"

#include <QApplication>
#include <QStyle>

#include <algorithm>

using ckptscope::Document;
using ckptscope::TensorEntry;

TensorTreeModel::TensorTreeModel(QObject* parent) : NameTreeModel(parent) {
    m_nodes.push_back({});
}

void TensorTreeModel::setDocument(std::shared_ptr<const Document> document) {
    beginResetModel();
    m_document = std::move(document);
    build();
    endResetModel();
}

void TensorTreeModel::build() {
    m_nodes.assign(1, Node{});
    setNames({});
    m_warningText.clear();
    m_nonFiniteBelow.assign(1, false);
    if (!m_document)
        return;
    const auto& tensors = m_document->tensors();
    m_warningText.resize(tensors.size());
    for (const auto& w : m_document->warnings())
        if (w.tensor && *w.tensor < tensors.size()) {
            QString& t = m_warningText[*w.tensor];
            t += (t.isEmpty() ? QString() : QStringLiteral("\n")) +
                 QString::fromStdString(w.message);
        }

    std::vector<QString> names;
    names.reserve(tensors.size());
    for (const TensorEntry& t : tensors)
        names.push_back(QString::fromStdString(t.name));
    setNames(names);
    m_nodes.assign(tree().nodes.size(), Node{});
    m_nonFiniteBelow.assign(tree().nodes.size(), false);
    for (size_t tensor = 0; tensor < tensors.size(); ++tensor) {
        Node& n = m_nodes[size_t(tree().nodeOfItem[tensor])];
        const TensorEntry& t = tensors[tensor];
        const auto bytes = ckptscope::tensorSizeBytes(t); // by dtype
        n.overflow = !bytes;
        n.elements = t.elementCount.value_or(0);
        n.bytes = bytes.value_or(0);
        n.warning = !m_warningText[tensor].isEmpty();
    }
    // Sums bottom-up (children have larger ids).
    for (size_t id = m_nodes.size() - 1; id > 0; --id) {
        const Node& n = m_nodes[id];
        Node& p = m_nodes[size_t(tree().nodes[id].parent)];
        p.elements = ckptscope::saturatingAdd(p.elements, n.elements);
        p.bytes = ckptscope::saturatingAdd(p.bytes, n.bytes);
        p.overflow |= n.overflow;
    }
}

void TensorTreeModel::markNonFinite(int tensorIndex) {
    if (tensorIndex < 0 || size_t(tensorIndex) >= tree().nodeOfItem.size())
        return;
    Node& n = m_nodes[size_t(tree().nodeOfItem[size_t(tensorIndex)])];
    QString& text = m_warningText[size_t(tensorIndex)];
    if (text.contains(tr("holds NaN or infinite values")))
        return;
    n.warning = true;
    text +=
        (text.isEmpty() ? QString() : QStringLiteral("\n")) + tr("holds NaN or infinite values");
    const QModelIndex idx = indexOfTensor(tensorIndex);
    Q_EMIT dataChanged(idx, idx, {Qt::DecorationRole, Qt::ToolTipRole});
    for (int group : markUpward(m_nonFiniteBelow, tensorIndex)) {
        const QModelIndex g = indexOfNode(group, Name);
        if (g != idx)
            Q_EMIT dataChanged(g, g, {Qt::DecorationRole, Qt::ToolTipRole});
    }
}

QModelIndex TensorTreeModel::indexOfTensor(int tensorIndex) const {
    return indexOfItem(tensorIndex, Name);
}

QModelIndex TensorTreeModel::indexOfName(const QString& fullName) const {
    for (size_t id = 1; id < tree().nodes.size(); ++id)
        if (tree().nodes[id].item >= 0 && tree().nodes[id].path == fullName)
            return indexOfNode(int(id), Name);
    return {};
}

int TensorTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

QVariant TensorTreeModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid())
        return {};
    const NameTree::Node& n = node(index);
    const Node& sums = m_nodes[size_t(nodeId(index))];
    const int tensor = n.item;
    const TensorEntry* t = tensor >= 0 ? &m_document->tensors()[size_t(tensor)] : nullptr;
    switch (role) {
    case Qt::DisplayRole:
        switch (Column(index.column())) {
        case Name:
            return shownText(n.label);
        case Shape:
            return t ? shapeText(t->shape) : QString();
        case Elements:
            return sums.overflow && t ? tr("overflow") : groupedNumber(sums.elements);
        case Size:
            return sums.overflow && t ? missingText() : humanBytes(sums.bytes);
        case Dtype:
            return t ? QString::fromLatin1(ckptscope::dtypeName(t->dtype)) : QString();
        case ColumnCount:
            break;
        }
        break;
    case Qt::TextAlignmentRole:
        if (index.column() == Elements || index.column() == Size)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case Qt::DecorationRole:
        if (index.column() == Name && (sums.warning || m_nonFiniteBelow[size_t(nodeId(index))]))
            return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
        break;
    case Qt::ToolTipRole:
        if (t && sums.warning)
            return plainToolTip(shownText(n.path) + QStringLiteral("\n") +
                                m_warningText[size_t(tensor)]);
        if (!t && m_nonFiniteBelow[size_t(nodeId(index))])
            return plainToolTip(shownText(n.path) + QStringLiteral("\n") +
                                tr("a tensor below holds NaN or infinite values"));
        return plainToolTip(shownText(n.path));
    case TensorIndexRole:
        return tensor;
    case FullNameRole:
        return n.path;
    case SortRole:
        if (index.column() == Elements)
            return qulonglong(sums.elements);
        if (index.column() == Size)
            return qulonglong(sums.bytes);
        if (index.column() == Shape)
            return t ? shapeText(t->shape) : QString();
        if (index.column() == Dtype)
            return t ? QString::fromLatin1(ckptscope::dtypeName(t->dtype)) : QString();
        return n.label;
    default:
        break;
    }
    return {};
}

QVariant TensorTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (Column(section)) {
    case Name:
        return tr("Name");
    case Shape:
        return tr("Shape");
    case Elements:
        return tr("Elements");
    case Size:
        return tr("Size");
    case Dtype:
        return tr("Type");
    case ColumnCount:
        break;
    }
    return {};
}
