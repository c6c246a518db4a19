#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckptscope {

// Sets of shards named as Hugging Face writes them: `model-00002-of-00004.
// safetensors` (and llama.cpp's `*-00001-of-00003.gguf`). Names only: nothing
// here reads a file but findShardedModelIn, which lists one folder.

// "model-00002-of-00004.safetensors" → stem "model", number 2, count 4,
// extension ".safetensors". The separator before the number may be '-' or
// '_'; the extension is whatever follows the count (may be empty).
struct ShardName {
    std::string stem;
    std::string extension;
    uint64_t number = 0; // N, counted from 1
    uint64_t count = 0;  // M
};

// A file name (no folders) of the form STEM-N-of-M EXT with a non-empty
// stem, 1 ≤ N ≤ M and at most 18 digits each; nullopt otherwise.
std::optional<ShardName> parseShardName(std::string_view fileName);

// The name Hugging Face writes: "model-00001-of-00003.safetensors" (numbers
// zero-padded to five digits each, as Hugging Face formats them).
std::string shardFileName(std::string_view stem, uint64_t number, uint64_t count,
                          std::string_view extension);

// Why a shard name read from a file (an index's weight_map) may not be
// opened, "" when it may: a shard is a plain relative name inside the index's
// folder — not empty, no absolute path, no ".." or "." component, no scheme
// ("http:", "file:", a drive letter), no backslash, no percent sign (a URL's
// "%2e%2e" is ".." to the server) and no control character. A sub-folder is
// fine. The one rule for every index of shards.
std::string shardNameProblem(std::string_view name);

// Where `path` really lies when, symbolic links resolved, it is outside
// `folder` (a link leading out); "" when it stays inside. With
// shardNameProblem, the rule for every name a file gives of another file.
std::string pathLeavingFolder(const std::string& folder, const std::string& path);

// The index Hugging Face writes beside the shards of STEM: STEM + ".safetensors.index.json".
inline constexpr std::string_view kShardIndexSuffix = ".safetensors.index.json";
std::string shardIndexName(std::string_view stem);
bool isShardIndexName(std::string_view fileName);

// The shards of one set (same stem, count and extension) found among a
// folder's names.
struct ShardSet {
    std::string stem;
    std::string extension;
    uint64_t count = 0;
    std::vector<std::string> files;   // the names found, by shard number
    std::vector<uint64_t> missing;    // numbers with no file, ascending
    std::vector<uint64_t> duplicated; // numbers given by two names (00001 and 0001)

    bool complete() const { return missing.empty() && duplicated.empty(); }
    // Why the set cannot be read as one model ("" when complete), e.g.
    // "incomplete set of shards: 1 of 2 found (model-00002-of-00002.safetensors missing)".
    std::string problem() const;
};

struct ShardGroups {
    std::vector<ShardSet> sets;      // by stem, extension, then count
    std::vector<std::string> others; // the names that are no shard, in the order given
};

// Groups names (of one folder) into shard sets. With `extension` given
// (".safetensors"), only shards with that extension are grouped and other
// names go to `others`.
ShardGroups groupShards(const std::vector<std::string>& fileNames, std::string_view extension = {});

// A folder as one sharded model, from its names.
struct ShardedFolder {
    std::string index;           // the one `*.safetensors.index.json` (name only), or ""
    std::optional<ShardSet> set; // without an index: the one complete shard set
    // Why the folder's shards are not one model: several index files, an
    // incomplete set, shards of several sets. "" when it is a model, or
    // when it holds no index and no shard at all.
    std::string problem;

    bool isModel() const { return !index.empty() || set.has_value(); }
};

// Exactly one index file makes the folder a model (the index then says
// which shards belong, whatever else lies there); without one, exactly one
// complete shard set of `extension` does.
ShardedFolder findShardedModel(const std::vector<std::string>& fileNames,
                               std::string_view extension = ".safetensors");
// The same over the names of the regular files directly in `folder` (names
// starting with '.' — a writer's temporaries — are passed over). A folder
// that cannot be listed gives the reason in `problem`.
ShardedFolder findShardedModelIn(const std::string& folder,
                                 std::string_view extension = ".safetensors");

} // namespace ckptscope
