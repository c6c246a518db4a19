#include "run/heatmapview.h"

#include "chart/axisticks.h"
#include "chart/colormap.h"

#include "ckptscope/common/numberformat.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace {

constexpr int kBarWidth = 14;

} // namespace

HeatmapView::HeatmapView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumSize(320, 200);
}

void HeatmapView::setData(HeatmapData data, const QString& emptyText) {
    m_data = std::move(data);
    m_emptyText = emptyText;
    m_highlight = -1;
    if (m_log && !canUseLogScale())
        m_log = false;
    setLogScale(m_log); // recomputes the colour range
    QToolTip::hideText();
}

bool HeatmapView::canUseLogScale() const {
    return std::any_of(m_data.values.begin(), m_data.values.end(),
                       [](const auto& v) { return v && std::isfinite(*v) && *v > 0; });
}

void HeatmapView::setLogScale(bool on) {
    m_log = on && canUseLogScale();
    bool any = false;
    for (const auto& v : m_data.values) {
        if (!v || !std::isfinite(*v) || (m_log && !(*v > 0)))
            continue;
        const double x = m_log ? std::log10(*v) : *v;
        m_lo = any ? std::min(m_lo, x) : x;
        m_hi = any ? std::max(m_hi, x) : x;
        any = true;
    }
    if (!any)
        m_lo = m_hi = 0;
    update();
}

void HeatmapView::setHoverText(std::function<QString(int, int)> text) {
    m_hoverText = std::move(text);
}

void HeatmapView::setHighlightedRow(int row) {
    m_highlight = row;
    update();
}

std::pair<double, double> HeatmapView::colorRange() const {
    return m_log ? std::make_pair(std::pow(10.0, m_lo), std::pow(10.0, m_hi))
                 : std::make_pair(m_lo, m_hi);
}

std::optional<double> HeatmapView::position(double v) const {
    if (!std::isfinite(v) || (m_log && !(v > 0)))
        return std::nullopt;
    const double x = m_log ? std::log10(v) : v;
    return m_hi > m_lo ? (x - m_lo) / (m_hi - m_lo) : 0.5;
}

QColor HeatmapView::cellColor(int row, int col) const {
    const auto v = m_data.at(row, col);
    if (!v)
        return {};
    const auto t = position(*v);
    return t ? ColorMap::color(*t) : QColor();
}

QRect HeatmapView::plotRect() const {
    const QFontMetrics fm(font());
    const int left = fm.horizontalAdvance(QStringLiteral("-0.0000")) + fm.height() + 12;
    const int right =
        16 + kBarWidth + 6 + fm.horizontalAdvance(QStringLiteral("-0.000000")) + fm.height() + 8;
    const int bottom = 2 * fm.height() + 12;
    return QRect(left, fm.height() / 2 + 4, std::max(10, width() - left - right),
                 std::max(10, height() - bottom - fm.height() / 2 - 4));
}

QRect HeatmapView::barRect() const {
    const QRect p = plotRect();
    return QRect(p.right() + 16, p.top(), kBarWidth, p.height());
}

double HeatmapView::xEdge(int i) const {
    // Edges halfway between distinct positions; checkpoints at one position
    // (a final model saved at the last checkpoint's step) share its span in
    // equal parts, each a column of its own.
    const auto& x = m_data.colX;
    const int n = int(x.size());
    const int at = std::min(i, n - 1);
    int first = at, last = at; // the columns at x[at]
    while (first > 0 && x[size_t(first - 1)] == x[size_t(at)])
        --first;
    while (last + 1 < n && x[size_t(last + 1)] == x[size_t(at)])
        ++last;
    const double here = x[size_t(at)];
    double lo = first > 0 ? (x[size_t(first - 1)] + here) / 2 : NAN,
           hi = last + 1 < n ? (here + x[size_t(last + 1)]) / 2 : NAN;
    if (std::isnan(lo) && std::isnan(hi)) { // one position
        lo = here - 0.5;
        hi = here + 0.5;
    } else if (std::isnan(lo)) {
        lo = here - (hi - here);
    } else if (std::isnan(hi)) {
        hi = here + (here - lo);
    }
    if (i == n)
        return hi;
    return lo + (hi - lo) * double(i - first) / double(last - first + 1);
}

double HeatmapView::xToPixel(double x) const {
    const QRect p = plotRect();
    const double lo = xEdge(0), hi = xEdge(m_data.cols);
    return hi > lo ? p.left() + (x - lo) / (hi - lo) * p.width() : p.left();
}

QRect HeatmapView::cellRect(int row, int col) const {
    const QRect p = plotRect();
    const double left = xToPixel(xEdge(col)), right = xToPixel(xEdge(col + 1));
    const double h = double(p.height()) / m_data.rows;
    const double top = p.bottom() + 1 - (row + 1) * h;
    return QRectF(left, top, right - left, h).toAlignedRect().intersected(p);
}

std::pair<int, int> HeatmapView::cellAt(const QPoint& pt) const {
    if (m_data.rows == 0 || m_data.cols == 0 || int(m_data.colX.size()) != m_data.cols)
        return {-1, -1};
    const QRect p = plotRect();
    if (!p.contains(pt))
        return {-1, -1};
    const int row = std::clamp(int((p.bottom() + 1 - pt.y()) * m_data.rows / double(p.height())), 0,
                               m_data.rows - 1);
    for (int c = 0; c < m_data.cols; ++c)
        if (pt.x() < xToPixel(xEdge(c + 1)) || c == m_data.cols - 1)
            return {row, c};
    return {-1, -1};
}

QString HeatmapView::hoverText(int row, int col) const {
    if (row < 0 || col < 0 || row >= m_data.rows || col >= m_data.cols)
        return {};
    if (m_hoverText)
        return m_hoverText(row, col);
    const auto v = m_data.at(row, col);
    return v ? QString::fromStdString(ckptscope::fmt::exact(*v)) : tr("no value");
}

std::vector<HeatmapView::Tick> HeatmapView::xTicks() const {
    std::vector<Tick> out;
    if (m_data.cols == 0)
        return out;
    const double lo = xEdge(0), hi = xEdge(m_data.cols);
    for (const AxisTick& t : roundTicks(lo, hi, std::max(2, plotRect().width() / 90)))
        if (!m_data.integerX || t.value == std::floor(t.value))
            out.push_back({xToPixel(t.value), t.label, t.value});
    return out;
}

std::vector<HeatmapView::Tick> HeatmapView::yTicks() const {
    std::vector<Tick> out;
    const QRect p = plotRect();
    if (m_data.rows == 0)
        return out;
    const int target = std::max(2, p.height() / (2 * QFontMetrics(font()).height()));
    if (m_data.rowLabels.isEmpty()) {
        for (const AxisTick& t : roundTicks(m_data.yLo, m_data.yHi, target))
            out.push_back(
                {p.bottom() + 1 - (t.value - m_data.yLo) / (m_data.yHi - m_data.yLo) * p.height(),
                 t.label, t.value});
        return out;
    }
    // Every k-th row, k a round number, so labels never overlap.
    const int stride = int(std::max(1.0, roundTickStep(m_data.rows, target)));
    const double h = double(p.height()) / m_data.rows;
    for (int r = 0; r < m_data.rows; r += stride)
        out.push_back({p.bottom() + 1 - (r + 0.5) * h, m_data.rowLabels.value(r), double(r)});
    return out;
}

std::vector<HeatmapView::Tick> HeatmapView::barTicks() const {
    std::vector<Tick> out;
    const QRect b = barRect();
    if (!(m_hi > m_lo))
        return out;
    auto pixel = [&](double x) { return b.bottom() + 1 - (x - m_lo) / (m_hi - m_lo) * b.height(); };
    const int target = std::max(2, b.height() / 50);
    if (m_log && m_hi - m_lo >= 1) {
        // Whole powers of ten, every k-th for a round k.
        const double step = std::max(1.0, roundTickStep(m_hi - m_lo, target));
        for (double k = std::ceil(m_lo / step - 1e-9); k * step <= m_hi + 1e-9; ++k) {
            const double e = k * step;
            out.push_back({pixel(e),
                           QString::fromStdString(ckptscope::fmt::display(std::pow(10.0, e))),
                           std::pow(10.0, e)});
        }
        return out;
    }
    const double lo = m_log ? std::pow(10.0, m_lo) : m_lo, hi = m_log ? std::pow(10.0, m_hi) : m_hi;
    for (const AxisTick& t : roundTicks(lo, hi, target))
        if (!m_log || t.value > 0)
            out.push_back({pixel(m_log ? std::log10(t.value) : t.value), t.label, t.value});
    return out;
}

static std::vector<AxisTick> valuesOf(const auto& ticks) {
    std::vector<AxisTick> out;
    for (const auto& t : ticks)
        out.push_back({t.value, t.label});
    return out;
}

std::vector<AxisTick> HeatmapView::colorBarTicks() const {
    return valuesOf(barTicks());
}
std::vector<AxisTick> HeatmapView::xAxisTicks() const {
    return valuesOf(xTicks());
}
std::vector<AxisTick> HeatmapView::yAxisTicks() const {
    return valuesOf(yTicks());
}

void HeatmapView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().base());
    const QRect p = plotRect();
    const QFontMetrics fm(font());
    painter.setPen(palette().text().color());
    if (m_data.rows == 0 || m_data.cols == 0 || int(m_data.colX.size()) != m_data.cols) {
        painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, m_emptyText);
        return;
    }
    // Gaps: hatched, so "no value" never reads as a low value.
    painter.fillRect(p, QBrush(palette().mid().color(), Qt::BDiagPattern));
    for (int r = 0; r < m_data.rows; ++r)
        for (int c = 0; c < m_data.cols; ++c) {
            const auto v = m_data.at(r, c);
            if (!v)
                continue;
            const QRect cell = cellRect(r, c);
            if (const QColor col = cellColor(r, c); col.isValid())
                painter.fillRect(cell, col);
            else // ≤ 0 on a log scale, or not finite
                painter.fillRect(cell, QBrush(palette().text().color(), Qt::Dense6Pattern));
        }
    // A cell of a layer holding NaN/Inf: a red frame and cross, whatever its
    // colour (its figure is of the finite values only).
    painter.setPen(QPen(QColor(200, 30, 30), 2));
    for (int r = 0; r < m_data.rows; ++r)
        for (int c = 0; c < m_data.cols; ++c)
            if (m_data.isFlagged(r, c)) {
                const QRect cell = cellRect(r, c).adjusted(1, 1, -1, -1);
                painter.drawRect(cell);
                painter.drawLine(cell.topLeft(), cell.bottomRight());
                painter.drawLine(cell.bottomLeft(), cell.topRight());
            }
    painter.setPen(palette().text().color());
    painter.drawRect(p.adjusted(0, 0, -1, -1));
    if (m_highlight >= 0 && m_highlight < m_data.rows) {
        const double h = double(p.height()) / m_data.rows;
        QPen pen(palette().highlight().color(), 2);
        painter.setPen(pen);
        painter.drawRect(QRectF(p.left(), p.bottom() + 1 - (m_highlight + 1) * h, p.width(), h));
        painter.setPen(palette().text().color());
    }
    // Axes.
    for (const Tick& t : xTicks()) {
        painter.drawLine(QPointF(t.pos, p.bottom()), QPointF(t.pos, p.bottom() + 4));
        const int w = fm.horizontalAdvance(t.label);
        painter.drawText(QPointF(t.pos - w / 2.0, p.bottom() + 5 + fm.ascent()), t.label);
    }
    painter.drawText(QRect(p.left(), p.bottom() + 6 + fm.height(), p.width(), fm.height()),
                     Qt::AlignHCenter, m_data.xTitle);
    for (const Tick& t : yTicks()) {
        painter.drawLine(QPointF(p.left() - 4, t.pos), QPointF(p.left(), t.pos));
        const int w = fm.horizontalAdvance(t.label);
        painter.drawText(QPointF(p.left() - 6 - w, t.pos + fm.ascent() / 2.0 - 1), t.label);
    }
    painter.save();
    painter.translate(fm.height() / 2.0 + 2, p.center().y());
    painter.rotate(-90);
    painter.drawText(QRect(-p.height() / 2, -fm.height() / 2, p.height(), fm.height()),
                     Qt::AlignCenter, m_data.yTitle);
    painter.restore();
    // Colour bar.
    const QRect b = barRect();
    for (int y = 0; y < b.height(); ++y)
        painter.fillRect(QRect(b.left(), b.bottom() - y, b.width(), 1),
                         ColorMap::color(double(y) / std::max(1, b.height() - 1)));
    painter.drawRect(b.adjusted(0, 0, -1, -1));
    for (const Tick& t : barTicks()) {
        painter.drawLine(QPointF(b.right(), t.pos), QPointF(b.right() + 4, t.pos));
        painter.drawText(QPointF(b.right() + 6, t.pos + fm.ascent() / 2.0 - 1), t.label);
    }
    if (!(m_hi > m_lo) && (m_hi != 0 || m_lo != 0 || canUseLogScale())) {
        const QString only = QString::fromStdString(ckptscope::fmt::display(colorRange().first));
        painter.drawText(QPointF(b.right() + 6, b.center().y()), only);
    }
    painter.save();
    painter.translate(width() - fm.height() / 2.0 - 2, b.center().y());
    painter.rotate(90);
    painter.drawText(QRect(-b.height() / 2, -fm.height() / 2, b.height(), fm.height()),
                     Qt::AlignCenter, m_data.valueTitle + (m_log ? tr(" (log)") : QString()));
    painter.restore();
}

void HeatmapView::mouseMoveEvent(QMouseEvent* e) {
    const auto [row, col] = cellAt(e->position().toPoint());
    if (row < 0) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(e->globalPosition().toPoint(), hoverText(row, col), this,
                       cellRect(row, col));
}

void HeatmapView::mousePressEvent(QMouseEvent* e) {
    const auto [row, col] = cellAt(e->position().toPoint());
    if (row >= 0 && e->button() == Qt::LeftButton)
        Q_EMIT cellClicked(row, col);
}

void HeatmapView::leaveEvent(QEvent*) {
    QToolTip::hideText();
}
