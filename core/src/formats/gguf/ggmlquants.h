#pragma once

#include <cstddef>
#include <cstdint>

namespace ckptscope::gguf {

// Decodes `blocks` whole blocks of type `id` at src (any alignment, little-endian) into dst
// (blocks * blockElements floats), bit for bit as ggml's to_float / dequantize_row_*.
// Precondition: ggmlType(id) && ggmlType(id)->dequantizable.
void dequantizeBlocks(uint32_t id, const uint8_t* src, size_t blocks, float* dst);

} // namespace ckptscope::gguf
