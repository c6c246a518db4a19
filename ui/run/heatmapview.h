#pragma once

#include "chart/axisticks.h"

#include <QRect>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <functional>
#include <optional>
#include <vector>

// What a heatmap draws: rows × columns of values, a gap where there is none.
struct HeatmapData {
    int rows = 0, cols = 0;
    std::vector<std::optional<double>> values; // row-major: [row * cols + col]
    // Column positions on the x axis (ascending, e.g. steps): a cell spans
    // halfway to its neighbours, so uneven steps keep their true spacing;
    // columns at one position share its span.
    std::vector<double> colX;
    bool integerX = true; // x ticks on whole numbers only (steps)
    // Rows: labelled categories (layers), or equal slices of [yLo, yHi]
    // (value bins) when rowLabels is empty. Row 0 is at the bottom.
    QStringList rowLabels;
    double yLo = 0, yHi = 1;
    QString xTitle, yTitle, valueTitle;

    // Cells whose figure leaves values out (a layer holding NaN/Inf), framed
    // in red; empty for none.
    std::vector<bool> flagged;

    std::optional<double> at(int row, int col) const { return values[size_t(row * cols + col)]; }
    bool isFlagged(int row, int col) const {
        return !flagged.empty() && flagged[size_t(row * cols + col)];
    }
};

// A heatmap painted by hand: cells in a perceptually uniform colour map
// (ColorMap), linear or logarithmic, a colour bar with round ticks, round
// ticks on both axes, hatching where there is no value, a tooltip per cell
// (text from a callback) and a click signal.
class HeatmapView : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapView(QWidget* parent = nullptr);

    // Replaces everything shown; an empty data set shows `emptyText`.
    void setData(HeatmapData data, const QString& emptyText = QString());
    const HeatmapData& data() const { return m_data; }
    // Logarithmic colours over the positive values; cells ≤ 0 are hatched
    // apart. Only offered when some value is positive.
    void setLogScale(bool on);
    bool logScale() const { return m_log; }
    bool canUseLogScale() const;
    void setHoverText(std::function<QString(int row, int col)> text);
    void setHighlightedRow(int row); // -1: none

    // Geometry (tests): the cell under a point (row, col) or (-1, -1), a
    // cell's rectangle, and what hovering over a cell shows.
    std::pair<int, int> cellAt(const QPoint& p) const;
    QRect cellRect(int row, int col) const;
    QString hoverText(int row, int col) const;
    // The colour range in use, and the ticks drawn: value and label (on a
    // labelled-row axis the value is the row).
    std::pair<double, double> colorRange() const;
    std::vector<AxisTick> colorBarTicks() const;
    std::vector<AxisTick> xAxisTicks() const;
    std::vector<AxisTick> yAxisTicks() const;
    QColor cellColor(int row, int col) const; // invalid for a gap

Q_SIGNALS:
    void cellClicked(int row, int col);

protected:
    void paintEvent(QPaintEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void leaveEvent(QEvent*) override;

private:
    struct Tick {
        double pos; // pixel
        QString label;
        double value;
    };
    QRect plotRect() const;
    QRect barRect() const;
    double xEdge(int i) const; // left edge of column i (i == cols: right edge)
    double xToPixel(double x) const;
    std::vector<Tick> xTicks() const;
    std::vector<Tick> yTicks() const;
    std::vector<Tick> barTicks() const;
    std::optional<double> position(double v) const; // 0..1 in the colour map

    HeatmapData m_data;
    QString m_emptyText;
    bool m_log = false;
    int m_highlight = -1;
    double m_lo = 0, m_hi = 0; // colour range (log10 of it in log mode)
    std::function<QString(int, int)> m_hoverText;
};
