#pragma once

#include <QAbstractTableModel>

#include <cstdint>
#include <vector>

// Bytes as a hex dump: 16 per row plus their ASCII column. Cells are made on
// demand, so a multi-megabyte blob costs nothing until scrolled to.
class HexModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int kBytesPerRow = 16;
    enum { AsciiColumn = kBytesPerRow, ColumnCount };

    explicit HexModel(QObject* parent = nullptr);
    void setBytes(const std::vector<uint8_t>* bytes); // not owned; nullptr clears

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    const std::vector<uint8_t>* m_bytes = nullptr;
};
