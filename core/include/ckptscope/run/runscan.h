#pragma once

#include "ckptscope/document/document.h"

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
};

// A checkpoint as found on disk, before anything but its first bytes was
// read: a file, the shards of one checkpoint (`…-00001-of-00004.…`), or a
// Hugging Face Trainer `checkpoint-N` folder (the checkpoint files directly
// in it).
struct CheckpointCandidate {
    std::string path;                 // the file, the first shard, or the folder
    std::string name;                 // its base name: order and file-name steps
    std::vector<CandidateFile> files; // name order (shards in shard order)
};

struct Discovery {
    std::vector<CheckpointCandidate> candidates; // by name, then path
    std::vector<SkippedPath> skipped;
};

// Expands PATHs: a folder gives the regular files directly in it (recognised
// by content, whatever their extension; names starting with '.' — a
// writer's temporaries — are passed over) and its `checkpoint-N` subfolders
// (other subfolders are not entered); a file gives itself. A file reached
// twice (same device and inode) counts once. Missing paths, files that are no
// checkpoint and incomplete shard sets go to `skipped`.
Discovery discoverCheckpoints(const std::vector<std::string>& paths);

// True for a Hugging Face Trainer checkpoint folder name: "checkpoint-" digits.
bool isTrainerCheckpointFolder(const std::string& name);

} // namespace ckptscope
