#include "tensor/tensorvaluesmodel.h"

#include "common/sizeformat.h"
#include "common/valuecache.h"

#include <algorithm>
#include <climits>

TensorValuesModel::TensorValuesModel(QObject* parent)
    : QAbstractTableModel(parent), m_values(new ValueCache(kMaxChunks, this)) {
    // A chunk arrived: its cells (any of them may be on screen) show it.
    connect(m_values, &ValueCache::chunkReady, this, [this](size_t tensor, uint64_t) {
        if (int(tensor) == m_tensor && m_rows > 0 && m_cols > 0)
            Q_EMIT dataChanged(index(0, 0), index(int(m_rows) - 1, int(m_cols) - 1),
                               {Qt::DisplayRole, Qt::EditRole, Qt::ToolTipRole});
    });
    connect(m_values, &ValueCache::readFailed, this, [this](const QString& message) {
        Q_EMIT readFailed(message);
        if (m_rows > 0 && m_cols > 0) // "…" becomes "?"
            Q_EMIT dataChanged(index(0, 0), index(int(m_rows) - 1, int(m_cols) - 1));
    });
}

void TensorValuesModel::setTensor(std::shared_ptr<const ckptscope::Document> document, int tensor) {
    beginResetModel();
    m_document = std::move(document);
    m_tensor =
        m_document && tensor >= 0 && size_t(tensor) < m_document->tensors().size() ? tensor : -1;
    m_leading.assign(leadingDimensions().size(), 0);
    m_values->setDocument(m_tensor >= 0 ? m_document : nullptr);
    layout();
    endResetModel();
}

std::vector<uint64_t> TensorValuesModel::leadingDimensions() const {
    if (m_tensor < 0)
        return {};
    const auto& t = m_document->tensors()[size_t(m_tensor)];
    // Only a consistent shape can be sliced; otherwise show the stored values.
    if (t.shape.size() <= 2 || !t.elementCount || *t.elementCount != t.dataLen)
        return {};
    return {t.shape.begin(), t.shape.end() - 2};
}

void TensorValuesModel::setLeadingIndices(std::vector<uint64_t> indices) {
    const auto dims = leadingDimensions();
    if (indices.size() != dims.size())
        return;
    for (size_t i = 0; i < dims.size(); ++i)
        indices[i] = std::min(indices[i], dims[i] ? dims[i] - 1 : 0);
    beginResetModel();
    m_leading = std::move(indices);
    m_values->cancelPending(); // another slice: the last one's reads are not needed
    layout();
    endResetModel();
}

void TensorValuesModel::layout() {
    m_rows = m_cols = m_base = 0;
    m_truncated = false;
    m_matrix = false;
    if (m_tensor < 0)
        return;
    const auto& t = m_document->tensors()[size_t(m_tensor)];
    const bool consistent = t.elementCount && *t.elementCount == t.dataLen;
    if (consistent && t.shape.size() >= 2) {
        m_matrix = true;
        m_rows = t.shape[t.shape.size() - 2];
        m_cols = t.shape[t.shape.size() - 1];
        // Row-major offset of the chosen slice.
        uint64_t stride = m_rows * m_cols;
        for (size_t i = m_leading.size(); i-- > 0;) {
            m_base += m_leading[i] * stride;
            stride *= t.shape[i];
        }
    } else {
        m_rows = t.dataLen;
        m_cols = m_rows ? 1 : 0;
    }
    if (m_rows > uint64_t(INT_MAX) || m_cols > uint64_t(INT_MAX)) {
        m_truncated = true;
        m_rows = std::min<uint64_t>(m_rows, INT_MAX);
        m_cols = std::min<uint64_t>(m_cols, INT_MAX);
    }
}

QString TensorValuesModel::layoutNote() const {
    if (m_tensor < 0)
        return {};
    const auto& t = m_document->tensors()[size_t(m_tensor)];
    if (t.elementCount && *t.elementCount == t.dataLen)
        return {};
    if (ckptscope::isMetaTensor(m_document->index(), size_t(m_tensor)))
        return tr("A meta tensor: torch saved its dtype and shape, no values.");
    const QString holds = t.elementCount
                              ? tr("holds %1 elements").arg(groupedNumber(*t.elementCount))
                              : tr("holds more elements than 64 bits can count");
    return tr("⚠ The shape %1 %2, but the file stores %3 values: they are shown as one column "
              "in file order, not as a grid.")
        .arg(shapeText(t.shape), holds, groupedNumber(t.dataLen));
}

std::optional<ckptscope::Dtype> TensorValuesModel::dtype() const {
    if (!m_document || m_tensor < 0)
        return std::nullopt;
    return m_document->tensors()[size_t(m_tensor)].dtype;
}

uint64_t TensorValuesModel::linearIndex(int row, int column) const {
    return m_base + uint64_t(row) * (m_matrix ? m_cols : 1) + uint64_t(column);
}

size_t TensorValuesModel::pendingReads() const {
    return m_values->pending();
}

QString TensorValuesModel::placeholder() {
    return QStringLiteral("…");
}

int TensorValuesModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows);
}

int TensorValuesModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_cols);
}

QVariant TensorValuesModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || m_tensor < 0)
        return {};
    if (role == Qt::TextAlignmentRole)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != Qt::EditRole && role != Qt::ToolTipRole)
        return {};
    // The values as stored (ValueChunk): each cell spelled exactly in its
    // dtype, 64-bit integers and F64 included (not rounded through a float).
    const uint64_t linear = linearIndex(index.row(), index.column());
    const uint64_t chunk = ValueCache::kChunk;
    const ckptscope::ValueChunk* values = m_values->chunk(size_t(m_tensor), linear / chunk);
    if (!values) {
        if (role == Qt::EditRole)
            return {};
        const QString shown = m_values->failed() ? QStringLiteral("?") : placeholder();
        return role == Qt::ToolTipRole
                   ? tr("element %1: %2")
                         .arg(groupedNumber(linear),
                              m_values->failed() ? m_values->error() : tr("reading…"))
                   : shown;
    }
    if (role == Qt::EditRole)
        return values->value(size_t(linear % chunk));
    // Exact, not rounded: what the cell shows is what a copy pastes.
    const QString text = QString::fromStdString(values->text(size_t(linear % chunk)));
    if (role == Qt::ToolTipRole)
        return tr("element %1 = %2").arg(groupedNumber(uint64_t(linear)), text);
    return text;
}

QVariant TensorValuesModel::headerData(int section, Qt::Orientation, int role) const {
    if (role != Qt::DisplayRole)
        return {};
    return QString::number(section);
}
