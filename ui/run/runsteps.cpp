#include "run/runsteps.h"

#include <QCoreApplication>

using namespace ckptscope;

RunSteps RunSteps::of(const Run& run) {
    RunSteps s;
    s.bySteps = true;
    for (size_t c = 0; c < run.checkpoints.size(); ++c) {
        const auto& step = run.checkpoints[c].step;
        // Equal steps are allowed (a final model saved at the last
        // checkpoint's step): heatmaps share the step's span between them.
        s.bySteps = s.bySteps && step && (c == 0 || *step >= *run.checkpoints[c - 1].step);
    }
    for (size_t c = 0; c < run.checkpoints.size(); ++c)
        s.x.push_back(s.bySteps ? double(*run.checkpoints[c].step) : double(c));
    s.title = s.bySteps ? QCoreApplication::translate("RunSteps", "step")
                        : QCoreApplication::translate("RunSteps", "checkpoint (in step order)");
    return s;
}

QString RunSteps::describe(const Run& run, size_t checkpoint) const {
    const RunCheckpoint& cp = run.checkpoints.at(checkpoint);
    const QString file = QString::fromStdString(cp.name);
    if (cp.step)
        return QCoreApplication::translate("RunSteps", "step %1 (%2)").arg(*cp.step).arg(file);
    return QCoreApplication::translate("RunSteps", "checkpoint %1, no step (%2)")
        .arg(checkpoint)
        .arg(file);
}
