#pragma once

#include "ckptscope/formats/dtype.h"
#include "ckptscope/formats/formatindex.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ckptscope::gguf {

// Where the block holding one element of a block-quantized tensor lies.
// ggml's rows are whole blocks, so blocks follow the flat element order.
struct BlockLocation {
    uint64_t block = 0;        // index of the block in the tensor
    uint64_t firstElement = 0; // its elements: [firstElement, firstElement + elements)
    uint32_t elements = 0;
    uint32_t bytes = 0;
    uint64_t fileOffset = 0; // of the block's first byte, in the tensor's file (its shard)
};
// nullopt when the dtype is not a block type (elements of one) or `element`
// is past the tensor's stored values.
std::optional<BlockLocation> locateBlock(const TensorEntry& tensor, uint64_t element);

// What one element of a block was made of, read from the block's bytes as
// ggml's dequantize_row_* reads them. The decoder computes
//   value = scale * level - offset
// with these floats in this order (scale and offset as it rounds them), so
// the three fields rebuild the value bit for bit.
struct BlockAnatomy {
    Dtype dtype = Dtype::F32;
    uint32_t indexInBlock = 0;
    // The block's stored scale, decoded (f16 d, Q8_K's f32 d, MXFP4's E8M0
    // or NVFP4's UE4M3 sub-block scale halved as ggml uses it), its raw bits
    // where it is a byte code (E8M0, UE4M3), and the stored minimum (Q4_1,
    // Q5_1: m, added; K-quants: dmin).
    float d = 0;
    std::optional<uint32_t> dCode;
    std::optional<float> dmin;
    // The sub-block the element is in, and its quantized scale and minimum
    // (K-quants' 4/6-bit sc and m, IQ types' 3/4-bit scales).
    std::optional<uint32_t> subBlock;
    std::optional<int> subScale;
    std::optional<int> subMin;
    // IQ types: the codebook entry (grid index), the element's byte of it,
    // and its sign bit (1: negative) where the type stores signs.
    std::optional<uint32_t> gridIndex;
    std::optional<int> gridValue;
    std::optional<uint32_t> signBit;
    // The element's quant code as stored (its codeBits bits; IQ types: the
    // grid index), what it stands for, and the float operands above.
    uint32_t code = 0;
    uint32_t codeBits = 0;
    float scale = 0;
    float level = 0;
    float offset = 0;
    // The value as the type's decoder gives it (the Values page's value).
    float value = 0;
    const char* formula = ""; // e.g. "d·sc·q − dmin·m"
};

// Precondition: `block` holds one whole block of `dtype` (dtypeBlock(dtype)
// .bytes), a decodable block type, and indexInBlock < its elements; throws
// std::invalid_argument otherwise.
BlockAnatomy blockAnatomy(Dtype dtype, std::span<const uint8_t> block, uint32_t indexInBlock);

// The anatomy as labelled rows of text for front ends ("d", "0.0123 (f16)").
struct BlockField {
    std::string name;
    std::string value;
};
std::vector<BlockField> blockFields(const BlockAnatomy& anatomy);

} // namespace ckptscope::gguf
