#pragma once

#include "graph/opfamily.h"

#include <QGraphicsItem>

// One op of the computation graph: a rounded box coloured by op family,
// outlined by state (forward done, backward done, pending). Drops the label
// and outline when zoomed out so panning a 10k-node graph stays smooth.
class GraphNodeItem : public QGraphicsItem {
public:
    enum class State { Pending, ForwardDone, BackwardDone };
    enum class Mark { None, Highlighted, Dimmed };
    // What a comparison found for the node (none outside the compare view):
    // drawn as an outline in `color` of a style of its own, a badge with a
    // glyph (+ added, − removed, ~ changed), a hatch over removed nodes, and
    // unchanged nodes faded — never by colour alone.
    enum class Change { None, Same, Changed, Added, Removed };

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

    void setChange(Change change, const QColor& color);
    Change change() const { return m_change; }

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    static constexpr double kBadge = 15;
    void paintChange(QPainter* painter, const QRectF& box) const;

    int m_index;
    QString m_label;
    OpFamily m_family;
    State m_state;
    QSizeF m_size;
    Mark m_mark = Mark::None;
    bool m_loss = false;
    bool m_problem = false;
    Change m_change = Change::None;
    QColor m_changeColor;
};
