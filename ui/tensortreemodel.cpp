#include "tensortreemodel.h"

#include "ckptscope/saturating.h"
#include "nametree.h"
#include "plaintext.h"
#include "sizeformat.h"

#include <QApplication>
#include <QStyle>

using ckptscope::Document;
using ckptscope::TensorEntry;

TensorTreeModel::TensorTreeModel(QObject* parent) : QAbstractItemModel(parent) {
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
    m_nodeOfTensor.clear();
    m_warningText.clear();
    if (!m_document)
        return;
    const auto& tensors = m_document->tensors();
    m_nodeOfTensor.resize(tensors.size(), -1);
    m_warningText.resize(tensors.size());
    for (const auto& w : m_document->warnings())
        if (w.tensor && *w.tensor < tensors.size()) {
            QString& t = m_warningText[*w.tensor];
            t += (t.isEmpty() ? QString() : QStringLiteral("\n")) +
                 QString::fromStdString(w.message);
        }

    // The shape is the shared name tree (split on '.' and '/', natural order);
    // leaves get their sizes, groups the sums.
    std::vector<QString> names;
    names.reserve(tensors.size());
    for (const TensorEntry& t : tensors)
        names.push_back(QString::fromStdString(t.name));
    const NameTree tree(names);
    m_nodes.clear();
    m_nodes.reserve(tree.nodes().size());
    for (const NameTree::Node& shape : tree.nodes()) {
        Node n;
        static_cast<NameTree::Node&>(n) = shape;
        m_nodes.push_back(std::move(n));
    }
    for (size_t i = 0; i < tensors.size(); ++i) {
        m_nodeOfTensor[i] = tree.nodeOfItem(int(i));
        Node& leaf = m_nodes[size_t(m_nodeOfTensor[i])];
        const TensorEntry& t = tensors[i];
        const auto bytes = ckptscope::tensorSizeBytes(t); // by dtype
        leaf.overflow = !bytes;
        leaf.elements = t.elementCount.value_or(0);
        leaf.bytes = bytes.value_or(0);
        leaf.warning = !m_warningText[i].isEmpty();
    }
    for (size_t id = m_nodes.size() - 1; id > 0; --id) {
        const Node& n = m_nodes[id];
        Node& p = m_nodes[size_t(n.parent)];
        p.elements = ckptscope::saturatingAdd(p.elements, n.elements);
        p.bytes = ckptscope::saturatingAdd(p.bytes, n.bytes);
        p.overflow |= n.overflow;
    }
}

void TensorTreeModel::markNonFinite(int tensorIndex) {
    if (tensorIndex < 0 || size_t(tensorIndex) >= m_nodeOfTensor.size())
        return;
    Node& n = m_nodes[size_t(m_nodeOfTensor[size_t(tensorIndex)])];
    QString& text = m_warningText[size_t(tensorIndex)];
    if (text.contains(tr("holds NaN or infinite values")))
        return;
    n.warning = true;
    text +=
        (text.isEmpty() ? QString() : QStringLiteral("\n")) + tr("holds NaN or infinite values");
    const QModelIndex idx = indexOfTensor(tensorIndex);
    Q_EMIT dataChanged(idx, idx, {Qt::DecorationRole, Qt::ToolTipRole});
}

QModelIndex TensorTreeModel::indexOfNode(int node, int column) const {
    if (node <= 0)
        return {};
    return createIndex(m_nodes[size_t(node)].row, column, quintptr(node));
}

QModelIndex TensorTreeModel::indexOfTensor(int tensorIndex) const {
    if (tensorIndex < 0 || size_t(tensorIndex) >= m_nodeOfTensor.size())
        return {};
    return indexOfNode(m_nodeOfTensor[size_t(tensorIndex)], Name);
}

QModelIndex TensorTreeModel::indexOfName(const QString& fullName) const {
    for (size_t id = 1; id < m_nodes.size(); ++id)
        if (m_nodes[id].item >= 0 && m_nodes[id].path == fullName)
            return indexOfNode(int(id), Name);
    return {};
}

QModelIndex TensorTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (column < 0 || column >= ColumnCount || row < 0)
        return {};
    const int p = parent.isValid() ? int(parent.internalId()) : 0;
    const auto& children = m_nodes[size_t(p)].children;
    if (size_t(row) >= children.size())
        return {};
    return createIndex(row, column, quintptr(children[size_t(row)]));
}

QModelIndex TensorTreeModel::parent(const QModelIndex& child) const {
    if (!child.isValid())
        return {};
    return indexOfNode(m_nodes[child.internalId()].parent, Name);
}

int TensorTreeModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() && parent.column() != Name)
        return 0;
    const int p = parent.isValid() ? int(parent.internalId()) : 0;
    return int(m_nodes[size_t(p)].children.size());
}

int TensorTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

QVariant TensorTreeModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid())
        return {};
    const Node& n = m_nodes[index.internalId()];
    const TensorEntry* t = n.item >= 0 ? &m_document->tensors()[size_t(n.item)] : nullptr;
    switch (role) {
    case Qt::DisplayRole:
        switch (Column(index.column())) {
        case Name:
            return n.label;
        case Shape:
            return t ? shapeText(t->shape) : QString();
        case Elements:
            return n.overflow && t ? tr("overflow") : groupedNumber(n.elements);
        case Size:
            return n.overflow && t ? missingText() : humanBytes(n.bytes);
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
        if (index.column() == Name && n.warning)
            return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
        break;
    case Qt::ToolTipRole:
        if (t && n.warning)
            return plainToolTip(n.path + QStringLiteral("\n") + m_warningText[size_t(n.item)]);
        return plainToolTip(n.path);
    case TensorIndexRole:
        return n.item;
    case FullNameRole:
        return n.path;
    case SortRole:
        if (index.column() == Elements)
            return qulonglong(n.elements);
        if (index.column() == Size)
            return qulonglong(n.bytes);
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
