#include "graph/nodelist.h"

#include "common/sizeformat.h"
#include "graph/nodetablemodel.h"
#include "widgets/rowheight.h"

#include <QHeaderView>
#include <QPainter>

#include <algorithm>

NodeList::NodeList(QWidget* parent) : QTableView(parent), m_model(new NodeTableModel(this)) {
    setModel(m_model);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::SingleSelection);
    verticalHeader()->hide();
    verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    rowheight::followFont(this, 6);
    horizontalHeader()->setStretchLastSection(true);
    connect(selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (!m_syncing && current.isValid())
                    Q_EMIT nodeChosen(current.data(NodeTableModel::NodeIndexRole).toInt());
            });
}

void NodeList::setGraph(std::shared_ptr<const ckptscope::GradientCheckpoint> checkpoint,
                        std::shared_ptr<const GraphIndex> index) {
    m_placeholder =
        checkpoint && !index
            ? tr("Indexing %1 nodes…").arg(groupedNumber(uint64_t(checkpoint->graph.nodeCount())))
            : QString();
    viewport()->update();
    m_model->setGraph(std::move(checkpoint), std::move(index));
    resizeColumnsToContents();
    // That measured the first thousand rows only, so a larger position or a
    // longer id further down would show cut short ("12..."). Measure each
    // column's longest text as well (the last one is stretched anyway).
    for (int c = 0; c < NodeTableModel::ColumnCount - 1; ++c)
        if (const int longest = m_model->longestRow(c); longest >= 0)
            setColumnWidth(
                c, std::max(columnWidth(c), sizeHintForIndex(m_model->index(longest, c)).width()));
}

void NodeList::showNode(int node) {
    const int row = m_model->rowOfNode(node);
    if (row < 0 || currentIndex().row() == row)
        return;
    const QModelIndex idx = m_model->index(row, 0);
    m_syncing = true;
    setCurrentIndex(idx);
    m_syncing = false;
    scrollTo(idx);
}

void NodeList::paintEvent(QPaintEvent* event) {
    QTableView::paintEvent(event);
    if (m_placeholder.isEmpty() || m_model->rowCount() > 0)
        return;
    QPainter painter(viewport());
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(viewport()->rect().adjusted(8, 8, -8, -8),
                     Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap, m_placeholder);
}
