#pragma once

#include <QPixmap>
#include <QWidget>

class GraphView;

// A small overview of the whole graph with the main view's visible area
// framed; clicking or dragging moves the main view there. The drawing is
// rendered once into a pixmap (refit), so panning repaints only the frame
// instead of every item of a 100k-node scene.
class GraphMinimap : public QWidget {
    Q_OBJECT
public:
    // Floats over the main view's bottom-right corner and stays there as the
    // view or its viewport resizes (scroll bars come and go, a hidden tab is
    // shown at last).
    explicit GraphMinimap(GraphView* main);
    void refit();
    void place();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    QPointF toScene(QPointF widgetPos) const;
    QRectF toWidget(const QRectF& sceneRect) const;

    GraphView* m_main;
    QPixmap m_pixmap;
    QRectF m_source; // scene area drawn into the pixmap
    QRectF m_target; // where the pixmap sits in the widget
};
