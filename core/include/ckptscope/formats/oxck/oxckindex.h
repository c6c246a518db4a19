#pragma once

#include "ckptscope/formats/formatindex.h"
#include "ckptscope/formats/oxck/metadatacodec.h"
#include "ckptscope/io/bytesource.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

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

} // namespace ckptscope
