#pragma once

#include "ckptscope/run/layerfamily.h"

#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// What a layer profile shows per layer and checkpoint, all from the summaries
// (never from values).
enum class LayerStatistic {
    L2,     // L2 norm of the finite values
    Std,    // standard deviation of the finite values
    MaxAbs, // max(|min|, |max|) of the finite values
    Mean,   // mean of the finite values
    // |L2_t − L2_{t−1}| / L2_{t−1} against the checkpoint just before. This is
    // the relative change of the NORM, not ‖x_t − x_{t−1}‖ / ‖x_{t−1}‖: the
    // summaries hold no values, and a tensor whose values move while its norm
    // stays put shows 0 here.
    L2RelativeChange,
    // From the optimizer state a checkpoint holds (FileSummary::updates):
    // RMS(u) / RMS(w) of the last update, and the RMS of √exp_avg_sq.
    UpdateToWeight,
    SqrtVRms,
    Count
};

// The statistics read from the optimizer's state, not the weights'.
bool isOptimizerStatistic(LayerStatistic statistic);

// Short name for choosers ("L2 norm") and the exact meaning for labels.
const char* layerStatisticName(LayerStatistic statistic);
const char* layerStatisticMeaning(LayerStatistic statistic);

// A family's statistic as a matrix: rows are the members (layer order),
// columns the run's checkpoints (run order). A cell is empty where the layer
// is absent from the checkpoint, where it has no finite value (std, max |x|,
// mean), and for the relative change also where the previous checkpoint
// lacks the layer or its L2 there is 0.
struct LayerProfile {
    LayerStatistic statistic = LayerStatistic::L2;
    std::vector<std::string> rows;                          // member numbers
    std::vector<std::vector<std::optional<double>>> values; // [row][checkpoint]
    // NaN and ±Inf values the layer's tensor holds there ([row][checkpoint]):
    // the cell's figure is of the finite values only, and says so.
    std::vector<std::vector<uint64_t>> nonFinite;
};

LayerProfile layerProfile(const Run& run, const std::vector<TensorSeries>& series,
                          const LayerFamily& family, LayerStatistic statistic);

} // namespace ckptscope
