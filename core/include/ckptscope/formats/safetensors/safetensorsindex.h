#pragma once

#include "ckptscope/formats/oxck/oxckindex.h"
#include "ckptscope/io/bytesource.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ckptscope {

// Limits of the reference reader (Hugging Face safetensors).
inline constexpr uint64_t kSafetensorsMaxHeader = 100'000'000;

// The header of a safetensors file (FORMATS.md §3), read without touching the
// data: memory grows with the header, not the file.
struct SafetensorsIndex {
    uint64_t headerLength = 0; // N
    uint64_t dataStart = 0;    // 8 + N
    // __metadata__, keys sorted.
    std::vector<std::pair<std::string, std::string>> metadata;
    // In the order of their data (by offset). dataLen and elementCount are
    // the element count (1 for a scalar []), dataOffset is absolute.
    std::vector<TensorEntry> tensors;
};

// The content probe: the first 8 bytes give 2 ≤ N ≤ 100 000 000 and byte 8
// is '{'. Reads at most 9 bytes.
bool looksLikeSafetensors(const ByteSource& source);
// Which probe rule the file breaks ("" when it passes), for files named
// .safetensors that fail it.
std::string safetensorsProbeFailure(const ByteSource& source);

// Throws CheckpointError naming the file, the place (byte offset, header
// line and column, tensor) and what was expected.
SafetensorsIndex readSafetensorsIndex(const ByteSource& source);

} // namespace ckptscope
