#include "comparetensormodel.h"

#include "sizeformat.h"

#include "ckptscope/numberformat.h"

#include <QPainter>
#include <QPixmap>

using namespace ckptscope;

namespace {

QString text(const std::string& s) {
    return QString::fromStdString(s);
}

QString shapeText(const TensorDiffEntry& e) {
    const QString a = e.shapeA ? text(fmt::shape(*e.shapeA)) : missingText();
    const QString b = e.shapeB ? text(fmt::shape(*e.shapeB)) : missingText();
    return a == b ? a : a + QStringLiteral(" → ") + b;
}

} // namespace

CompareTensorModel::CompareTensorModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareTensorModel::setDiff(std::shared_ptr<const TensorDiff> diff) {
    beginResetModel();
    m_diff = std::move(diff);
    endResetModel();
}

const TensorDiffEntry* CompareTensorModel::entry(int row) const {
    if (!m_diff || row < 0 || size_t(row) >= m_diff->tensors.size())
        return nullptr;
    return &m_diff->tensors[size_t(row)];
}

int CompareTensorModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_diff ? 0 : int(m_diff->tensors.size());
}

int CompareTensorModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
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
    }
    return {};
}

QIcon CompareTensorModel::statusIcon(DiffStatus status) {
    // Shapes as well as colours, for those who do not tell the colours apart:
    // = same, ~ changed, + added, − removed, ⧉ shape changed.
    QPixmap pm(16, 16);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setBrush(statusColor(status));
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
    }
    return QIcon(pm);
}

QVariant CompareTensorModel::data(const QModelIndex& index, int role) const {
    const TensorDiffEntry* e = index.isValid() ? entry(index.row()) : nullptr;
    if (!e)
        return {};
    const auto& el = e->elements;
    auto number = [&](std::optional<double> v) -> QVariant {
        if (role == SortRole) // none: CompareFilterProxy puts it last in either order
            return v ? QVariant(*v) : QVariant();
        return v ? text(fmt::display(*v)) : QString();
    };
    if (role == StatusRole)
        return int(e->status);
    if (role == Qt::DecorationRole && index.column() == Status)
        return statusIcon(e->status);
    if (role == Qt::ForegroundRole && index.column() == Status)
        return statusColor(e->status);
    if (role == Qt::ToolTipRole && index.column() == Name)
        return text(e->name);
    if (role == Qt::TextAlignmentRole && index.column() >= RelL2)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != SortRole)
        return {};
    switch (index.column()) {
    case Name:
        return text(e->name);
    case Status:
        return role == SortRole ? QVariant(int(e->status)) : QVariant(statusText(e->status));
    case Shape:
        return shapeText(*e);
    case RelL2:
        return number(el ? el->relL2 : std::nullopt);
    case MaxAbsDiff:
        return number(el ? el->maxAbsDiff : std::nullopt);
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

QVariant CompareTensorModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Name:
        return tr("Tensor");
    case Status:
        return tr("Status");
    case Shape:
        return tr("Shape");
    case RelL2:
        return tr("Rel. L2 change");
    case MaxAbsDiff:
        return tr("Max |Δ|");
    case Differing:
        return tr("Differing");
    case Count:
        return tr("Compared");
    }
    return {};
}
