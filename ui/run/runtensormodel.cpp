#include "run/runtensormodel.h"

#include "common/plaintext.h"
#include "tensor/tensortreemodel.h"

#include "ckptscope/common/numberformat.h"

#include <QApplication>
#include <QStyle>

using namespace ckptscope;

RunTensorModel::RunTensorModel(QObject* parent) : NameTreeModel(parent) {}

void RunTensorModel::setSeries(std::shared_ptr<const Run> run,
                               std::shared_ptr<const std::vector<TensorSeries>> series) {
    beginResetModel();
    m_run = std::move(run);
    m_series = std::move(series);
    std::vector<QString> names;
    m_nonFinite.clear();
    if (m_series && m_run)
        for (const TensorSeries& s : *m_series) {
            names.push_back(QString::fromStdString(s.name));
            size_t bad = 0;
            for (size_t c = 0; c < m_run->checkpoints.size(); ++c)
                if (const TensorSummary* t = s.point(*m_run, c))
                    bad += t->stats.nan + t->stats.posInf + t->stats.negInf > 0;
            m_nonFinite.push_back(bad);
        }
    setNames(names);
    const NameTree& t = tree();
    m_marked.assign(t.nodes.size(), false);
    for (size_t i = 0; i < t.nodeOfItem.size(); ++i)
        if (m_nonFinite[i])
            markUpward(m_marked, int(i));
    endResetModel();
}

const TensorSeries* RunTensorModel::seriesAt(int series) const {
    return m_series && series >= 0 && size_t(series) < m_series->size()
               ? &(*m_series)[size_t(series)]
               : nullptr;
}

int RunTensorModel::seriesOf(const QModelIndex& index) const {
    return index.isValid() ? node(index).item : -1;
}

QModelIndex RunTensorModel::indexOfSeries(int series) const {
    return indexOfItem(series, Name);
}

int RunTensorModel::findSeries(const std::string& name, size_t occurrence) const {
    for (int i = 0; m_series && size_t(i) < m_series->size(); ++i)
        if ((*m_series)[size_t(i)].name == name && (*m_series)[size_t(i)].occurrence == occurrence)
            return i;
    return -1;
}

size_t RunTensorModel::nonFiniteCheckpoints(int series) const {
    return series >= 0 && size_t(series) < m_nonFinite.size() ? m_nonFinite[size_t(series)] : 0;
}

int RunTensorModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

QVariant RunTensorModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid())
        return {};
    const NameTree::Node& n = node(index);
    const TensorSeries* s = seriesAt(n.item);
    const bool marked = m_marked[size_t(index.internalId())];
    switch (role) {
    case Qt::DisplayRole:
    case TensorTreeModel::SortRole:
        if (s && s->occurrence > 0)
            return tr("%1 (#%2 of that name)").arg(n.label).arg(s->occurrence + 1);
        return n.label;
    case Qt::DecorationRole:
        return marked ? QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning)
                      : QVariant();
    case Qt::ToolTipRole: {
        QString tip = n.path;
        if (s && m_run) {
            size_t present = 0;
            for (const auto& at : s->at)
                present += at.has_value();
            tip += QLatin1Char('\n') +
                   tr("in %1 of %2 checkpoints")
                       .arg(QString::fromStdString(fmt::grouped(present)),
                            QString::fromStdString(fmt::grouped(m_run->checkpoints.size())));
            if (const size_t bad = m_nonFinite[size_t(n.item)])
                tip += QLatin1Char('\n') + tr("holds NaN or infinite values in %1 of them")
                                               .arg(QString::fromStdString(fmt::grouped(bad)));
        } else if (marked) {
            tip += QLatin1Char('\n') + tr("a tensor below holds NaN or infinite values");
        }
        return plainToolTip(tip);
    }
    case TensorTreeModel::TensorIndexRole:
        return n.item;
    case TensorTreeModel::FullNameRole:
        return n.path;
    default:
        break;
    }
    return {};
}

QVariant RunTensorModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal && role == Qt::DisplayRole && section == Name)
        return tr("Tensor");
    return {};
}
