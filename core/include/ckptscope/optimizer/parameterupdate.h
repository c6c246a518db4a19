#pragma once

#include "ckptscope/common/taskcontrol.h"
#include "ckptscope/optimizer/optimizercheckpoint.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// The last update the optimizer applied to one parameter, from the state it
// saved after that update. Adam: u = lr · m̂ / (√v̂ + eps), m̂ = exp_avg /
// (1 − β1^step), v̂ = exp_avg_sq / (1 − β2^step) (max_exp_avg_sq with
// amsgrad); the decoupled weight decay lr · weight_decay · w apart. SGD with
// momentum: u = lr · momentum_buffer. Absent figures are null, `note` says
// why.
struct ParameterUpdate {
    std::string parameter;
    std::string tensor; // the weight's tensor in the model ("" when none)
    UpdateRule rule = UpdateRule::Other;
    double lr = 0;
    std::optional<double> step;
    uint64_t count = 0; // elements of the update
    std::optional<double> updateRms, updateMax;
    std::optional<double> updateToWeight; // RMS(u) / RMS(w)
    std::optional<double> weightRms;
    std::optional<double> expAvgRms, expAvgSqSqrtRms; // RMS of exp_avg and of √exp_avg_sq
    std::optional<double> decayRms;                   // RMS(lr · weight_decay · w)
    std::string note;

    bool operator==(const ParameterUpdate&) const = default;
};

// The figures of every parameter of `state`, reading each parameter's
// weight and moments together in blocks (never a whole tensor), parameters
// shared among `threads` workers (0: one per core). Throws OpenError naming
// the file that cannot be read, and Cancelled.
std::vector<ParameterUpdate> computeParameterUpdates(const OptimizerCheckpoint& state,
                                                     const TaskControl& control = {},
                                                     unsigned threads = 0);

// The bytes computeParameterUpdates reads (progress, benchmarks).
uint64_t parameterUpdateBytes(const OptimizerCheckpoint& state);

} // namespace ckptscope
