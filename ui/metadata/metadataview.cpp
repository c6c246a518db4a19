#include "metadata/metadataview.h"

#include "common/wrapanywheredelegate.h"
#include "metadata/metadatamodel.h"
#include "metadata/metadatatext.h"

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

MetadataView::MetadataView(QWidget* parent) : QTreeView(parent), m_model(new MetadataModel(this)) {
    auto* proxy = new QSortFilterProxyModel(this);
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
    connect(m_copyItems, &QAction::triggered, this,
            [this] { QApplication::clipboard()->setText(selectedArrayItems()); });
    addAction(m_copyItems);
    m_copyItems->setVisible(false);
    setContextMenuPolicy(Qt::ActionsContextMenu);
}

void MetadataView::setDocument(const std::shared_ptr<const ckptscope::Document>& document) {
    // Nothing of an array is read here: its items when it is expanded, its
    // first ones when its tooltip is asked for, all of them when copied.
    m_document = document;
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

QString MetadataView::selectedArrayItems() const {
    QStringList items;
    const auto* proxy = static_cast<const QSortFilterProxyModel*>(model());
    for (const QModelIndex& r : selectionModel()->selectedRows()) {
        const auto array = m_model->arrayAt(proxy->mapToSource(r));
        if (!m_document || !array)
            continue;
        for (const std::string& item : m_document->arrayItems(*array, 0, array->count))
            items << QString::fromStdString(item);
    }
    return items.join(QLatin1Char('\n'));
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
