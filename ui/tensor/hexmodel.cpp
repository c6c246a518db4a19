#include "tensor/hexmodel.h"

#include <QFontDatabase>

HexModel::HexModel(QObject* parent) : QAbstractTableModel(parent) {}

void HexModel::setBytes(const std::vector<uint8_t>* bytes) {
    beginResetModel();
    m_bytes = bytes;
    endResetModel();
}

int HexModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !m_bytes)
        return 0;
    return int((m_bytes->size() + kBytesPerRow - 1) / kBytesPerRow);
}

int HexModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant HexModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_bytes)
        return {};
    if (role == Qt::FontRole)
        return QFontDatabase::systemFont(QFontDatabase::FixedFont);
    if (role != Qt::DisplayRole)
        return {};
    const size_t rowStart = size_t(index.row()) * kBytesPerRow;
    if (index.column() == AsciiColumn) {
        QString text;
        for (size_t i = rowStart; i < std::min(rowStart + kBytesPerRow, m_bytes->size()); ++i) {
            const uint8_t b = (*m_bytes)[i];
            text += (b >= 0x20 && b < 0x7f) ? QChar(char16_t(b)) : QChar(u'·');
        }
        return text;
    }
    const size_t at = rowStart + size_t(index.column());
    if (at >= m_bytes->size())
        return {};
    return QStringLiteral("%1").arg((*m_bytes)[at], 2, 16, QLatin1Char('0'));
}

QVariant HexModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole)
        return {};
    if (orientation == Qt::Vertical)
        return QStringLiteral("%1").arg(qulonglong(section) * kBytesPerRow, 8, 16,
                                        QLatin1Char('0'));
    return section == AsciiColumn ? tr("ASCII") : QStringLiteral("%1").arg(section, 1, 16);
}
