#pragma once

#include "ckptscope/run/run.h"

#include <QString>

#include <vector>

// Where the run's checkpoints sit on an x axis: their steps when every
// checkpoint has one (in order; two may share one), else their positions in
// step order. Shared by the run window's heatmaps and charts.
struct RunSteps {
    std::vector<double> x;
    bool bySteps = false;
    QString title; // "step" or "checkpoint (in step order)"
    // "step 120" or "checkpoint 3 (no step)" for hover texts.
    QString describe(const ckptscope::Run& run, size_t checkpoint) const;

    static RunSteps of(const ckptscope::Run& run);
};
