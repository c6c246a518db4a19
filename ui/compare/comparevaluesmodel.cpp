#include "compare/comparevaluesmodel.h"

#include "common/valuecache.h"
#include "compare/comparetensormodel.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/diff/elementdiff.h"
#include "ckptscope/export/valuechunk.h"
#include "ckptscope/formats/dtype.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>

using namespace ckptscope;

namespace {

constexpr uint64_t kPage = ValueCache::kChunk;
constexpr size_t kPagesKept = 64; // per side

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

} // namespace

CompareValuesModel::CompareValuesModel(QObject* parent) : QAbstractTableModel(parent) {
    for (Side* side : {&m_a, &m_b}) {
        side->values = new ValueCache(kPagesKept, this);
        connect(side->values, &ValueCache::chunkReady, this, [this] {
            if (m_rows > 0)
                Q_EMIT dataChanged(index(0, 0), index(m_rows - 1, ColumnCount - 1));
        });
        connect(side->values, &ValueCache::readFailed, this, &CompareValuesModel::readFailed);
    }
}

void CompareValuesModel::setTensor(std::shared_ptr<const Document> a,
                                   std::shared_ptr<const Document> b,
                                   const TensorDiffEntry* entry) {
    beginResetModel();
    m_rows = 0;
    for (auto [side, doc, index] : {std::tuple{&m_a, &a, entry ? entry->indexA : std::nullopt},
                                    {&m_b, &b, entry ? entry->indexB : std::nullopt}}) {
        // Another tensor: its values are asked afresh, the last one's
        // unread requests dropped.
        if (side->values->document() != *doc)
            side->values->setDocument(*doc);
        side->values->cancelPending();
        side->tensor = index;
        side->count = index && *doc ? (*doc)->tensors()[*index].dataLen : 0;
        side->order = {};
    }
    // B read in A's order, as the comparison's statistics read it.
    if (entry && entry->indexA && entry->indexB && !entry->rowOrderB.same() && a) {
        const TensorEntry& t = a->tensors()[*entry->indexA];
        if (!t.shape.empty() && entry->rowOrderB.fits(t.shape.front()) && t.shape.front() > 0) {
            m_b.order = entry->rowOrderB;
            m_b.rows = t.shape.front();
            m_b.rowLength = t.dataLen / m_b.rows;
        }
    }
    if (entry) {
        // A view addresses at most INT_MAX rows.
        m_rows = int(std::min<uint64_t>(std::max(m_a.count, m_b.count), INT_MAX));
    }
    endResetModel();
}

const ValueChunk* CompareValuesModel::pageOf(const Side& side, uint64_t row) const {
    if (!side.tensor || row >= side.count)
        return nullptr;
    return side.values->chunk(*side.tensor, side.element(row) / kPage);
}

bool CompareValuesModel::reading(const Side& side, uint64_t row) const {
    return side.tensor && row < side.count && !side.values->failed() && !pageOf(side, row);
}

size_t CompareValuesModel::pendingReads() const {
    return m_a.values->pending() + m_b.values->pending();
}

std::optional<double> CompareValuesModel::value(const Side& side, uint64_t row) const {
    const ValueChunk* p = pageOf(side, row);
    return p ? std::optional(p->value(size_t(side.element(row) % kPage))) : std::nullopt;
}

QVariant CompareValuesModel::text(const Side& side, uint64_t row) const {
    if (const ValueChunk* p = pageOf(side, row))
        return q(p->text(size_t(side.element(row) % kPage)));
    return reading(side, row) ? QVariant(QStringLiteral("…")) : QVariant();
}

std::optional<std::string> CompareValuesModel::integerDelta(uint64_t row) const {
    const ValueChunk *pa = pageOf(m_a, row), *pb = pageOf(m_b, row);
    if (!pa || !pb)
        return std::nullopt;
    return ValueChunk::integerDifference(*pa, size_t(m_a.element(row) % kPage), *pb,
                                         size_t(m_b.element(row) % kPage));
}

std::optional<Dtype> CompareValuesModel::dtypeOf(const Side& side) const {
    if (!side.tensor || !side.values->document())
        return std::nullopt;
    return side.values->document()->tensors()[*side.tensor].dtype;
}

int CompareValuesModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : m_rows;
}

int CompareValuesModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareValuesModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= m_rows)
        return {};
    const auto row = uint64_t(index.row());
    if (role == Qt::TextAlignmentRole)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != Qt::BackgroundRole)
        return {};
    if (index.column() == Index)
        return role == Qt::BackgroundRole ? QVariant() : QVariant(QString::number(row));
    for (const Side* side : {&m_a, &m_b})
        if (const ValueChunk* p = pageOf(*side, row); p && p->isComplex())
            return complexData(index.column(), role, row);
    const std::optional<double> a = value(m_a, row), b = value(m_b, row);
    const bool both = a && b;
    // A side still being read: no tint and no Δ until its values arrive.
    const bool pending = reading(m_a, row) || reading(m_b, row);
    if (pending && index.column() != ValueA && index.column() != ValueB)
        return role == Qt::DisplayRole && index.column() == Delta ? QVariant(QStringLiteral("…"))
                                                                  : QVariant();
    // Integers on both sides: compared and subtracted exactly (64-bit ones
    // beyond 2^53 differ where their doubles do not).
    const bool needsDelta = role == Qt::BackgroundRole || index.column() == Delta;
    const std::optional<std::string> delta = both && needsDelta ? integerDelta(row) : std::nullopt;
    if (role == Qt::BackgroundRole) {
        // The counts' rule (elementsDiffer) with the comparison's tolerance;
        // integers without one exactly (64-bit ones past 2^53 included).
        const bool exact = m_atol == 0 && m_rtol == 0;
        const bool same =
            both && (delta && exact ? *delta == "0" : !elementsDiffer(*a, *b, m_atol, m_rtol));
        if (same)
            return {};
        return changedTint(bool(a), bool(b));
    }
    // Exact everywhere: what the cell shows is what a copy pastes.
    switch (index.column()) {
    case ValueA:
        return text(m_a, row);
    case ValueB:
        return text(m_b, row);
    case Delta:
        if (delta)
            return q(*delta);
        return both ? QVariant(q(fmt::exact(*b - *a))) : QVariant();
    }
    return {};
}

QColor CompareValuesModel::changedTint(bool inA, bool inB) {
    QColor c = CompareTensorModel::statusColor(!inA   ? DiffStatus::Added
                                               : !inB ? DiffStatus::Removed
                                                      : DiffStatus::Changed);
    c.setAlpha(40);
    return c;
}

QVariant CompareValuesModel::complexData(int column, int role, uint64_t row) const {
    const ValueChunk *pa = pageOf(m_a, row), *pb = pageOf(m_b, row);
    std::optional<std::complex<double>> a, b; // empty: no such value, or not complex
    if (pa && pa->isComplex())
        a = pa->complexValue(size_t(m_a.element(row) % kPage));
    if (pb && pb->isComplex())
        b = pb->complexValue(size_t(m_b.element(row) % kPage));
    if (role == Qt::BackgroundRole)
        return a && b && !elementsDiffer(*a, *b, m_atol, m_rtol)
                   ? QVariant()
                   : QVariant(changedTint(pa != nullptr, pb != nullptr));
    switch (column) {
    case ValueA:
        return text(m_a, row);
    case ValueB:
        return text(m_b, row);
    case Delta:
        if (a && b) {
            const std::complex<double> d = *b - *a;
            return q(fmt::exactComplex(d.real(), d.imag(), false));
        }
        return {};
    }
    return {};
}

QVariant CompareValuesModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Index:
        return tr("Index");
    case ValueA:
        return tr("A");
    case ValueB:
        return tr("B");
    case Delta:
        return tr("Δ = B − A");
    }
    return {};
}
