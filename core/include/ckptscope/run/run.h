#pragma once

#include "ckptscope/run/checkpointsummary.h"
#include "ckptscope/run/runscan.h"
#include "ckptscope/run/stepparser.h"
#include "ckptscope/run/summarycache.h"
#include "ckptscope/run/trainerfiles.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// A run holds one kind of checkpoint: tensor files (OXCK, and any other
// format whose Document yields tensors) or gradient checkpoints.
enum class RunKind { Tensors, Gradient };
const char* runKindName(RunKind kind); // "tensors", "gradient"
RunKind runKindOf(Format format);

struct RunCheckpoint {
    std::string path;               // file, first shard or checkpoint folder
    std::string name;               // base name
    std::vector<std::string> files; // the files summarised, in order
    std::optional<uint64_t> step;
    StepSource stepSource = StepSource::None;
    uint64_t fileSize = 0;          // sum over files
    std::optional<int64_t> mtimeNs; // latest over files; none: a URL without Last-Modified
    bool fromCache = false;
    // Tensors of all files in order; metadata: the first file's value of
    // each key wins.
    FileSummary summary;
    std::vector<std::string> sideFiles; // the Trainer's files beside it (paths)
    std::string index;                  // its shards' index, or ""
    // What trainer_state.json logged at this step (loss, learning_rate, …):
    // metadata series of the run under those keys (runseries.h).
    TrainerLog trainerLog;
    // The file whose optimizer state gave summary.updates: a Trainer
    // folder's optimizer.pt, or the checkpoint's own file; "" for none.
    std::string optimizerFile;

    // The file a window opens for it: the index of a sharded model, else
    // its first file.
    const std::string& openPath() const;
};

struct Run {
    std::optional<RunKind> kind; // nothing when no checkpoint was read
    std::vector<RunCheckpoint> checkpoints;
    std::vector<SkippedPath> skipped;       // natural order of paths
    std::vector<std::string> sideFiles;     // outside checkpoint folders
    std::vector<std::string> warnings;      // "FILE: problem" (trainer_state.json, config.json)
    std::optional<ModelConfig> modelConfig; // the latest checkpoint's config.json, else the run's
    // Everything the Trainer logged (loss at every logging step…), from the
    // trainer_state.json furthest on: the run folder's or the latest
    // checkpoint's, whichever global_step is higher (the run folder's on a tie).
    TrainerHistory trainerHistory;
    std::string trainerHistoryFile;          // the file it came from, or ""
    uint64_t cacheHits = 0, cacheMisses = 0; // checkpoints, not files
    uint64_t notCached = 0;                  // RunOptions::cacheOnly: checkpoints left out
};

struct RunProgress {
    size_t filesDone = 0, filesTotal = 0;
    uint64_t bytesRead = 0; // values summarised from files (cache hits add none)
};

struct RunOptions {
    bool useCache = true;
    std::string cacheDir = SummaryCache::defaultDir();
    uint64_t cacheMaxBytes = SummaryCache::defaultMaxBytes();
    bool keepHistograms = false; // a run usually holds statistics only
    // Only what the cache holds (a first look, shown at once); a checkpoint
    // with a file to summarise is left out and counted in Run::notCached.
    bool cacheOnly = false;
    const std::atomic<bool>* cancel = nullptr;
    std::function<void(const RunProgress&)> progress;
};

// Discovers, reads (or takes from the cache) and orders the checkpoints of
// PATHs. The first readable file in name order decides the kind; files of
// the other kind, damaged files and non-checkpoints are skipped with the
// reason; a damaged file never stops the run. A checkpoint folder's
// trainer_state.json gives its step and log (the run folder's one the log
// values its own lacks); a bad one is a warning, the checkpoint stays.
// Sorted by step, equal steps by name, those without a step last by name.
// Throws Cancelled.
Run readRun(const std::vector<std::string>& paths, const RunOptions& options = {});
// The same over checkpoints already found (discoverCheckpoints), e.g. with
// those still being written taken out (WriteSettle).
Run readCandidates(Discovery found, const RunOptions& options = {});

// The step of a checkpoint and where it came from (see stepparser.h).
std::pair<std::optional<uint64_t>, StepSource> checkpointStep(const FileSummary& merged,
                                                              const std::string& name);

} // namespace ckptscope
