#include "metadataview.h"

#include "metadatamodel.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDateTime>
#include <QHeaderView>
#include <QSortFilterProxyModel>

namespace {

QString valueText(const ckptscope::MetadataRow& row) {
    const QString value = QString::fromStdString(row.value);
    if (row.kind == ckptscope::MetadataKind::Timestamp) {
        bool ok = false;
        const qint64 secs = value.toLongLong(&ok);
        if (ok) // Unix seconds, shown as a local date too
            return QDateTime::fromSecsSinceEpoch(secs).toString(Qt::ISODate) +
                   QStringLiteral(" (%1)").arg(value);
    }
    return value;
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
            rows.emplace_back(row.key, valueText(row).toStdString());
    m_model->setRows(std::move(rows));
    resizeColumnToContents(MetadataModel::Key);
}

QString MetadataView::selectionText() const {
    QStringList lines;
    const auto rows = selectionModel()->selectedRows();
    for (const QModelIndex& r : rows)
        lines << r.data().toString() + QLatin1Char('\t') +
                     r.siblingAtColumn(MetadataModel::Value).data().toString();
    return lines.join(QLatin1Char('\n'));
}
