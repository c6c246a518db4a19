#include "metadata/metadatamodel.h"

#include "common/backgroundtask.h"
#include "common/plaintext.h"
#include "common/sizeformat.h"

#include <QFutureWatcher>
#include <QScopedValueRollback>
#include <QtConcurrent/QtConcurrentRun>

#include <limits>

using ckptscope::MetadataArray;
using ckptscope::MetadataArrayRun;

namespace {

// An item's type from its array's ("arr[str]" → "str"); "" when unknown.
QString itemType(const QString& arrayType) {
    if (arrayType.startsWith(QLatin1String("arr[")) && arrayType.endsWith(QLatin1Char(']')))
        return arrayType.mid(4, arrayType.size() - 5);
    return {};
}

// A nested array's type from its summary ("[3 × i32]" → "arr[i32]").
QString nestedType(const QString& summary) {
    const qsizetype times = summary.lastIndexOf(QStringLiteral("× "));
    if (times < 0 || !summary.endsWith(QLatin1Char(']')))
        return QStringLiteral("arr");
    return QStringLiteral("arr[") + summary.mid(times + 2, summary.size() - times - 3) +
           QLatin1Char(']');
}

} // namespace

MetadataModel::MetadataModel(QObject* parent) : QAbstractItemModel(parent) {}

void MetadataModel::setRows(Rows rows, std::vector<std::string> types,
                            std::vector<std::optional<MetadataArray>> arrays, ArrayReader reader) {
    const QScopedValueRollback changing(m_changing, true);
    beginResetModel();
    ++m_generation;
    m_nodes.clear();
    m_top.clear();
    m_reader = std::move(reader);
    m_hasTypes = m_hasArrays = false;
    m_nodes.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        Node n;
        n.row = int(i);
        n.key = QString::fromStdString(rows[i].first);
        n.value = QString::fromStdString(rows[i].second);
        if (i < types.size())
            n.type = QString::fromStdString(types[i]);
        if (i < arrays.size() && arrays[i] && m_reader) {
            n.array = n.rest = *arrays[i];
            m_hasArrays = true;
        }
        m_hasTypes = m_hasTypes || !n.type.isEmpty();
        m_top.push_back(addNode(std::move(n)));
    }
    endResetModel();
}

int MetadataModel::addNode(Node n) {
    m_nodes.push_back(std::move(n));
    return int(m_nodes.size() - 1);
}

int MetadataModel::nodeId(const QModelIndex& index) const {
    return index.isValid() ? int(index.internalId()) : -1;
}

const std::vector<int>& MetadataModel::childrenOf(int id) const {
    return id < 0 ? m_top : m_nodes[size_t(id)].children;
}

int MetadataModel::moreRowOf(int id) const {
    const std::vector<int>& c = childrenOf(id);
    return !c.empty() && m_nodes[size_t(c.back())].more ? c.back() : -1;
}

std::optional<MetadataArray> MetadataModel::arrayAt(const QModelIndex& index) const {
    const int id = nodeId(index);
    return id < 0 ? std::nullopt : m_nodes[size_t(id)].array;
}

QModelIndex MetadataModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= ColumnCount || (parent.isValid() && parent.column()))
        return {};
    const std::vector<int>& c = childrenOf(nodeId(parent));
    if (size_t(row) >= c.size())
        return {};
    return createIndex(row, column, quintptr(c[size_t(row)]));
}

QModelIndex MetadataModel::parent(const QModelIndex& child) const {
    const int id = nodeId(child);
    if (id < 0 || m_nodes[size_t(id)].parent < 0)
        return {};
    const int p = m_nodes[size_t(id)].parent;
    return createIndex(m_nodes[size_t(p)].row, 0, quintptr(p));
}

int MetadataModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() && parent.column() != 0)
        return 0;
    return int(childrenOf(nodeId(parent)).size());
}

int MetadataModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

bool MetadataModel::hasChildren(const QModelIndex& parent) const {
    if (!parent.isValid())
        return !m_top.empty();
    if (parent.column() != 0)
        return false;
    const Node& n = m_nodes[size_t(nodeId(parent))];
    return !n.children.empty() || (n.array && n.array->count > 0);
}

bool MetadataModel::hasUnread(const QModelIndex& parent) const {
    if (!parent.isValid() || parent.column() != 0)
        return false;
    const Node& n = m_nodes[size_t(nodeId(parent))];
    return n.array && n.rest.count > 0;
}

bool MetadataModel::canFetchMore(const QModelIndex& parent) const {
    return hasUnread(parent) && m_nodes[size_t(nodeId(parent))].children.empty();
}

void MetadataModel::fetchMore(const QModelIndex& parent) {
    if (canFetchMore(parent))
        fetchNext(parent);
}

void MetadataModel::readItems(const MetadataArray& array, uint64_t count, ReadDone done) const {
    using Result = std::pair<MetadataArrayRun, QString>;
    auto* watcher = new QFutureWatcher<Result>(const_cast<MetadataModel*>(this));
    ++m_pending;
    connect(watcher, &QFutureWatcherBase::finished, this,
            [this, watcher, generation = m_generation, done = std::move(done)] {
                watcher->deleteLater();
                --m_pending;
                if (generation == m_generation) // else the rows it was for are gone
                    done(watcher->result().first, watcher->result().second);
            });
    // The reader holds the document: the read outlives nothing it needs.
    watcher->setFuture(
        QtConcurrent::run(BackgroundTask::pool(), [reader = m_reader, array, count]() -> Result {
            try {
                return {reader(array, count), QString()};
            } catch (const std::exception& e) {
                return {MetadataArrayRun{}, QString::fromUtf8(e.what())};
            }
        }));
}

void MetadataModel::fetchNext(const QModelIndex& parent) {
    if (m_changing || !hasUnread(parent))
        return;
    const int id = nodeId(parent);
    Node& node = m_nodes[size_t(id)];
    if (node.reading)
        return;
    node.reading = true;
    if (const int more = moreRowOf(id); more >= 0) // "reading…"
        Q_EMIT dataChanged(index(m_nodes[size_t(more)].row, 0, parent),
                           index(m_nodes[size_t(more)].row, ColumnCount - 1, parent));
    readItems(node.rest, std::min(kChunk, node.rest.count),
              [this, id](const MetadataArrayRun& run, const QString& error) {
                  addItems(id, run, error);
              });
}

void MetadataModel::addItems(int id, const MetadataArrayRun& run, const QString& error) {
    const QScopedValueRollback changing(m_changing, true);
    m_nodes[size_t(id)].reading = false;
    const QModelIndex parent = createIndex(m_nodes[size_t(id)].row, 0, quintptr(id));
    if (!error.isEmpty()) {
        m_nodes[size_t(id)].rest.count = 0; // stop asking
        Q_EMIT readFailed(error);
    }
    if (run.items.empty())
        m_nodes[size_t(id)].rest.count = 0; // nothing more to be had
    const int more = moreRowOf(id);
    const int first = int(m_nodes[size_t(id)].children.size()) - (more >= 0 ? 1 : 0);
    if (!run.items.empty()) {
        const QString type = itemType(m_nodes[size_t(id)].type);
        beginInsertRows(parent, first, first + int(run.items.size()) - 1);
        std::vector<int> added;
        for (size_t i = 0; i < run.items.size(); ++i) {
            Node n;
            n.parent = id;
            n.row = first + int(i);
            n.key = QStringLiteral("[%1]").arg(first + qsizetype(i));
            n.value = QString::fromStdString(run.items[i]);
            n.type = type;
            if (i < run.nested.size() && run.nested[i]) {
                n.array = n.rest = *run.nested[i];
                n.type = nestedType(n.value);
            }
            added.push_back(addNode(std::move(n)));
        }
        std::vector<int>& c = m_nodes[size_t(id)].children;
        c.insert(c.begin() + first, added.begin(), added.end());
        m_nodes[size_t(id)].rest = run.rest;
        if (more >= 0)
            m_nodes[size_t(more)].row = int(c.size()) - 1;
        endInsertRows();
    }
    const int rows = int(m_nodes[size_t(id)].children.size());
    if (m_nodes[size_t(id)].rest.count > 0 && more < 0) {
        beginInsertRows(parent, rows, rows);
        Node n;
        n.parent = id;
        n.row = rows;
        n.more = true;
        const int added = addNode(std::move(n));
        m_nodes[size_t(id)].children.push_back(added);
        endInsertRows();
    } else if (m_nodes[size_t(id)].rest.count > 0) {
        Q_EMIT dataChanged(index(rows - 1, 0, parent), index(rows - 1, ColumnCount - 1, parent));
    } else if (more >= 0) {
        beginRemoveRows(parent, rows - 1, rows - 1);
        m_nodes[size_t(id)].children.pop_back();
        endRemoveRows();
    }
}

QString MetadataModel::previewOf(const Node& n) const {
    if (n.preview)
        return *n.preview;
    if (!n.previewAsked) {
        n.previewAsked = true;
        const int id = int(&n - m_nodes.data());
        readItems(
            *n.array, kPreviewItems, [this, id](const MetadataArrayRun& run, const QString& error) {
                const Node& node = m_nodes[size_t(id)];
                QString text = error;
                for (const std::string& item : run.items)
                    text += QString::fromStdString(item) + QLatin1Char('\n');
                if (error.isEmpty() && node.array->count > run.items.size())
                    text += tr("… %1 more (expand the row, or Copy Array Items copies "
                               "them all)")
                                .arg(node.array->count - run.items.size());
                node.preview = text;
                const QModelIndex cell = createIndex(node.row, Value, quintptr(id));
                Q_EMIT const_cast<MetadataModel*>(this)->dataChanged(cell, cell, {Qt::ToolTipRole});
            });
    }
    return tr("Reading the first items…");
}

QVariant MetadataModel::data(const QModelIndex& index, int role) const {
    const int id = nodeId(index);
    if (id < 0)
        return {};
    const Node& n = m_nodes[size_t(id)];
    if (role == MoreRole)
        return n.more;
    if (n.more) {
        const uint64_t left = m_nodes[size_t(n.parent)].rest.count;
        if (role == SortRole)
            return std::numeric_limits<double>::infinity();
        if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
            return {};
        if (index.column() == Key)
            return QStringLiteral("…");
        if (index.column() == Value)
            return m_nodes[size_t(n.parent)].reading
                       ? tr("reading the next %1 items…").arg(std::min(left, kChunk))
                       : tr("%1 more items (double-click to read the next %2)")
                             .arg(groupedNumber(left))
                             .arg(std::min(left, kChunk));
        return {};
    }
    const QString& text = index.column() == Key     ? n.key
                          : index.column() == Value ? n.value
                                                    : n.type;
    if (role == SortRole)
        return n.parent >= 0 && index.column() == Key ? QVariant(double(n.row)) : QVariant(text);
    if (role == Qt::DisplayRole)
        return index.column() == Type  ? text
               : index.column() == Key ? shownText(text)
                                       : shownLines(text);
    if (role == Qt::EditRole)
        return text;
    if (role == Qt::ToolTipRole && index.column() == Value && n.array && n.array->count > 0)
        return plainToolTip(previewOf(n));
    if (role == Qt::ToolTipRole)
        return plainToolTip(shownLines(text));
    return {};
}

QVariant MetadataModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return section == Key ? tr("Key") : section == Value ? tr("Value") : tr("Type");
}
