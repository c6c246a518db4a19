#pragma once

#include <QGraphicsView>

// Zoom with the wheel (anchored under the cursor), pan by dragging, fit to
// the window. Emits the visible area so the minimap can follow.
class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphView(QWidget* parent = nullptr);

    void zoomBy(double factor);
    void fitAll();
    // What a user wants on opening: the whole graph if it is readable at
    // that size, else full size at the top, where the inputs are.
    void showInitial();
    void centerOnItem(const QGraphicsItem* item);
    double zoom() const { return transform().m11(); }

Q_SIGNALS:
    void viewportChanged();

protected:
    void wheelEvent(QWheelEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    void resizeEvent(QResizeEvent* event) override;
};
