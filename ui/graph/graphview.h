#pragma once

#include <QGraphicsView>
#include <QPointer>

// Zoom with the wheel (anchored under the cursor), pan by dragging, fit to
// the window. Emits the visible area so the minimap can follow.
class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphView(QWidget* parent = nullptr);

    void zoomBy(double factor);
    // The whole drawing in the window, however large (never above 1:1).
    void fitAll();
    // What a user wants on opening: the whole graph if it is readable at
    // that size, else full size at the top, where the inputs are.
    void showInitial();
    // Centres a node's box (scene coordinates) in the part of the view no
    // overlay covers, scrolling past the drawing's edge when needed (a node at
    // the bottom of the graph). An empty box is ignored.
    void centerOnRect(const QRectF& box);
    // Shows the box's centre at `at` (viewport pixels) at this zoom: a view
    // put back after the drawing was rebuilt.
    void placeRect(const QRectF& box, QPointF at, double zoom);
    double zoom() const { return transform().m11(); }
    // The zoom at which the whole drawing fits the window.
    double fitZoom() const;

    // A widget floating over the view (the minimap): targets are placed
    // beside it, not under it.
    void setOverlay(QWidget* overlay) { m_overlay = overlay; }
    // Where centerOnRect puts the centre of an item of `itemSize` pixels, in
    // viewport coordinates.
    QPointF targetPoint(QSizeF itemSize) const;
    // The overlay's area in viewport coordinates (empty without one).
    QRect overlayRect() const;

Q_SIGNALS:
    void viewportChanged();

protected:
    void wheelEvent(QWheelEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    // Puts this scene point in the middle of the viewport, the drawing's
    // area grown to allow it.
    void showCentre(QPointF centre);

    QPointer<QWidget> m_overlay;
};
