#include "run/runcheckpointmodel.h"

#include "common/sizeformat.h"

#include "ckptscope/common/numberformat.h"

#include <QApplication>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QStyle>

#include <limits>

using namespace ckptscope;

RunCheckpointModel::RunCheckpointModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunCheckpointModel::setRun(std::shared_ptr<const Run> run) {
    beginResetModel();
    m_run = std::move(run);
    m_nonFinite.clear();
    if (m_run)
        for (const RunCheckpoint& c : m_run->checkpoints) {
            uint64_t n = 0;
            for (const TensorSummary& t : c.summary.tensors)
                n += (t.stats.nan + t.stats.posInf + t.stats.negInf) > 0;
            m_nonFinite.push_back(n);
        }
    endResetModel();
}

int RunCheckpointModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_run ? 0 : int(m_run->checkpoints.size());
}

int RunCheckpointModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunCheckpointModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_run || index.row() >= rowCount())
        return {};
    const RunCheckpoint& c = m_run->checkpoints[size_t(index.row())];
    if (role == Qt::TextAlignmentRole)
        return index.column() == File || index.column() == Modified
                   ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && index.column() == File)
        return QString::fromStdString(c.path);
    if (role == Qt::ToolTipRole && index.column() == SideFiles) {
        QStringList names;
        for (const std::string& path : c.sideFiles)
            names << QFileInfo(QFile::decodeName(path.c_str())).fileName();
        return names.join(QLatin1Char('\n'));
    }
    if (role == Qt::ToolTipRole && index.column() == Step)
        return tr("step from %1").arg(QString::fromLatin1(stepSourceName(c.stepSource)));
    if (role == Qt::ToolTipRole && index.column() == NonFinite) {
        const uint64_t n = m_nonFinite[size_t(index.row())];
        return n ? tr("%1 holding NaN or Inf")
                       .arg(QString::fromStdString(fmt::counted(n, "tensor", "tensors")))
                 : QVariant();
    }
    if (role == Qt::ToolTipRole) // a cell cut at the view's edge reads whole here
        return data(index, Qt::DisplayRole);
    if (role == Qt::DecorationRole && index.column() == NonFinite &&
        m_nonFinite[size_t(index.row())])
        return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
    if (role == SortRole)
        switch (Column(index.column())) {
        case Step:
            return qulonglong(c.step.value_or(std::numeric_limits<uint64_t>::max()));
        case File:
            return QString::fromStdString(c.name);
        case Size:
            return qulonglong(c.fileSize);
        case Modified:
            return c.mtimeNs ? QVariant(qlonglong(*c.mtimeNs)) : QVariant();
        case NonFinite:
            return qulonglong(m_nonFinite[size_t(index.row())]);
        case SideFiles:
            return qulonglong(c.sideFiles.size());
        case ColumnCount:
            break;
        }
    if (role != Qt::DisplayRole)
        return {};
    switch (Column(index.column())) {
    case Step:
        return c.step ? groupedNumber(*c.step) : missingText();
    case File:
        return QString::fromStdString(c.name);
    case Size:
        return QString::fromStdString(fmt::bytes(c.fileSize));
    case Modified:
        if (!c.mtimeNs) // a URL whose server sent no Last-Modified
            return missingText();
        return QDateTime::fromMSecsSinceEpoch(*c.mtimeNs / 1'000'000, Qt::UTC)
            .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    case NonFinite: {
        const uint64_t n = m_nonFinite[size_t(index.row())];
        return n ? QString::fromStdString(fmt::grouped(n)) : QString(); // tensors, icon beside
    }
    case SideFiles:
        return c.sideFiles.empty() ? QString() : QString::number(c.sideFiles.size());
    case ColumnCount:
        break;
    }
    return {};
}

QVariant RunCheckpointModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (Column(section)) {
    case Step:
        return tr("Step");
    case File:
        return tr("Checkpoint");
    case Size:
        return tr("Size");
    case Modified:
        return tr("Modified (UTC)");
    case NonFinite:
        return tr("NaN/Inf");
    case SideFiles:
        return tr("Side files");
    case ColumnCount:
        break;
    }
    return {};
}
