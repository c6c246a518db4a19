#pragma once

#include "ckptscope/document/document.h"
#include "ckptscope/optimizer/parameterupdate.h"
#include "ckptscope/stats/tensorstats.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ckptscope {

// Bins of the fine histogram kept per tensor: enough for percentile bands
// and per-step histogram charts without reading the file again. 64 (within
// 1/64 of the range; TensorBoard's distributions use 30 buckets): up to 64
// bins are counted bit-sliced (slicedbins.h), so summarising a run costs
// about what reading it does; 256 cost a third more (docs/PERFORMANCE.md).
inline constexpr int kSummaryHistogramBins = 64;

// A tensor reduced to what the run view draws: statistics (the same code and
// meaning as `stats --json`) and a fine histogram over its finite range.
struct TensorSummary {
    std::string name;
    TensorStats stats;
    Histogram histogram; // counts empty when there is no finite value

    bool operator==(const TensorSummary&) const;
};

// An optimizer-state blob of a gradient checkpoint: its size, and when the
// length is a multiple of 4 the statistics of its bytes read as f32.
struct BlobSummary {
    std::string name;
    uint64_t bytes = 0;
    std::optional<TensorStats> stats;
    Histogram histogram;

    bool operator==(const BlobSummary&) const;
};

// A graph's progress: nodes with an output CID ran forward, nodes with a
// gradient CID ran backward.
struct GraphCounts {
    uint64_t nodes = 0, edges = 0, forwardDone = 0, backwardDone = 0;
    bool operator==(const GraphCounts&) const = default;
};

// One file summarised: everything a run needs, so the file is never read
// again while it is unchanged (see SummaryCache).
struct FileSummary {
    Format format = Format::Oxck;
    std::vector<std::pair<std::string, std::string>> metadata; // as Document::metadata()
    std::vector<TensorSummary> tensors;                        // file order (tensor formats)
    // Gradient checkpoints only.
    uint64_t gradientStep = 0;
    GraphCounts graph;
    std::vector<BlobSummary> blobs; // name order
    // The last update of each parameter with optimizer state: of the state
    // the file holds beside its model (Lightning), or, in the summary of a
    // Trainer's optimizer.pt, paired with the model file `pairedWith` names
    // (its identity as text: the figures are stale when that file changed).
    std::vector<ParameterUpdate> updates;
    std::string pairedWith;

    bool operator==(const FileSummary&) const;
    // Drops the histograms (a run holds statistics; charts reload bins).
    void dropHistograms();
};

// cancel: computeStats throws Cancelled; progress: the share of the file's
// value bytes (summaryBytes) summarised so far, from worker threads.
struct SummaryOptions : TaskControl {};

// The bytes of values summarizeDocument reads: tensors' values, or a
// gradient checkpoint's optimizer blobs.
uint64_t summaryBytes(const Document& doc);

// Reads every value of the document once per statistic pass. Throws
// OpenError (naming the file) when the file cannot be read to the end or
// changed while reading, and Cancelled.
FileSummary summarizeDocument(const Document& doc, const SummaryOptions& options = {});

// The summary of a Trainer's optimizer.pt: no statistics, the updates of
// its parameters paired with `model`, the checkpoint's model.
FileSummary summarizeOptimizer(std::shared_ptr<const Document> model,
                               std::shared_ptr<const Document> optimizer,
                               const SummaryOptions& options = {});

} // namespace ckptscope
