#pragma once

#include "ckptscope/run/metadatanumber.h"

#include <QList>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QChart;
class QLineSeries;
class QPointF;
class QScatterSeries;
class QChartView;
class QComboBox;
class QLabel;

// Numeric metadata over a run's steps (loss, lr, …): the keys whose every
// value reads as a number, one chosen at a time. Keys with other values are
// listed as not charted, never drawn.
class MetadataChartView : public QWidget {
    Q_OBJECT
public:
    explicit MetadataChartView(QWidget* parent = nullptr);

    void setRun(std::shared_ptr<const ckptscope::Run> run);
    void setKey(const QString& key);

    QComboBox* keyChooser() const { return m_key; }
    QChart* chart() const;
    QLabel* note() const { return m_note; }
    // What hovering next to a checkpoint shows (the value as written).
    QString hoverText(size_t checkpoint) const;
    // Where the hover stops: the checkpoints, and with a Trainer's history
    // drawn each step it logged the key at (in step order; checkpoints at one
    // step stop there each, and the hover shows them all); what it shows at
    // the i-th.
    const std::vector<double>& hoverSteps() const { return m_hoverX; }
    QString hoverAt(size_t i) const;

private:
    struct Span {
        double xLo, xHi, lo, hi;
    };
    void draw();
    QString startNote() const;
    void resetHoverStops();
    std::vector<std::optional<double>> checkpointsOnAxis(bool history, int& unplaced) const;
    QString historyNote(const QString& key, const std::vector<std::pair<uint64_t, double>>& logged,
                        int unplaced) const;
    void setHoverStops(const std::vector<std::optional<double>>& cx, const QList<QPointF>& all);
    void addAxes(QLineSeries* line, QScatterSeries* points, Span span, const QString& xTitle,
                 const QString& key);

    std::shared_ptr<const ckptscope::Run> m_run;
    std::vector<ckptscope::MetadataSeries> m_text;
    std::vector<ckptscope::NumericMetadata> m_numeric;
    std::vector<double> m_x;
    std::vector<double> m_hoverX;
    std::vector<int> m_hoverCheckpoint;               // -1: a logged step alone
    std::vector<std::optional<double>> m_hoverLogged; // the history's value there
    QComboBox* m_key;
    QLabel* m_note;
    QChartView* m_view;
};
