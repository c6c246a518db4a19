#pragma once

#include "ckptscope/document/document.h"
#include "ckptscope/optimizer/parameterupdate.h"
#include "ckptscope/stats/tensorstats.h"

#include <QWidget>

#include <functional>
#include <memory>

class HistogramView;
class QCheckBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLayout;
class QProgressBar;
class QSpinBox;
class QToolButton;
class StatsRunner;

// One tensor: its layout in the file, statistics and a value histogram. The
// statistics are computed off the GUI thread, cancelled when the tensor
// changes. Also serves optimizer-state blobs read as f32.
class TensorPage : public QWidget {
    Q_OBJECT
public:
    explicit TensorPage(QWidget* parent = nullptr);

    void setTensor(std::shared_ptr<const ckptscope::Document> document, int tensor);
    // Any f32 values (an optimizer blob): title and a description line.
    void setValues(const QString& title, const QString& description, uint64_t count,
                   ckptscope::ValueReader reader);
    void clear();
    // The last update the optimizer applied to this tensor's parameter
    // (null: none, the box hidden), from the state in `file`, whose tensors
    // `stateTensors` (exp_avg, exp_avg_sq…) are offered as links.
    void setOptimizer(const ckptscope::ParameterUpdate* update, const QString& file = {},
                      const QStringList& stateTensors = {});
    int tensor() const { return m_tensor; }
    // The optimizer box's figure text ("update_rms", …, "" when hidden).
    QString optimizerText(const QString& key) const;

    int bins() const;
    void setBins(int bins);
    bool logScale() const;
    void setLogScale(bool on);
    HistogramView* histogramView() const { return m_histogram; }
    bool isComputing() const;
    // Text of a statistic row ("min", "max", "mean", "std", "l2", "zeros",
    // "nan", "+inf", "-inf") for tests and copy.
    QString statText(const QString& key) const;

Q_SIGNALS:
    void statsReady(int tensor, const ckptscope::StatsResult& result);
    void statsFailed(const QString& message); // e.g. the file changed on disk
    void binsChanged(int bins);
    void logScaleChanged(bool on);
    // A state tensor's link: show that tensor of `file` (its histogram).
    void stateTensorRequested(const QString& file, const QString& tensor);

private:
    QLayout* buildFigures();
    QLayout* buildControls();
    QGroupBox* buildOptimizerBox();
    void connectControls();
    void startStats();
    void showStats(const ckptscope::StatsResult& result);
    void setInfoRow(int row, const QString& value);

    std::shared_ptr<const ckptscope::Document> m_document;
    int m_tensor = -1;
    uint64_t m_count = 0;
    ckptscope::ValueReader m_reader;
    // Document tensors: statistics by dtype (F64 in double, rounding counted).
    std::function<ckptscope::StatsResult(const ckptscope::StatsOptions&)> m_job;
    bool m_f32Values = true; // the tensor's every value a float32 (extremeText)

    QLabel* m_title;
    QLabel* m_description;
    QList<QLabel*> m_info;
    QMap<QString, QLabel*> m_stats;
    QLabel* m_specials;
    QGroupBox* m_optimizerBox;
    QMap<QString, QLabel*> m_optimizer;
    QLabel* m_optimizerNote;
    QString m_optimizerFile;
    QSpinBox* m_bins;
    QCheckBox* m_log;
    QProgressBar* m_progress;
    QToolButton* m_cancel;
    HistogramView* m_histogram;
    StatsRunner* m_runner;
};
