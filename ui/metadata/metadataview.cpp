#include "metadata/metadataview.h"

#include "metadata/metadatamodel.h"
#include "metadata/metadatatext.h"
#include "metadata/objecttable.h"
#include "metadata/objecttreemodel.h"
#include "widgets/wrapanywheredelegate.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QSortFilterProxyModel>
#include <algorithm>

namespace {

// Spreadsheets read a pasted field holding a tab, a line break or a quote
// as one cell only when it is quoted, with inner quotes doubled.
QString tsvField(const QString& text) {
    static const QString kSpecial = QStringLiteral("\t\n\r\"");
    if (std::none_of(text.begin(), text.end(), [](QChar c) { return kSpecial.contains(c); }))
        return text;
    return QLatin1Char('"') + QString(text).replace(QLatin1Char('"'), QStringLiteral("\"\"")) +
           QLatin1Char('"');
}

} // namespace

MetadataView::MetadataView(QWidget* parent)
    : QTreeView(parent), m_model(new MetadataModel(this)), m_objects(new ObjectTreeModel(this)),
      m_proxy(new QSortFilterProxyModel(this)) {
    QSortFilterProxyModel* proxy = m_proxy;
    proxy->setSourceModel(m_model);
    proxy->setSortRole(MetadataModel::SortRole); // items stay in index order
    setModel(proxy);
    setSortingEnabled(true);
    sortByColumn(-1, Qt::AscendingOrder);
    setWordWrap(true);
    // A value with no spaces (a hash, a long token) wraps anywhere rather
    // than ending in "…": shown whole, in a row as tall as it needs.
    setItemDelegateForColumn(MetadataModel::Value, new WrapAnywhereDelegate(this));
    // Rows take their heights anew when the value column's width changes.
    connect(header(), &QHeaderView::sectionResized, this, [this](int column) {
        if (column == MetadataModel::Value && isVisible())
            scheduleDelayedItemsLayout();
    });
    setAlternatingRowColors(true);
    header()->setStretchLastSection(true);
    // Key, Type, Value on screen: the value, widest, takes the rest.
    header()->moveSection(MetadataModel::Type, MetadataModel::Value);
    // "… N more" reads the next items of its array.
    connect(this, &QAbstractItemView::activated, this, [this, proxy](const QModelIndex& index) {
        if (model() == m_objects) { // a link row: to the place its object is drawn
            const QString link = index.data(ObjectTreeModel::LinkRole).toString();
            const QModelIndex first = link.isEmpty() ? QModelIndex() : m_objects->indexOfPath(link);
            if (first.isValid()) {
                scrollTo(first);
                setCurrentIndex(first);
            }
            return;
        }
        if (index.data(MetadataModel::MoreRole).toBool())
            m_model->fetchNext(proxy->mapToSource(index.parent()));
    });
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    auto* copy = new QAction(tr("&Copy"), this);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetShortcut);
    connect(copy, &QAction::triggered, this,
            [this] { QApplication::clipboard()->setText(selectionText()); });
    addAction(copy);
    m_copyItems = new QAction(tr("Copy Array &Items"), this);
    m_copyItems->setToolTip(tr("Every item of the selected arrays, one per line"));
    connect(m_copyItems, &QAction::triggered, this, &MetadataView::copySelectedArrayItems);
    addAction(m_copyItems);
    m_copyItems->setVisible(false);
    m_copyPath = new QAction(tr("Copy &Path"), this);
    m_copyPath->setToolTip(tr("The keys from the root to the selected values, joined by '.'"));
    connect(m_copyPath, &QAction::triggered, this,
            [this] { QApplication::clipboard()->setText(selectedPaths()); });
    m_copyJson = new QAction(tr("Copy as &JSON"), this);
    connect(m_copyJson, &QAction::triggered, this,
            [this] { QApplication::clipboard()->setText(selectedJson()); });
    m_showTable = new QAction(tr("Show as &Table"), this);
    m_showTable->setToolTip(tr("A list of dicts (param_groups…) as one table"));
    connect(m_showTable, &QAction::triggered, this,
            [this] { objecttable::show(this, m_objects, currentIndex()); });
    for (QAction* a : {m_copyPath, m_copyJson, m_showTable}) {
        addAction(a);
        a->setVisible(false);
    }
    setContextMenuPolicy(Qt::ActionsContextMenu);
}

void MetadataView::updateTreeActions() {
    const bool tree = model() == m_objects;
    m_copyPath->setVisible(tree);
    m_copyJson->setVisible(tree);
    m_showTable->setVisible(tree && objecttable::applies(m_objects, currentIndex()));
}

QString MetadataView::selectedPaths() const {
    QStringList paths;
    for (const QModelIndex& r : selectionModel()->selectedRows())
        paths << r.data(ObjectTreeModel::PathRole).toString();
    return paths.join(QLatin1Char('\n'));
}

QString MetadataView::selectedJson() const {
    QStringList values;
    for (const QModelIndex& r : selectionModel()->selectedRows())
        values << r.data(ObjectTreeModel::JsonRole).toString();
    return values.join(QLatin1Char('\n'));
}

void MetadataView::setDocument(const std::shared_ptr<const ckptscope::Document>& document) {
    // Nothing of an array is read here: its items when it is expanded, its
    // first ones when its tooltip is asked for, all of them when copied.
    m_document = document;
    if (document && !document->objects().empty()) {
        // The tree keeps the document (and so its ObjectTree) alive.
        std::vector<std::string> names;
        for (const ckptscope::TensorEntry& t : document->tensors())
            names.push_back(t.name);
        m_objects->setTree(
            std::shared_ptr<const ckptscope::ObjectTree>(document, &document->objects()),
            std::move(names));
        setSortingEnabled(false); // the file's order
        setModel(m_objects);
        setColumnHidden(ObjectTreeModel::Type, false);
        setRootIsDecorated(true);
        m_copyItems->setVisible(false);
        connect(selectionModel(), &QItemSelectionModel::currentChanged, this,
                &MetadataView::updateTreeActions, Qt::UniqueConnection);
        updateTreeActions();
        // One row at the top (a pickled object's state: a Trainer's
        // TrainingArguments): its fields shown at once, as a table.
        if (m_objects->rowCount() == 1 && m_objects->hasChildren(m_objects->index(0, 0)))
            expand(m_objects->index(0, 0));
        resizeColumnToContents(ObjectTreeModel::Key);
        return;
    }
    m_objects->setTree(nullptr, {});
    if (model() != m_proxy) {
        setModel(m_proxy);
        setSortingEnabled(true);
        sortByColumn(-1, Qt::AscendingOrder);
    }
    updateTreeActions();
    MetadataModel::Rows rows;
    std::vector<std::string> types;
    std::vector<std::optional<ckptscope::MetadataArray>> arrays;
    if (document)
        for (const ckptscope::MetadataRow& row : document->metadataRows()) {
            rows.emplace_back(row.key, metadataValueText(row).toStdString());
            types.push_back(row.type);
            arrays.push_back(row.array);
        }
    MetadataModel::ArrayReader reader;
    if (document) // the model lives no longer than the document it reads
        reader = [document](const ckptscope::MetadataArray& a, uint64_t count) {
            return document->arrayRun(a, count);
        };
    m_model->setRows(std::move(rows), std::move(types), std::move(arrays), std::move(reader));
    setColumnHidden(MetadataModel::Type, !m_model->hasTypes());
    setRootIsDecorated(m_model->hasArrays());
    m_copyItems->setVisible(m_model->hasArrays());
    resizeColumnToContents(MetadataModel::Key);
}

void MetadataView::copySelectedArrayItems() {
    std::vector<ckptscope::MetadataArray> arrays;
    if (model() != m_proxy)
        return;
    for (const QModelIndex& r : selectionModel()->selectedRows())
        if (const auto array = m_model->arrayAt(m_proxy->mapToSource(r)))
            arrays.push_back(*array);
    if (!m_document || arrays.empty())
        return;
    m_copying.start(
        [document = m_document, arrays](BackgroundTask::Run& run) {
            QStringList items;
            for (const ckptscope::MetadataArray& array : arrays) {
                if (run.cancelled())
                    break;
                for (const std::string& item : document->arrayItems(array, 0, array.count))
                    items << QString::fromStdString(item);
            }
            return items.join(QLatin1Char('\n'));
        },
        [this](const QString& text) {
            QApplication::clipboard()->setText(text);
            Q_EMIT arrayItemsCopied(text);
        },
        {{}, [this](const QString& message) { Q_EMIT copyFailed(message); }});
}

QString MetadataView::selectionText() const {
    QStringList lines;
    const auto rows = selectionModel()->selectedRows();
    for (const QModelIndex& r : rows)
        // The text as stored (the cells show it made printable).
        lines << tsvField(r.data(Qt::EditRole).toString()) + QLatin1Char('\t') +
                     tsvField(
                         r.siblingAtColumn(MetadataModel::Value).data(Qt::EditRole).toString());
    return lines.join(QLatin1Char('\n'));
}
