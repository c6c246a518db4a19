#pragma once

#include "graph/graphindex.h"

#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include <QAbstractTableModel>

#include <memory>

// Nodes of a computation graph in topological order, followed by the nodes
// on cycles (which have no place in that order, flagged as such).
class NodeTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Position, Op, Id, State, ColumnCount };
    enum Role { NodeIndexRole = Qt::UserRole + 1 };

    explicit NodeTableModel(QObject* parent = nullptr);
    void setGraph(std::shared_ptr<const ckptscope::GradientCheckpoint> checkpoint,
                  std::shared_ptr<const GraphIndex> index);
    int rowOfNode(int node) const;
    // The row whose text in `column` is longest (in bytes; ties: the later
    // row), -1 when empty: what a column must be wide enough for.
    int longestRow(int column) const;
    // Node index per row: topological order, then the nodes on cycles
    // (counted in *ordered and after). -1 for an id the index lacks.
    static std::vector<int> listOrder(const ckptscope::ComputationGraphStore& graph,
                                      const GraphIndex& index, size_t* ordered = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    const ckptscope::ComputationNode* nodeAt(int node) const;

    std::shared_ptr<const ckptscope::GradientCheckpoint> m_checkpoint;
    std::shared_ptr<const GraphIndex> m_index;
    std::vector<int> m_rows; // node index per row
    std::vector<int> m_rowOf;
    size_t m_ordered = 0; // rows before this are in topological order
};
