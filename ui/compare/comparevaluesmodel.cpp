#include "compare/comparevaluesmodel.h"

#include "compare/comparetensormodel.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/export/valuechunk.h"
#include "ckptscope/formats/dtype.h"

#include <algorithm>
#include <climits>
#include <cmath>

using namespace ckptscope;

namespace {

constexpr uint64_t kPage = 1024; // values read at a time
constexpr size_t kPagesKept = 64;

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

} // namespace

CompareValuesModel::CompareValuesModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareValuesModel::setTensor(std::shared_ptr<const Document> a,
                                   std::shared_ptr<const Document> b,
                                   const TensorDiffEntry* entry) {
    beginResetModel();
    m_a = Side{};
    m_b = Side{};
    m_rows = 0;
    if (entry) {
        for (auto [side, doc, index] :
             {std::tuple{&m_a, &a, entry->indexA}, {&m_b, &b, entry->indexB}}) {
            side->doc = *doc;
            side->tensor = index;
            side->count = index && *doc ? (*doc)->tensors()[*index].dataLen : 0;
        }
        // A view addresses at most INT_MAX rows.
        m_rows = int(std::min<uint64_t>(std::max(m_a.count, m_b.count), INT_MAX));
    }
    endResetModel();
}

const ValueChunk* CompareValuesModel::pageOf(const Side& side, uint64_t row) const {
    if (!side.tensor || row >= side.count)
        return nullptr;
    const uint64_t page = row / kPage;
    auto it = side.pages.find(page);
    if (it == side.pages.end()) {
        if (side.pages.size() >= kPagesKept)
            side.pages.clear(); // a long scroll: start afresh
        const uint64_t first = page * kPage;
        ValueChunk p;
        try { // read once: values and texts come from the same stored bytes
            p = ValueChunk(*side.doc, *side.tensor, first, std::min(kPage, side.count - first));
        } catch (const std::exception&) {
            return nullptr; // changed on disk: the window offers a reload
        }
        it = side.pages.emplace(page, std::move(p)).first;
    }
    return &it->second;
}

std::optional<double> CompareValuesModel::value(const Side& side, uint64_t row) const {
    const ValueChunk* p = pageOf(side, row);
    return p ? std::optional(p->value(size_t(row % kPage))) : std::nullopt;
}

QVariant CompareValuesModel::text(const Side& side, uint64_t row) const {
    const ValueChunk* p = pageOf(side, row);
    return p ? QVariant(q(p->text(size_t(row % kPage)))) : QVariant();
}

std::optional<std::string> CompareValuesModel::integerDelta(uint64_t row) const {
    const ValueChunk *pa = pageOf(m_a, row), *pb = pageOf(m_b, row);
    if (!pa || !pb)
        return std::nullopt;
    return ValueChunk::integerDifference(*pa, size_t(row % kPage), *pb, size_t(row % kPage));
}

std::optional<Dtype> CompareValuesModel::dtypeOf(const Side& side) const {
    if (!side.tensor || !side.doc)
        return std::nullopt;
    return side.doc->tensors()[*side.tensor].dtype;
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
    const std::optional<double> a = value(m_a, row), b = value(m_b, row);
    const bool both = a && b;
    // Integers on both sides: compared and subtracted exactly (64-bit ones
    // beyond 2^53 differ where their doubles do not).
    const bool needsDelta = role == Qt::BackgroundRole || index.column() == Delta;
    const std::optional<std::string> delta = both && needsDelta ? integerDelta(row) : std::nullopt;
    if (role == Qt::BackgroundRole) {
        const bool same =
            both && (delta ? *delta == "0" : (std::isnan(*a) && std::isnan(*b)) || *a == *b);
        if (same)
            return {};
        QColor c = CompareTensorModel::statusColor(!a   ? DiffStatus::Added
                                                   : !b ? DiffStatus::Removed
                                                        : DiffStatus::Changed);
        c.setAlpha(40);
        return c;
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
