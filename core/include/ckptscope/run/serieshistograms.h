#pragma once

#include "ckptscope/run/runseries.h"

#include <atomic>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// The fine histograms of one tensor over a run. A run holds statistics only
// (a histogram per tensor and checkpoint would cost 100 × 300 × 2 KiB); the
// distribution chart asks for one tensor's histograms when it is shown.
struct SeriesHistograms {
    // Per checkpoint; nothing where the tensor is absent, has no finite
    // value, or its histogram could not be had (see problems).
    std::vector<std::optional<Histogram>> at;
    // Checkpoints whose histogram is missing for a reason worth telling
    // ("FILE: changed since the run was read").
    std::vector<std::string> problems;
};

// Reads each checkpoint's histogram of `series` from the summary cache (the
// file's entry, when its identity is unchanged) or, when the cache has none
// (off, evicted, `--no-cache`), from the file by one statistics pass over
// that tensor alone. A histogram that does not match the run's statistics
// (count, minimum, maximum) came from a file that changed since the run was
// read and is left out. Holds one file's summary at a time. `cache` may be
// null. Throws Cancelled.
SeriesHistograms readSeriesHistograms(const Run& run, const TensorSeries& series,
                                      const SummaryCache* cache, const TaskControl& control = {});

} // namespace ckptscope
