#pragma once

#include "ckptscope/run/run.h"
#include "ckptscope/run/runseries.h"

#include <QWidget>

#include <memory>

class QTableWidget;

// The run at a glance, as `ckptscope-cli timeline` reports it: its
// checkpoints and steps, the first with NaN/Inf, the tensors whose L2 norm
// grew most, what the Trainer logged (per key: how often, the last, lowest
// and highest value with their steps), what was skipped or warned about (a
// bad trainer_state.json or config.json), and the model's config.json facts
// under config.json's own keys. One row per fact: label, value.
class RunOverview : public QWidget {
    Q_OBJECT
public:
    explicit RunOverview(QWidget* parent = nullptr);
    // series: the run's tensor series (tensorSeries), for the findings.
    void setRun(std::shared_ptr<const ckptscope::Run> run,
                std::shared_ptr<const std::vector<ckptscope::TensorSeries>> series = {});

    QTableWidget* table() const { return m_table; }
    // The value shown for a label, or a null string when there is no such row.
    QString valueOf(const QString& label) const;

private:
    void addRow(const QString& label, const QString& value, const QString& tip = {});
    void addFindings(const ckptscope::Run& run, const std::vector<ckptscope::TensorSeries>& series);
    void addTrainerLog(const ckptscope::Run& run);

    QTableWidget* m_table;
};
