#include "metadata/metadataview.h"

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

MetadataView::MetadataView(QWidget* parent) : QTableView(parent), m_model(new MetadataModel(this)) {
    auto* proxy = new QSortFilterProxyModel(this);
    proxy->setSourceModel(m_model);
    setModel(proxy);
    setSortingEnabled(true);
    sortByColumn(-1, Qt::AscendingOrder);
    setWordWrap(true);
    horizontalHeader()->setStretchLastSection(true);
    // Key, Type, Value on screen: the value, widest, takes the rest.
    horizontalHeader()->moveSection(MetadataModel::Type, MetadataModel::Value);
    verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
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
    // Arrays show their first items as the value's tooltip; the rest stay
    // in the file until copied.
    constexpr uint64_t kPreviewItems = 20;
    m_document = document;
    m_arrays.clear();
    MetadataModel::Rows rows;
    std::vector<std::string> types, previews;
    if (document)
        for (const ckptscope::MetadataRow& row : document->metadataRows()) {
            rows.emplace_back(row.key, metadataValueText(row).toStdString());
            types.push_back(row.type);
            m_arrays.push_back(row.array);
            std::string preview;
            if (row.array) {
                const auto items = document->arrayItems(*row.array, 0, kPreviewItems);
                for (const std::string& item : items)
                    preview += item + "\n";
                if (row.array->count > items.size())
                    preview += "… " + std::to_string(row.array->count - items.size()) +
                               " more (Copy Array Items copies them all)";
            }
            previews.push_back(std::move(preview));
        }
    m_model->setRows(std::move(rows), std::move(types), std::move(previews));
    setColumnHidden(MetadataModel::Type, !m_model->hasTypes());
    m_copyItems->setVisible(
        std::any_of(m_arrays.begin(), m_arrays.end(), [](const auto& a) { return a.has_value(); }));
    resizeColumnToContents(MetadataModel::Key);
}

QString MetadataView::selectedArrayItems() const {
    QStringList items;
    const auto* proxy = static_cast<const QSortFilterProxyModel*>(model());
    for (const QModelIndex& r : selectionModel()->selectedRows()) {
        const size_t row = size_t(proxy->mapToSource(r).row());
        if (!m_document || row >= m_arrays.size() || !m_arrays[row])
            continue;
        for (const std::string& item :
             m_document->arrayItems(*m_arrays[row], 0, m_arrays[row]->count))
            items << QString::fromStdString(item);
    }
    return items.join(QLatin1Char('\n'));
}

QString MetadataView::selectionText() const {
    QStringList lines;
    const auto rows = selectionModel()->selectedRows();
    for (const QModelIndex& r : rows)
        lines << tsvField(r.data().toString()) + QLatin1Char('\t') +
                     tsvField(r.siblingAtColumn(MetadataModel::Value).data().toString());
    return lines.join(QLatin1Char('\n'));
}
