#pragma once

#include "ckptscope/common/metadatanumber.h"

#include <QWidget>

#include <memory>

class QChart;
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

private:
    void draw();

    std::shared_ptr<const ckptscope::Run> m_run;
    std::vector<ckptscope::MetadataSeries> m_text;
    std::vector<ckptscope::NumericMetadata> m_numeric;
    std::vector<double> m_x;
    QComboBox* m_key;
    QLabel* m_note;
    QChartView* m_view;
};
