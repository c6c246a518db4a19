#pragma once

#include "ckptscope/run/run.h"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ckptscope {

// One tensor followed over a run's checkpoints. A name repeated within a
// file pairs by occurrence (the second "w" of one checkpoint with the second
// "w" of the next), as `diff` pairs them.
struct TensorSeries {
    std::string name;
    size_t occurrence = 0; // 0 for the first tensor of that name in a file
    // Per checkpoint: the index into its summary.tensors, nothing where absent.
    std::vector<std::optional<size_t>> at;

    const TensorSummary* point(const Run& run, size_t checkpoint) const;
};

// Every tensor of any checkpoint, in order of first appearance (checkpoint
// order, then file order).
std::vector<TensorSeries> tensorSeries(const Run& run);

// Series whose name is one of `names` (all when empty), order kept.
std::vector<TensorSeries> selectSeries(std::vector<TensorSeries> all,
                                       const std::vector<std::string>& names);

// Optimizer-state blobs of a gradient run, by name.
struct BlobSeries {
    std::string name;
    std::vector<std::optional<size_t>> at; // into summary.blobs
};
std::vector<BlobSeries> blobSeries(const Run& run);

// Metadata values over the run; keys sorted. A checkpoint's trainer log
// (loss, learning_rate, …) is part of it, before its file's metadata of the
// same key; its values are written as the shortest text that reads back to
// the same double, and `numbers` says the series is such a log key whose
// every value reads as a number (metadataNumber): JSON numbers in
// `timeline --json`.
struct MetadataSeries {
    std::string key;
    std::vector<std::optional<std::string>> values;
    bool numbers = false;
};
std::vector<MetadataSeries> metadataSeries(const Run& run);

// The first checkpoint holding a NaN or ±Inf in one of `series`, with the
// names of the tensors that hold them, in file order.
struct FirstNonfinite {
    size_t index = 0;
    std::optional<uint64_t> step;
    std::vector<std::string> tensors;
};
std::optional<FirstNonfinite> firstNonfinite(const Run& run,
                                             const std::vector<TensorSeries>& series);
// How many of those tensors a report names before "and N more".
constexpr size_t kNonfiniteNamed = 10;

// How a tensor's L2 norm moved between the first and the last checkpoint
// holding it. Tensors present in fewer than two checkpoints, or with a zero
// or non-finite first L2, have no ratio.
struct L2Change {
    size_t series = 0; // index into the series given
    size_t firstIndex = 0, lastIndex = 0;
    double first = 0, last = 0;
    double ratio = 0; // last / first
};
// The `limit` largest growths (ratio > 1), largest first.
std::vector<L2Change> largestL2Growth(const Run& run, const std::vector<TensorSeries>& series,
                                      size_t limit);
// How many growths a report lists (timeline, the run window's Overview).
constexpr size_t kL2GrowthListed = 5;

// What the Trainer logged of one key (Run::trainerHistory): how often, how
// many of the values are NaN/Inf, the last value logged (at the greatest
// step, the first of equals; NaN/Inf included: a run that ended in NaN says
// so) and the lowest and highest finite value, each with its step. A spike
// between checkpoints shows here.
struct LoggedSummary {
    using Entry = std::pair<uint64_t, double>; // step, value
    uint64_t logged = 0, nonFinite = 0;
    std::optional<Entry> last, lowest, highest;
};
LoggedSummary summarizeLogged(const std::vector<std::pair<uint64_t, double>>& logged);

} // namespace ckptscope
