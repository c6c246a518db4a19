#include "compare/gradient/compareblobmodel.h"

#include "common/plaintext.h"
#include "compare/comparetensormodel.h"

#include "ckptscope/common/numberformat.h"

using namespace ckptscope;

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QString count(const std::optional<uint64_t>& n) {
    return n ? q(fmt::grouped(*n)) : QString();
}

QString number(const std::optional<double>& v) {
    return v ? q(fmt::display(*v)) : QString();
}

} // namespace

CompareBlobModel::CompareBlobModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareBlobModel::setBlobs(std::vector<BlobDiff> blobs) {
    beginResetModel();
    m_blobs = std::move(blobs);
    endResetModel();
}

const BlobDiff* CompareBlobModel::blob(int row) const {
    return row >= 0 && size_t(row) < m_blobs.size() ? &m_blobs[size_t(row)] : nullptr;
}

int CompareBlobModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_blobs.size());
}

int CompareBlobModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareBlobModel::data(const QModelIndex& index, int role) const {
    const BlobDiff* b = index.isValid() ? blob(index.row()) : nullptr;
    if (!b)
        return {};
    if (index.column() == Status && role == Qt::DecorationRole)
        return CompareTensorModel::statusIcon(b->status);
    if (index.column() == Status && role == Qt::ForegroundRole)
        return CompareTensorModel::statusColor(b->status);
    if (role == Qt::TextAlignmentRole && index.column() >= BytesA)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && index.column() == Name)
        return plainToolTip(q(b->name));
    if (role == Qt::ToolTipRole && b->f32 && index.column() >= MaxAbsDiff) {
        const auto& v = index.column() == MaxAbsDiff ? b->f32->maxAbsDiff : b->f32->relL2;
        return v ? QVariant(q(fmt::exact(*v))) : QVariant();
    }
    if (role != Qt::DisplayRole)
        return {};
    const std::optional<ElementDiff>& f = b->f32;
    switch (index.column()) {
    case Name:
        return q(b->name);
    case Status:
        return CompareTensorModel::statusText(b->status);
    case BytesA:
        return count(b->bytesA);
    case BytesB:
        return count(b->bytesB);
    case DifferingBytes:
        return count(b->differingBytes);
    case DifferingValues:
        return f ? count(f->differing) : QString();
    case MaxAbsDiff:
        return f ? number(f->maxAbsDiff) : QString();
    case RelL2:
        return f ? number(f->relL2) : QString();
    }
    return {};
}

QVariant CompareBlobModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Name:
        return tr("Blob");
    case Status:
        return tr("Status");
    case BytesA:
        return tr("Bytes A");
    case BytesB:
        return tr("Bytes B");
    case DifferingBytes:
        return tr("Bytes differing");
    case DifferingValues:
        return tr("f32 differing");
    case MaxAbsDiff:
        return tr("Max |Δ|");
    case RelL2:
        return tr("Rel. L2 change");
    }
    return {};
}
