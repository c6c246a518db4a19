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
    verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    auto* copy = new QAction(tr("&Copy"), this);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetShortcut);
    connect(copy, &QAction::triggered, this,
            [this] { QApplication::clipboard()->setText(selectionText()); });
    addAction(copy);
    setContextMenuPolicy(Qt::ActionsContextMenu);
}

void MetadataView::setDocument(const std::shared_ptr<const ckptscope::Document>& document) {
    MetadataModel::Rows rows;
    if (document)
        for (const ckptscope::MetadataRow& row : document->metadataRows())
            rows.emplace_back(row.key, metadataValueText(row).toStdString());
    m_model->setRows(std::move(rows));
    resizeColumnToContents(MetadataModel::Key);
}

QString MetadataView::selectionText() const {
    QStringList lines;
    const auto rows = selectionModel()->selectedRows();
    for (const QModelIndex& r : rows)
        lines << tsvField(r.data().toString()) + QLatin1Char('\t') +
                     tsvField(r.siblingAtColumn(MetadataModel::Value).data().toString());
    return lines.join(QLatin1Char('\n'));
}
