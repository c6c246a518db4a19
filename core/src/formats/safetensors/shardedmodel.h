#pragma once

#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/formats/safetensors/shardset.h"

#include <string>

namespace ckptscope {

// A sharded safetensors model opened by its index (`*.safetensors.index.json`,
// recognised by content: a JSON object with "weight_map"): one FormatIndex
// of all the shards' tensors, each knowing its shard (docs/FORMATS.md).
FormatModule shardedSafetensorsFormat();
// The same for PyTorch shards (`pytorch_model.bin.index.json`: an index
// whose weight_map names .bin, .pt or .pth files), read by the PyTorch module.
FormatModule shardedPytorchFormat();

// The same model from a folder's complete shard set without an index:
// shards in number order, every tensor of each.
FormatIndex openShardSet(const std::string& folder, const ShardSet& set);

// The warning of a shard opened alone ("one of M shards of a sharded model;
// the whole model is NAME.safetensors.index.json"), with the index or folder
// to open in `opens`; nullopt when the file's name is no shard's.
std::optional<IndexWarning> loneShardWarning(const std::string& path);

} // namespace ckptscope
