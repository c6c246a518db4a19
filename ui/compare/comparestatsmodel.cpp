#include "compare/comparestatsmodel.h"

#include "ckptscope/common/numberformat.h"
#include "widgets/rowheight.h"

#include <QHeaderView>
#include <QTableView>

using namespace ckptscope;

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QString number(std::optional<double> v) {
    return v ? q(fmt::figure(*v)) : QString();
}

QString exact(std::optional<double> v) {
    return v ? q(fmt::exact(*v)) : QString();
}

QString count(uint64_t n) {
    return q(fmt::grouped(n));
}

} // namespace

CompareStatsModel::CompareStatsModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareStatsModel::clear() {
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

void CompareStatsModel::setValues(std::optional<TensorStats> a, std::optional<TensorStats> b,
                                  std::optional<ElementDiff> delta) {
    beginResetModel();
    m_rows.clear();
    // A statistic of both sides: text per side, exact value as tooltip.
    auto side = [&](const QString& label, auto get, bool isCount) {
        Row r;
        r.label = label;
        for (auto [s, text, tip] : {std::tuple{&a, &r.a, &r.tipA}, {&b, &r.b, &r.tipB}}) {
            if (!*s)
                continue;
            if (isCount) {
                *text = count(uint64_t(get(**s).value_or(0)));
            } else {
                *text = number(get(**s));
                *tip = exact(get(**s));
            }
        }
        m_rows.push_back(r);
    };
    using O = std::optional<double>;
    side(
        tr("values"), [](const TensorStats& s) { return O(double(s.count)); }, true);
    side(
        tr("finite"), [](const TensorStats& s) { return O(double(s.finite)); }, true);
    side(
        tr("NaN"), [](const TensorStats& s) { return O(double(s.nan)); }, true);
    side(
        tr("+Inf"), [](const TensorStats& s) { return O(double(s.posInf)); }, true);
    side(
        tr("−Inf"), [](const TensorStats& s) { return O(double(s.negInf)); }, true);
    side(
        tr("zeros"), [](const TensorStats& s) { return O(double(s.zeros)); }, true);
    side(
        tr("min"), [](const TensorStats& s) { return s.min; }, false);
    side(
        tr("max"), [](const TensorStats& s) { return s.max; }, false);
    side(
        tr("mean"), [](const TensorStats& s) { return s.mean; }, false);
    side(
        tr("std"), [](const TensorStats& s) { return s.std; }, false);
    side(
        tr("L2 norm"), [](const TensorStats& s) { return O(s.l2); }, false);
    // The comparison's own figures, in the Δ column.
    auto deltaRow = [&](const QString& label, const QString& text, const QString& tip = {}) {
        m_rows.push_back({label, {}, {}, text, {}, {}, tip});
    };
    if (delta) {
        const ElementDiff& d = *delta;
        deltaRow(tr("pairs compared"), count(d.count));
        deltaRow(tr("differing"), count(d.differing));
        deltaRow(tr("NaN / Inf mismatch"),
                 count(d.nanMismatch) + QStringLiteral(" / ") + count(d.infMismatch),
                 tr("Pairs where exactly one side is NaN / where an infinity stands against "
                    "another value"));
        // The figures leave out the pairs where either side is NaN or
        // infinite; the labels say so when there were such pairs.
        const bool all = d.finitePairs == d.count;
        deltaRow(all ? tr("max |Δ|") : tr("max |Δ| over finite pairs"), number(d.maxAbsDiff),
                 exact(d.maxAbsDiff));
        deltaRow(all ? tr("mean |Δ|") : tr("mean |Δ| over finite pairs"), number(d.meanAbsDiff),
                 exact(d.meanAbsDiff));
        deltaRow(all ? tr("rel. L2 change") : tr("rel. L2 change over finite pairs"),
                 number(d.relL2), exact(d.relL2));
        deltaRow(all ? tr("cosine") : tr("cosine over finite pairs"), number(d.cosine),
                 exact(d.cosine));
    }
    endResetModel();
}

int CompareStatsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int CompareStatsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareStatsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= m_rows.size())
        return {};
    const Row& r = m_rows[size_t(index.row())];
    if (role == Qt::TextAlignmentRole && index.column() != Label)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole) {
        const QString tip = index.column() == SideA   ? r.tipA
                            : index.column() == SideB ? r.tipB
                            : index.column() == Delta ? r.tipDelta
                                                      : QString();
        return tip.isEmpty() ? QVariant() : QVariant(tip);
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Label:
        return r.label;
    case SideA:
        return r.a;
    case SideB:
        return r.b;
    case Delta:
        return r.delta;
    }
    return {};
}

QVariant CompareStatsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Label:
        return tr("Statistic");
    case SideA:
        return tr("A");
    case SideB:
        return tr("B");
    case Delta:
        return tr("Δ (B − A)");
    }
    return {};
}

void showCompareStats(QTableView* view, CompareStatsModel* model) {
    view->setModel(model);
    view->verticalHeader()->hide();
    rowheight::followFont(view, 4);
    QHeaderView* header = view->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::Stretch);
    header->setSectionResizeMode(CompareStatsModel::Label, QHeaderView::ResizeToContents);
}
