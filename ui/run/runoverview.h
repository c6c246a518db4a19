#pragma once

#include "ckptscope/run/run.h"

#include <QWidget>

#include <memory>

class QTableWidget;

// The run at a glance: its checkpoints and steps, what was skipped or
// warned about (a bad trainer_state.json or config.json), and the model's
// config.json facts (architecture, model_type, sizes, torch_dtype) under
// config.json's own keys. One row per fact: label, value.
class RunOverview : public QWidget {
    Q_OBJECT
public:
    explicit RunOverview(QWidget* parent = nullptr);
    void setRun(std::shared_ptr<const ckptscope::Run> run);

    QTableWidget* table() const { return m_table; }
    // The value shown for a label, or a null string when there is no such row.
    QString valueOf(const QString& label) const;

private:
    void addRow(const QString& label, const QString& value, const QString& tip = {});

    QTableWidget* m_table;
};
