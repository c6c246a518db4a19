#include "compare/comparetensormodel.h"

#include "common/plaintext.h"
#include "common/sizeformat.h"
#include "tensor/nametree.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/common/saturating.h"

#include <QApplication>
#include <QFont>
#include <QPainter>
#include <QPixmap>
#include <QStyle>

#include <limits>

using namespace ckptscope;

namespace {

QString text(const std::string& s) {
    return shownText(s);
}

QString change(const QString& a, const QString& b) {
    return a == b ? a : a + QStringLiteral(" → ") + b;
}

QString shapeText(const TensorDiffEntry& e) {
    return change(e.shapeA ? text(fmt::shape(*e.shapeA)) : missingText(),
                  e.shapeB ? text(fmt::shape(*e.shapeB)) : missingText());
}

QString dtypeText(const TensorDiffEntry& e) {
    return change(e.dtypeA ? text(*e.dtypeA) : missingText(),
                  e.dtypeB ? text(*e.dtypeB) : missingText());
}

constexpr double kInfinity = std::numeric_limits<double>::infinity();

} // namespace

CompareTensorModel::CompareTensorModel(QObject* parent) : NameTreeModel(parent) {}

void CompareTensorModel::setDiff(std::shared_ptr<const TensorDiff> diff,
                                 std::shared_ptr<const Document> b) {
    beginResetModel();
    m_diff = std::move(diff);
    m_b = std::move(b);
    build();
    endResetModel();
}

int CompareTensorModel::severity(DiffStatus status) {
    switch (status) {
    case DiffStatus::Same:
    case DiffStatus::Tied: // stored once by one format: not a difference
        return 0;
    case DiffStatus::DtypeChanged:
        return 1;
    case DiffStatus::Changed:
        return 2;
    case DiffStatus::Added:
        return 3;
    case DiffStatus::Removed:
        return 4;
    case DiffStatus::ShapeChanged:
        return 5;
    }
    return 0;
}

void CompareTensorModel::build() {
    std::vector<QString> names;
    if (m_diff)
        for (const TensorDiffEntry& e : m_diff->tensors)
            names.push_back(text(e.name));
    setNames(names);
    m_nodes.assign(tree().nodes.size(), Node{});
    m_anyDtypeDiffers = false;
    m_quantized = false;
    for (size_t tensor = 0; tensor < names.size(); ++tensor) {
        Node& n = m_nodes[size_t(tree().nodeOfItem[tensor])];
        const TensorDiffEntry& e = m_diff->tensors[tensor];
        n.worst = e.status;
        n.statusCounts[size_t(e.status)] = 1;
        m_anyDtypeDiffers |= e.dtypeA && e.dtypeB && *e.dtypeA != *e.dtypeB;
        if (e.elements) {
            n.nan = e.elements->nanMismatch;
            n.inf = e.elements->infMismatch;
            n.relL2 = e.elements->relL2;
            n.maxAbsDiff = e.elements->maxAbsDiff;
            n.differing = e.elements->differing;
            n.count = e.elements->count;
            n.cosine = e.elements->cosine;
        }
        if (m_b && e.indexB && *e.indexB < m_b->tensors().size()) {
            const TensorEntry& t = m_b->tensors()[*e.indexB];
            m_quantized |= dtypeBlock(t.dtype).elements > 1;
            n.bpwB = tensorBitsPerWeight(t);
            if (n.bpwB) { // and its two sums, for the groups
                n.weightsB = *t.elementCount;
                n.bitsB = ckptscope::saturatingMul(*tensorSizeBytes(t), uint64_t(8));
            }
        }
    }
    // Bottom-up (children have larger ids): worst status, counts, largest
    // figures and sums.
    auto larger = [](std::optional<double>& into, const std::optional<double>& v) {
        if (v && (!into || *v > *into))
            into = v;
    };
    auto add = [](std::optional<uint64_t>& into, const std::optional<uint64_t>& v) {
        if (v)
            into = ckptscope::saturatingAdd(into.value_or(0), *v);
    };
    for (size_t id = m_nodes.size() - 1; id > 0; --id) {
        const Node& n = m_nodes[id];
        Node& p = m_nodes[size_t(tree().nodes[id].parent)];
        if (severity(n.worst) > severity(p.worst))
            p.worst = n.worst;
        for (size_t s = 0; s < p.statusCounts.size(); ++s)
            p.statusCounts[s] = ckptscope::saturatingAdd(p.statusCounts[s], n.statusCounts[s]);
        larger(p.relL2, n.relL2);
        larger(p.maxAbsDiff, n.maxAbsDiff);
        add(p.differing, n.differing);
        add(p.count, n.count);
        p.nan = ckptscope::saturatingAdd(p.nan, n.nan);
        p.inf = ckptscope::saturatingAdd(p.inf, n.inf);
        p.bitsB = ckptscope::saturatingAdd(p.bitsB, n.bitsB);
        p.weightsB = ckptscope::saturatingAdd(p.weightsB, n.weightsB);
    }
}

const TensorDiffEntry* CompareTensorModel::entry(int tensor) const {
    if (!m_diff || tensor < 0 || size_t(tensor) >= m_diff->tensors.size())
        return nullptr;
    return &m_diff->tensors[size_t(tensor)];
}

QModelIndex CompareTensorModel::indexOfTensor(int tensor, int column) const {
    if (column < 0 || column >= ColumnCount)
        return {};
    return indexOfItem(tensor, column);
}

int CompareTensorModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

QString CompareTensorModel::statusText(DiffStatus status) {
    switch (status) {
    case DiffStatus::Same:
        return tr("same");
    case DiffStatus::Changed:
        return tr("changed");
    case DiffStatus::Added:
        return tr("added");
    case DiffStatus::Removed:
        return tr("removed");
    case DiffStatus::ShapeChanged:
        return tr("shape changed");
    case DiffStatus::DtypeChanged:
        return tr("dtype changed");
    case DiffStatus::Tied:
        return tr("tied");
    }
    return {};
}

QColor CompareTensorModel::statusColor(DiffStatus status) {
    switch (status) {
    case DiffStatus::Same:
        return QColor(0x90, 0x90, 0x90);
    case DiffStatus::Changed:
        return QColor(0xe0, 0x8a, 0x00);
    case DiffStatus::Added:
        return QColor(0x2e, 0x9d, 0x45);
    case DiffStatus::Removed:
        return QColor(0xd0, 0x3a, 0x2f);
    case DiffStatus::ShapeChanged:
        return QColor(0x8e, 0x44, 0xc8);
    case DiffStatus::DtypeChanged:
        return QColor(0x1f, 0x7a, 0xb8);
    case DiffStatus::Tied:
        return QColor(0x6a, 0x8a, 0x9a);
    }
    return {};
}

namespace {

QIcon drawIcon(DiffStatus status) {
    // Shapes as well as colours, for those who do not tell the colours apart:
    // = same, ~ changed, + added, − removed, ⧉ shape changed, T dtype changed,
    // two links tied.
    QPixmap pm(16, 16);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setBrush(CompareTensorModel::statusColor(status));
    p.setPen(Qt::NoPen);
    p.drawRoundedRect(QRectF(1, 1, 14, 14), 3, 3);
    p.setPen(QPen(Qt::white, 2));
    switch (status) {
    case DiffStatus::Same:
        p.drawLine(QPointF(4, 6), QPointF(12, 6));
        p.drawLine(QPointF(4, 10), QPointF(12, 10));
        break;
    case DiffStatus::Changed:
        p.drawArc(QRectF(3, 5, 5, 6), 0, 180 * 16);
        p.drawArc(QRectF(8, 5, 5, 6), 180 * 16, 180 * 16);
        break;
    case DiffStatus::Added:
        p.drawLine(QPointF(8, 4), QPointF(8, 12));
        p.drawLine(QPointF(4, 8), QPointF(12, 8));
        break;
    case DiffStatus::Removed:
        p.drawLine(QPointF(4, 8), QPointF(12, 8));
        break;
    case DiffStatus::ShapeChanged:
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRectF(4, 4, 5, 5));
        p.drawRect(QRectF(7, 7, 5, 5));
        break;
    case DiffStatus::DtypeChanged:
        p.drawLine(QPointF(4, 4.5), QPointF(12, 4.5));
        p.drawLine(QPointF(8, 4.5), QPointF(8, 12));
        break;
    case DiffStatus::Tied: // two links of a chain
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(QRectF(3, 5, 6, 6));
        p.drawEllipse(QRectF(7, 5, 6, 6));
        break;
    }
    return QIcon(pm);
}

} // namespace

QIcon CompareTensorModel::statusIcon(DiffStatus status) {
    return drawIcon(status);
}

// "NaN 2, Inf 1" with the NaN icon: pairs where NaN or an infinity stands
// against anything but itself (a group: the sums below). Sorted by their
// count, before every finite change.
QVariant CompareTensorModel::nonFiniteData(const Node& f, int role) const {
    const uint64_t n = f.nan + f.inf;
    switch (role) {
    case Qt::DisplayRole: {
        QStringList parts;
        if (f.nan)
            parts << tr("NaN %1").arg(text(fmt::grouped(f.nan)));
        if (f.inf)
            parts << tr("Inf %1").arg(text(fmt::grouped(f.inf)));
        return parts.join(QStringLiteral(", "));
    }
    case Qt::DecorationRole:
        return n ? QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning) : QVariant();
    case SortRole:
        return double(n);
    case Qt::ToolTipRole:
        if (!n)
            return QVariant();
        return tr("%1 pairs where exactly one side is NaN, %2 where an infinity stands against "
                  "another value")
            .arg(text(fmt::grouped(f.nan)), text(fmt::grouped(f.inf)));
    default:
        return {};
    }
}

// B's bits per weight: a tensor's (tensorBitsPerWeight), a group's stored
// bits over its weights.
QVariant CompareTensorModel::bitsPerWeightData(const Node& f, int role) const {
    if (!f.bpwB && f.weightsB == 0)
        return role == Qt::DisplayRole ? QVariant(QString()) : QVariant();
    const double bpw = f.bpwB ? *f.bpwB : double(f.bitsB) / double(f.weightsB);
    switch (role) {
    case Qt::DisplayRole:
        return text(fmt::display(bpw)); // as the CLI gives it (6.5625, not 6.56)
    case SortRole:
        return bpw;
    case Qt::ToolTipRole:
        return tr("B stores %1 bits per weight").arg(bpw, 0, 'g', 6);
    default:
        return {};
    }
}

QVariant CompareTensorModel::groupData(const NameTree::Node& n, const Node& f, int column,
                                       int role) const {
    uint64_t tensors = 0;
    for (uint64_t c : f.statusCounts)
        tensors += c;
    const uint64_t differ = tensors - f.statusCounts[size_t(DiffStatus::Same)];
    const bool figure = column == RelL2 || column == MaxAbsDiff;
    auto largest = [&]() -> const std::optional<double>& {
        return column == RelL2 ? f.relL2 : f.maxAbsDiff;
    };
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case Name:
            return shownText(n.label);
        case Status:
            return differ == 0 ? statusText(DiffStatus::Same)
                               : tr("%1 of %2 differ")
                                     .arg(text(fmt::grouped(differ)), text(fmt::grouped(tensors)));
        case RelL2:
        case MaxAbsDiff:
            return largest() ? text(fmt::display(*largest())) : QString();
        case Differing:
            return f.differing ? text(fmt::grouped(*f.differing)) : QString();
        case Count:
            return f.count ? text(fmt::grouped(*f.count)) : QString();
        }
        return QString();
    case SortRole:
        switch (column) {
        case Name:
            return shownText(n.label);
        case Status:
            return severity(f.worst);
        case RelL2:
        case MaxAbsDiff: // a NaN/Inf gained below ranks above any finite change
            if (f.nan + f.inf > 0)
                return kInfinity;
            return largest() ? QVariant(*largest()) : QVariant();
        case Differing:
            return f.differing ? QVariant(double(*f.differing)) : QVariant();
        case Count:
            return f.count ? QVariant(double(*f.count)) : QVariant();
        }
        return {};
    case Qt::ToolTipRole:
        if (column == Status) {
            QStringList parts;
            for (DiffStatus s : {DiffStatus::Changed, DiffStatus::DtypeChanged, DiffStatus::Added,
                                 DiffStatus::Removed, DiffStatus::ShapeChanged, DiffStatus::Same})
                if (f.statusCounts[size_t(s)])
                    parts << text(fmt::grouped(f.statusCounts[size_t(s)])) + QLatin1Char(' ') +
                                 statusText(s);
            return parts.join(QStringLiteral(", "));
        }
        if (figure && largest())
            return tr("The largest among the tensors in %1 (over finite pairs)").arg(n.path);
        return n.path;
    case Qt::FontRole:
        if (figure) { // the largest below, not the group's own figure
            QFont italic;
            italic.setItalic(true);
            return italic;
        }
        return {};
    default:
        return {};
    }
}

QString CompareTensorModel::nameInB(const TensorDiffEntry& e) {
    if (e.nameB.empty())
        return {};
    return e.rowOrderB.same() ? tr("in B: %1").arg(text(e.nameB))
                              : tr("in B: %1 (rows in A's order; llama.cpp interleaves q/k "
                                   "rows per head)")
                                    .arg(text(e.nameB));
}

QVariant CompareTensorModel::tensorData(const NameTree::Node& n, const Node& f,
                                        const TensorDiffEntry& e, int column, int role) const {
    const auto& el = e.elements;
    const bool nonFinite = f.nan + f.inf > 0;
    auto number = [&](std::optional<double> v) -> QVariant {
        if (role == SortRole) // none: CompareFilterProxy puts it last in either order
            return nonFinite ? QVariant(kInfinity) : v ? QVariant(*v) : QVariant();
        return v ? text(fmt::figure(*v)) : QString();
    };
    if (role == Qt::ToolTipRole) {
        if (column == Name && !e.nameB.empty()) // a pair under llama.cpp's names
            return n.path + QLatin1Char('\n') + nameInB(e);
        if (column == Name)
            return n.path;
        if (column == Status || column == Shape || column == Dtype) // whole when elided
            return tensorData(n, f, e, column, Qt::DisplayRole);
        if ((column == RelL2 || column == MaxAbsDiff) && nonFinite)
            return tr("Over the finite pairs; %1 NaN/Inf mismatches rank this tensor first")
                .arg(text(fmt::grouped(f.nan + f.inf)));
        return {};
    }
    if (role != Qt::DisplayRole && role != SortRole)
        return {};
    switch (column) {
    case Name:
        return role == SortRole ? QVariant(n.label) : QVariant(shownText(n.label));
    case Status:
        if (role == SortRole)
            return severity(e.status);
        return e.tiedTo.empty() ? statusText(e.status) : tr("tied to %1").arg(shownText(e.tiedTo));
    case Shape:
        return shapeText(e);
    case Dtype:
        return dtypeText(e);
    case RelL2:
        return number(el ? el->relL2 : std::nullopt);
    case MaxAbsDiff:
        return number(el ? el->maxAbsDiff : std::nullopt);
    case Cosine: // most changed is lowest: no NaN/Inf ranking here
        if (role == SortRole)
            return f.cosine ? QVariant(*f.cosine) : QVariant();
        return f.cosine ? text(fmt::display(*f.cosine)) : QString();
    case Differing:
        if (role == SortRole)
            return el ? QVariant(double(el->differing)) : QVariant();
        return el ? text(fmt::grouped(el->differing)) : QString();
    case Count:
        if (role == SortRole)
            return el ? QVariant(double(el->count)) : QVariant();
        return el ? text(fmt::grouped(el->count)) : QString();
    }
    return {};
}

QVariant CompareTensorModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid())
        return {};
    const NameTree::Node& n = node(index);
    const Node& f = m_nodes[size_t(nodeId(index))];
    if (role == TensorIndexRole)
        return n.item;
    if (role == FullNameRole)
        return n.path;
    if (role == StatusRole)
        return int(f.worst);
    if (role == Qt::DecorationRole && index.column() == Status)
        return statusIcon(f.worst);
    if (role == Qt::ForegroundRole && index.column() == Status)
        return statusColor(f.worst);
    if (role == Qt::TextAlignmentRole && index.column() >= RelL2)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (index.column() == NonFinite)
        return nonFiniteData(f, role);
    if (index.column() == BitsPerWeight)
        return bitsPerWeightData(f, role);
    const TensorDiffEntry* e = entry(n.item);
    return e ? tensorData(n, f, *e, index.column(), role) : groupData(n, f, index.column(), role);
}

QVariant CompareTensorModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::ToolTipRole)
        switch (section) {
        case Dtype:
            return tr("The dtype of A → the dtype of B");
        case NonFinite:
            return tr("Pairs where NaN or an infinity stands against anything but itself");
        case RelL2:
            return tr("Relative L2 change ‖B − A‖ / ‖A‖, over the pairs finite on both sides");
        case MaxAbsDiff:
            return tr("Over the pairs finite on both sides");
        case Cosine:
            return tr("Cosine similarity of A and B, over the pairs finite on both sides");
        case BitsPerWeight:
            return tr("Bits per weight of B as stored (a group: its bits over its weights)");
        default:
            return {};
        }
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Name:
        return tr("Tensor");
    case Status:
        return tr("Status");
    case Shape:
        return tr("Shape");
    case Dtype:
        return tr("Dtype");
    case NonFinite:
        return tr("NaN/Inf");
    case RelL2:
        return tr("Rel. L2");
    case MaxAbsDiff:
        return tr("Max |Δ|");
    case Cosine:
        return tr("Cosine");
    case BitsPerWeight:
        return tr("bpw (B)");
    case Differing:
        return tr("Differing");
    case Count:
        return tr("Compared");
    }
    return {};
}
