#pragma once

#include "ckptscope/formats/dtype.h"
#include "ckptscope/formats/oxck/metadatacodec.h"
#include "ckptscope/io/bytesource.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// One tensor as indexed: everything but the values.
struct TensorEntry {
    std::string name;
    std::vector<uint64_t> shape;
    uint64_t dataLen = 0;    // f32 values stored
    uint64_t dataOffset = 0; // byte offset of the first value
    uint64_t headerOffset = 0;
    // Product of shape (0 for an empty shape); empty when it overflows u64.
    std::optional<uint64_t> elementCount;
    // Element type: always F32 in OXCK; dataLen counts elements of it.
    Dtype dtype = Dtype::F32;
};

struct IndexWarning {
    std::string message;
    std::optional<size_t> tensor; // index into tensors, when about one
};

// The header, metadata and tensor table of an OXCK file, read without
// touching the values: memory grows with the tensor count, not the file size.
struct OxckIndex {
    uint32_t version = 1;
    uint64_t flags = 0;
    Metadata metadata;
    std::vector<TensorEntry> tensors;
    std::vector<IndexWarning> warnings;
    uint64_t fileSize = 0;
    uint64_t endOffset = 0; // first byte after the last tensor
};

// Throws CheckpointError with file, offset and expectation on any fault.
OxckIndex readOxckIndex(const ByteSource& source);

// Product of a shape with the reference quirk (empty shape → 0); nullopt on
// u64 overflow.
std::optional<uint64_t> shapeElementCount(const std::vector<uint64_t>& shape);

// elementCount × the dtype's size; nullopt when unknown or over 64 bits.
std::optional<uint64_t> tensorSizeBytes(const TensorEntry& tensor);

// Copies count f32 values of a tensor starting at element `first` into out
// (unaligned-safe, little-endian). Bounds are checked against dataLen.
void readTensorValues(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                      uint64_t count, float* out);

} // namespace ckptscope
