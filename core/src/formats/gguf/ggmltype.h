#pragma once

#include <cstdint>
#include <span>

namespace ckptscope::gguf {

// One tensor type of ggml (ggml.h's enum ggml_type) and how it is stored:
// `blockElements` values in `blockBytes` bytes (ggml's blck_size, type_size).
struct GgmlTypeInfo {
    uint32_t id;            // ggml_type value
    const char* name;       // upper case as ggml's enum spells it: "Q4_K", "IQ2_XXS"
    uint32_t blockElements; // 1 for F32/F16/BF16/F64/I8..I64; 32, 64, 128 or 256 for blocks
    uint32_t blockBytes;    // bytes per block (sizeof(block_xxx))
    bool dequantizable;     // false only for Q8_1 (ggml has no to_float for it)
};

// nullptr for an id ggml does not define (4, 5, 31-33, 36-38 removed; >= 43).
const GgmlTypeInfo* ggmlType(uint32_t id);
// All defined types in id order (for tables, help text, tests).
std::span<const GgmlTypeInfo> ggmlTypes();

} // namespace ckptscope::gguf
