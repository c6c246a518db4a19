#pragma once

#include "ckptscope/document/document.h"
#include "ckptscope/io/httpsource.h"

#include <memory>
#include <string>
#include <vector>

namespace ckptscope {

// A path left out of a run, and why (shown to the user as is).
struct SkippedPath {
    std::string path;
    std::string reason;
    bool operator==(const SkippedPath&) const = default;
};

// One file of a checkpoint, with the format its first bytes announce.
struct CandidateFile {
    std::string path;
    Format format = Format::Oxck;
    // A file by URL: the source its probe opened, kept so that reading it
    // asks the server nothing twice (its first answer gave the identity).
    std::shared_ptr<const HttpSource> source;
};

// A checkpoint as found on disk, before anything but its first bytes was
// read: a file, the shards of one checkpoint (`…-00001-of-00004.…`), or a
// Hugging Face Trainer `checkpoint-N` folder (the checkpoint files directly
// in it, single or one shard set, and the Trainer's side files).
struct CheckpointCandidate {
    std::string path; // the file, the first shard, or the folder
    std::string name; // its base name (a URL's last path segment): order, file-name steps
    std::vector<CandidateFile> files;   // name order (shards in shard order)
    std::vector<std::string> sideFiles; // paths, name order (trainerfiles.h)
    std::string index;                  // the shards' *.safetensors.index.json, or ""
    // A folder that opens as one model (a DeepSpeed global_stepN folder, a
    // DCP step-N folder):
    // summarised as one document; `files` are its files.
    bool folderModel = false;
};

struct Discovery {
    std::vector<CheckpointCandidate> candidates; // by name, then path
    std::vector<SkippedPath> skipped;            // natural order of paths
    // Side files outside checkpoint folders (the run folder's own
    // trainer_state.json, config.json, …), name order.
    std::vector<std::string> sideFiles;
};

// Expands PATHs: a folder gives the regular files directly in it (recognised
// by content, whatever their extension; names starting with '.' — a
// writer's temporaries — are passed over) and its `checkpoint-N` subfolders
// (other subfolders are not entered); a `checkpoint-N` folder given itself
// is one checkpoint; a file gives itself. Before any probe, names decide
// (runFileRole): the Trainer's side files are listed, never probed, and
// `pytorch_model*.bin` is skipped unread. Shards (shardset.h) of one set
// form one checkpoint; in a `checkpoint-N` folder an index names the set.
// A file reached twice (same device and inode) counts once. An http(s) URL
// is a file (probed by its first bytes; a Trainer side file by URL is
// skipped: those are read from local folders); shards of one set are URLs
// that differ only in the last path segment. Missing paths,
// files that are no checkpoint, incomplete sets and mixed sets (several in
// one checkpoint folder, or one name with different shard counts) go to
// `skipped`.
Discovery discoverCheckpoints(const std::vector<std::string>& paths);

// Skipped paths in natural order ("checkpoint-200" before "checkpoint-1000"),
// the order kept among entries of one path.
void sortSkipped(std::vector<SkippedPath>& skipped);

// True for a Hugging Face Trainer checkpoint folder name: "checkpoint-" digits.
bool isTrainerCheckpointFolder(const std::string& name);
// True for a step folder that opens as one model (Document::isModelFolder):
// named global_stepN (DeepSpeed), step-N or step_N (torchtitan's DCP), or
// iter_N (Megatron-LM).
bool isModelStepFolder(const std::string& path);

} // namespace ckptscope
