#pragma once

#include "ckptscope/formats/formatindex.h"

#include <QAbstractItemModel>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// Key/value rows of a document's metadata; values keep their newlines. An
// array row (a GGUF vocabulary) expands to its items, read from the file
// only when it is expanded: its first kChunk (canFetchMore/fetchMore), then
// a "… N more" row that reads the next kChunk when activated (fetchNext) —
// never more because a view lays itself out again. Nested arrays expand the
// same way. Items (and an array's tooltip preview) are read off the GUI
// thread: rows arrive when the read is done, so a slow server never
// freezes the window.
class MetadataModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Key, Value, Type, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole + 1, // keys as text; items by their index; "more" rows last
        MoreRole,                    // bool: the "… N more" row of an array
    };
    using Rows = std::vector<std::pair<std::string, std::string>>;
    // Reads the first `count` items of an array (Document::arrayRun).
    using ArrayReader = std::function<ckptscope::MetadataArrayRun(
        const ckptscope::MetadataArray& array, uint64_t count)>;
    static constexpr uint64_t kChunk = 1000;      // items read per expansion or "more"
    static constexpr uint64_t kPreviewItems = 20; // in an array's tooltip

    explicit MetadataModel(QObject* parent = nullptr);
    // `types`: each row's type as its format names it ("u32", "arr[str]"),
    // or none (formats without typed metadata). `arrays`: per row, the array
    // it holds, its items read through `reader` when asked.
    void setRows(Rows rows, std::vector<std::string> types = {},
                 std::vector<std::optional<ckptscope::MetadataArray>> arrays = {},
                 ArrayReader reader = {});
    bool hasTypes() const { return m_hasTypes; }
    bool hasArrays() const { return m_hasArrays; }
    // The whole array an index's row holds (top-level or nested), if any.
    std::optional<ckptscope::MetadataArray> arrayAt(const QModelIndex& index) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    bool hasChildren(const QModelIndex& parent = {}) const override;
    // True for an array none of whose items has been read.
    bool canFetchMore(const QModelIndex& parent) const override;
    void fetchMore(const QModelIndex& parent) override;
    // Reads the next kChunk items of the array at `parent` (the "more" row).
    void fetchNext(const QModelIndex& parent);
    bool hasUnread(const QModelIndex& parent) const;
    // Reads under way (tests wait for 0).
    int pendingReads() const { return m_pending; }
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    // Reading an array's items failed (the file changed on disk).
    void readFailed(const QString& message) const;

private:
    struct Node {
        int parent = -1; // node id; -1 for a top-level row
        int row = 0;     // in its parent
        QString key, value, type;
        std::optional<ckptscope::MetadataArray> array; // the whole array
        ckptscope::MetadataArray rest;                 // its items not read yet
        std::vector<int> children;                     // items read (node ids)
        bool more = false;                             // the "… N more" row
        bool reading = false;                          // its next items are being read
        mutable std::optional<QString> preview;        // tooltip, read when asked
        mutable bool previewAsked = false;
    };
    using ReadDone = std::function<void(const ckptscope::MetadataArrayRun&, const QString& error)>;
    // Reads `count` items from `array` off the GUI thread; `done` runs on it
    // unless the rows were reset meanwhile.
    void readItems(const ckptscope::MetadataArray& array, uint64_t count, ReadDone done) const;
    void addItems(int id, const ckptscope::MetadataArrayRun& run, const QString& error);
    int nodeId(const QModelIndex& index) const;
    const std::vector<int>& childrenOf(int id) const;
    int moreRowOf(int id) const; // the node id of id's "more" row, or -1
    QString previewOf(const Node& n) const;
    int addNode(Node n);

    std::vector<Node> m_nodes;
    std::vector<int> m_top;
    ArrayReader m_reader;
    bool m_hasTypes = false;
    bool m_hasArrays = false;
    int m_generation = 0; // setRows count: a read of older rows is dropped
    mutable int m_pending = 0;
    // Inside a change's signals: a view or tester asking to fetchMore then
    // would nest a change in it; it is asked again once the change is done.
    bool m_changing = false;
};
