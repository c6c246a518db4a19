#pragma once

#include "opfamily.h"

#include <QGraphicsItem>

// One op of the computation graph: a rounded box coloured by op family,
// outlined by state (forward done, backward done, pending). Drops the label
// and outline when zoomed out so panning a 10k-node graph stays smooth.
class GraphNodeItem : public QGraphicsItem {
public:
    enum class State { Pending, ForwardDone, BackwardDone };
    enum class Mark { None, Highlighted, Dimmed };

    GraphNodeItem(int index, const QString& label, OpFamily family, State state, QSizeF size);

    int index() const { return m_index; }
    void setMark(Mark mark);
    Mark mark() const { return m_mark; }
    void setLoss(bool loss) {
        m_loss = loss;
        update();
    }
    void setProblem(bool problem) {
        m_problem = problem;
        update();
    } // on a cycle / dangling edge

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    int m_index;
    QString m_label;
    OpFamily m_family;
    State m_state;
    QSizeF m_size;
    Mark m_mark = Mark::None;
    bool m_loss = false;
    bool m_problem = false;
};
