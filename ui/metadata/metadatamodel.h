#pragma once

#include <QAbstractTableModel>

#include <string>
#include <utility>
#include <vector>

// Key/value rows of a document's metadata; values keep their newlines.
class MetadataModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Key, Value, Type, ColumnCount };
    using Rows = std::vector<std::pair<std::string, std::string>>;

    explicit MetadataModel(QObject* parent = nullptr);
    // `types`: each row's type as its format names it ("u32", "arr[str]"),
    // or none (formats without typed metadata).
    // `previews`: a longer tooltip for a row's value (an array's first items).
    void setRows(Rows rows, std::vector<std::string> types = {},
                 std::vector<std::string> previews = {});
    bool hasTypes() const { return m_hasTypes; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<std::pair<QString, QString>> m_rows;
    std::vector<QString> m_types, m_previews;
    bool m_hasTypes = false;
};
