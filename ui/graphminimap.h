#pragma once

#include <QGraphicsView>

class GraphView;

// A small overview of the whole graph with the main view's visible area
// framed; clicking or dragging moves the main view there.
class GraphMinimap : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphMinimap(GraphView* main, QWidget* parent = nullptr);
    void refit();

protected:
    void drawForeground(QPainter* painter, const QRectF& rect) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    GraphView* m_main;
};
