#include "runtensormodel.h"

using namespace ckptscope;

RunTensorModel::RunTensorModel(QObject* parent) : QAbstractListModel(parent) {}

void RunTensorModel::setSeries(std::shared_ptr<const std::vector<TensorSeries>> series) {
    beginResetModel();
    m_series = std::move(series);
    endResetModel();
}

const TensorSeries* RunTensorModel::seriesAt(int row) const {
    return m_series && row >= 0 && size_t(row) < m_series->size() ? &(*m_series)[size_t(row)]
                                                                  : nullptr;
}

int RunTensorModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_series ? 0 : int(m_series->size());
}

QVariant RunTensorModel::data(const QModelIndex& index, int role) const {
    const TensorSeries* s = index.isValid() ? seriesAt(index.row()) : nullptr;
    if (!s || (role != Qt::DisplayRole && role != Qt::ToolTipRole))
        return {};
    QString name = QString::fromStdString(s->name);
    if (s->occurrence > 0)
        name += tr(" (#%1 of that name)").arg(s->occurrence + 1);
    return name;
}
