#pragma once

#include "ckptscope/document/document.h"
#include "ckptscope/export/exporterror.h"

#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

enum class ConvertTarget { Oxck, Safetensors, Npz };

// The target a file name asks for (.oxck, .safetensors, .npz); nullopt for
// any other extension.
std::optional<ConvertTarget> convertTargetFor(const std::string& path);

// The format a target writes; nullopt for one no reader reads back (NPZ).
std::optional<Format> formatOf(ConvertTarget target);

// What a conversion of `doc` writes unless told: safetensors from an OXCK
// checkpoint, OXCK from anything else.
ConvertTarget suggestedTarget(const Document& doc);

// Why `doc` cannot be converted to `target` ("" when it can): the same
// format, a gradient checkpoint, or `outPath` naming the input file.
std::string conversionRefusal(const Document& doc, ConvertTarget target,
                              const std::string& outPath);

// Writes the conversion atomically (temporary file, fsync, rename); a failure
// or cancellation leaves no file behind. Returns the warnings. Throws
// ExportError, IoError, Cancelled, and read errors of the input.
std::vector<std::string> convertDocument(const Document& doc, ConvertTarget target,
                                         const std::string& outPath,
                                         const TaskControl& control = {},
                                         const ConvertChoice& choice = {});

// Writes the model as Hugging Face shards: NAME-0000N-of-0000M.safetensors,
// each at most maxShardBytes of tensor data (a larger tensor alone), and
// NAME.safetensors.index.json (metadata.total_size, weight_map), for outPath
// NAME.safetensors or NAME.safetensors.index.json. Each file is written
// atomically, the index last. Returns the warnings; throws as convertDocument.
std::vector<std::string> convertToShards(const Document& doc, const std::string& outPath,
                                         uint64_t maxShardBytes, const TaskControl& control = {},
                                         const ConvertChoice& choice = {});
// The index path convertToShards writes for outPath; "" for a name it refuses.
std::string shardIndexPathFor(const std::string& outPath);

// The files a document reads: the file opened and, for a sharded model,
// every shard (a conversion must write over none of them).
std::vector<std::string> inputFiles(const Document& doc);

// True when both paths name the same file (or the same path when neither
// exists yet): writes never go over the file being read.
bool sameFile(const std::string& a, const std::string& b);

} // namespace ckptscope
