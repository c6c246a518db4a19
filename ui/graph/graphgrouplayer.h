#pragma once

#include "graph/opfamily.h"

#include <QGraphicsItem>

#include <functional>
#include <vector>

// The groups of a collapsed graph, under the node canvas: a collapsed group
// is one box (its label and node count), an expanded one a frame with a
// title strip around its nodes (drawn by the canvas), and edges that end at
// a collapsed group are bundles, one line per pair of drawn ends, wider and
// labelled with the number of edges they stand for. A few hundred boxes and
// a few thousand lines: drawn without an index.
class GraphGroupLayer : public QGraphicsItem {
public:
    enum class Mark : uint8_t { None, Highlighted, Dimmed };
    struct Group {
        QRectF box;   // scene coordinates
        QRectF title; // an expanded frame's title strip (within box)
        QString label;
        QString toolTip;
        OpFamily family = OpFamily::Other;
        bool expanded = false;
    };
    struct Bundle {
        QPolygonF route;
        uint32_t count = 1;
        int fromNode = -1, toNode = -1; // the drawn ends: a node, or -1 for the group
        uint32_t fromGroup = 0, toGroup = 0;
    };
    // activated: a group was double-clicked.
    GraphGroupLayer(std::vector<Group> groups, std::vector<Bundle> bundles,
                    std::function<void(int)> activated);

    int groupCount() const { return int(m_groups.size()); }
    const Group& group(int g) const { return m_groups[size_t(g)]; }
    int bundleCount() const { return int(m_bundles.size()); }
    const Bundle& bundle(int b) const { return m_bundles[size_t(b)]; }
    // The group whose box (collapsed) or title strip (expanded) is under a
    // scene point, -1 for none; frames let presses through to pan.
    int groupAt(QPointF pos) const;
    // The innermost group whose box or frame contains the point.
    int groupContaining(QPointF pos) const;
    // Per group and per bundle; empty vectors clear the marks.
    void setMarks(std::vector<Mark> groups, std::vector<Mark> bundles);
    Mark groupMark(int g) const;

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;
    void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) override;

private:
    void paintBundles(QPainter* painter, const QRectF& exposed, double lod) const;
    void paintGroup(QPainter* painter, int g, double lod) const;

    std::vector<Group> m_groups;
    std::vector<Bundle> m_bundles;
    std::function<void(int)> m_activated;
    std::vector<Mark> m_groupMarks, m_bundleMarks;
    QRectF m_bounds;
};
