#include "nodelist.h"

#include "nodetablemodel.h"

#include <QHeaderView>

NodeList::NodeList(QWidget* parent) : QTableView(parent), m_model(new NodeTableModel(this)) {
    setModel(m_model);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::SingleSelection);
    verticalHeader()->hide();
    verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    horizontalHeader()->setStretchLastSection(true);
    connect(selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (!m_syncing && current.isValid())
                    Q_EMIT nodeChosen(current.data(NodeTableModel::NodeIndexRole).toInt());
            });
}

void NodeList::setGraph(std::shared_ptr<const ckptscope::GradientCheckpoint> checkpoint,
                        std::shared_ptr<const GraphIndex> index) {
    m_model->setGraph(std::move(checkpoint), std::move(index));
    resizeColumnsToContents();
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
