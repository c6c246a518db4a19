#pragma once

#include <QAbstractTableModel>

#include <string>
#include <utility>
#include <vector>

// Key/value rows of a document's metadata; values keep their newlines.
class MetadataModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Key, Value, ColumnCount };
    using Rows = std::vector<std::pair<std::string, std::string>>;

    explicit MetadataModel(QObject* parent = nullptr);
    void setRows(Rows rows);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<std::pair<QString, QString>> m_rows;
};
