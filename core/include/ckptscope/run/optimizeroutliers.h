#pragma once

#include "ckptscope/run/run.h"

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ckptscope {

// A parameter whose optimizer figures stand out in a run (summary.updates).
struct OptimizerOutlier {
    enum class Kind {
        // Its update / weight at a checkpoint is kOutlierFactor times the
        // median of that checkpoint's parameters or more, or as many times
        // below it: a layer about to diverge, or frozen.
        UpdateToWeight,
        // Its mean exp_avg_sq grew more than kSecondMomentGrowth times
        // between two checkpoints (the first such step only): the gradients
        // exploded before the loss did.
        SecondMomentGrowth,
    };
    Kind kind = Kind::UpdateToWeight;
    std::string name; // the weight's tensor name (the parameter's when it has none)
    size_t checkpoint = 0;
    std::optional<uint64_t> step;
    double value = 0;     // update / weight; the √exp_avg_sq RMS
    double reference = 0; // the checkpoint's median; the previous checkpoint's √v RMS
    double factor = 0;    // value / reference; for growth, of the mean exp_avg_sq
};

inline constexpr double kOutlierFactor = 10;
inline constexpr double kSecondMomentGrowth = 100;

// Ordered by checkpoint, then as the checkpoint lists its parameters.
std::vector<OptimizerOutlier> optimizerOutliers(const Run& run);

// The median update / weight of a checkpoint's parameters (those that have
// a finite, positive one); nothing without any.
std::optional<double> medianUpdateToWeight(const RunCheckpoint& checkpoint);

// Each checkpoint's updates by the tensor they belong to (the weight's
// name, the parameter's when it has none).
using UpdatesByTensor = std::vector<std::unordered_map<std::string, const ParameterUpdate*>>;
UpdatesByTensor updatesByTensor(const Run& run);
// The update of `tensor` at checkpoint `c`, or null.
const ParameterUpdate* updateOf(const UpdatesByTensor& updates, size_t c,
                                const std::string& tensor);
// True when some checkpoint of the run holds optimizer state.
bool runHasUpdates(const Run& run);

// A factor as people read it: "×278.3" above 1, "÷548.8" below.
std::string outlierFactorText(double factor);

// "update_to_weight", "second_moment_growth".
const char* outlierKindName(OptimizerOutlier::Kind kind);

} // namespace ckptscope
