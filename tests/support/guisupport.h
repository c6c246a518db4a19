#pragma once

#include <QCategoryAxis>
#include <QLabel>
#include <QString>
#include <QTextDocument>
#include <QValueAxis>
#include <QWidget>

#include <cmath>
#include <vector>

// What a widget shows for a text, the way Qt decides: rich text is parsed as
// HTML (entities decoded, tags dropped), plain text is shown as it is;
// Qt::AutoText guesses with Qt::mightBeRichText, as QLabel and QToolTip do.
namespace guisupport {

inline QString shownText(const QString& text, Qt::TextFormat format = Qt::AutoText) {
    const bool rich =
        format == Qt::RichText || (format == Qt::AutoText && Qt::mightBeRichText(text));
    if (!rich)
        return text;
    QTextDocument doc;
    doc.setHtml(text);
    return doc.toPlainText().replace(QChar(0x00a0), QLatin1Char(' '));
}

inline QString shownText(const QLabel* label) {
    return shownText(label->text(), label->textFormat());
}

// Every label's shown text under `root`, one entry each.
inline QStringList shownLabels(const QWidget* root) {
    QStringList out;
    for (const QLabel* l : root->findChildren<QLabel*>())
        out << shownText(l);
    return out;
}

struct Tick {
    double value;
    QString label;
    bool mayBeCut = false; // Qt may elide the label ("…") when it thinks space is short
};

// The ticks an axis draws, with their labels, whatever kind of value axis.
inline std::vector<Tick> ticksOf(QValueAxis* axis) {
    std::vector<Tick> out;
    auto label = [&](double v) {
        const QString f = axis->labelFormat();
        return f.endsWith(QLatin1Char('d')) ? QString::asprintf(qPrintable(f), int(v))
                                            : QString::asprintf(qPrintable(f), v);
    };
    if (auto* cat = qobject_cast<QCategoryAxis*>(axis)) {
        for (const QString& l : cat->categoriesLabels()) {
            const double v = cat->endValue(l);
            if (v >= axis->min() && v <= axis->max())
                out.push_back({v, l, cat->truncateLabels()});
        }
    } else if (axis->tickType() == QValueAxis::TicksDynamic) {
        const double step = axis->tickInterval();
        double v =
            axis->tickAnchor() - std::floor((axis->tickAnchor() - axis->min()) / step) * step;
        for (; v <= axis->max(); v += step)
            out.push_back({v, label(v)});
    } else {
        const int n = axis->tickCount();
        for (int i = 0; i < n; ++i) {
            const double v = axis->min() + i * (axis->max() - axis->min()) / (n - 1);
            out.push_back({v, label(v)});
        }
    }
    return out;
}

// Ticks a reader can use: evenly spaced by 1, 2 or 5 × 10^k, on multiples of
// that step, labelled with text that reads back to the tick's value.
inline QString roundnessProblem(const std::vector<Tick>& ticks) {
    if (ticks.size() < 3)
        return QStringLiteral("only %1 ticks").arg(ticks.size());
    const double step = ticks[1].value - ticks[0].value;
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    bool round = false;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        round = round || std::abs(mantissa - m) < 1e-6;
    if (!round)
        return QStringLiteral("step %1 is not 1, 2 or 5 x 10^k").arg(step);
    for (size_t i = 0; i < ticks.size(); ++i) {
        const Tick& t = ticks[i];
        if (t.mayBeCut)
            return QStringLiteral("label '%1' may be cut short").arg(t.label);
        const double k = t.value / step;
        if (std::abs(k - std::round(k)) > 1e-6)
            return QStringLiteral("tick %1 is not a multiple of %2").arg(t.value).arg(step);
        bool ok = false;
        const double read = QString(t.label).remove(QLatin1Char(',')).toDouble(&ok);
        if (!ok || std::abs(read - t.value) > step * 1e-6)
            return QStringLiteral("label '%1' for tick %2").arg(t.label).arg(t.value);
    }
    return {};
}

} // namespace guisupport
