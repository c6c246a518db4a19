#pragma once

#include "ckptscope/formats/dtype.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// One tensor as indexed: everything but the values.
struct TensorEntry {
    std::string name;
    std::vector<uint64_t> shape;
    uint64_t dataLen = 0;    // elements stored (of dtype)
    uint64_t dataOffset = 0; // byte offset of the first value (the first block)
    uint64_t headerOffset = 0;
    // Product of shape (0 for an empty shape); empty when it overflows u64.
    std::optional<uint64_t> elementCount;
    Dtype dtype = Dtype::F32;
};

struct IndexWarning {
    std::string message;
    std::optional<size_t> tensor; // index into tensors, when about one
};

// What a metadata value is, so front ends can show it in their own way
// without knowing which format uses which key.
enum class MetadataKind {
    Text,      // shown as stored
    Integer,   // decimal digits
    Timestamp, // Unix time in seconds, decimal
};

struct MetadataRow {
    std::string key;
    std::string value; // as stored (or, for summary fields, as the file spells them)
    MetadataKind kind = MetadataKind::Text;
};

// What a format module's opener yields: everything of a file but the values,
// in no format's terms. A tensor format fills `tensors`; a graph format
// (gradient checkpoints) fills `gradient` and `graphSplit` instead.
struct FormatIndex {
    uint32_t version = 0; // the format's own version field, 0 where it has none
    uint64_t flags = 0;
    std::vector<TensorEntry> tensors;
    std::vector<MetadataRow> metadata;
    std::vector<IndexWarning> warnings;
    std::optional<GradientCheckpoint> gradient;
    // The graph's topological order and the nodes left out of it, computed
    // once at open: a pass over a large graph costs as much as validating it.
    ComputationGraphStore::TopologicalSplit graphSplit;
};

// Product of a shape with the reference quirk (empty shape → 0); nullopt on
// u64 overflow.
std::optional<uint64_t> shapeElementCount(const std::vector<uint64_t>& shape);

// The bytes the tensor's elements take in its dtype; nullopt when unknown or
// over 64 bits.
std::optional<uint64_t> tensorSizeBytes(const TensorEntry& tensor);

} // namespace ckptscope
