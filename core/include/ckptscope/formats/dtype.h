#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ckptscope {

// Element types of tensors. OXCK stores only F32; safetensors files may hold
// the first fifteen (FORMATS.md §3); GGUF files hold F32, F16, BF16, F64,
// I8…I64 and ggml's block-quantized types after them (§4). Values reach statistics, histograms and
// views as f32 (or f64 for F64 statistics) through the one routine per type below.
enum class Dtype : uint8_t {
    Bool,
    U8,
    I8,
    U16,
    I16,
    F16,
    BF16,
    U32,
    I32,
    F32,
    F64,
    U64,
    I64,
    F8E4M3,
    F8E5M2,
    // ggml's block types (formats/gguf/ggmltype.h: ids, block sizes).
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q8_1, // listed, never decoded: ggml has no dequantizer for it
    Q2_K,
    Q3_K,
    Q4_K,
    Q5_K,
    Q6_K,
    Q8_K,
    IQ2_XXS,
    IQ2_XS,
    IQ3_XXS,
    IQ1_S,
    IQ4_NL,
    IQ3_S,
    IQ2_S,
    IQ4_XS,
    IQ1_M,
    TQ1_0,
    TQ2_0,
    MXFP4,
    NVFP4,
    Q1_0,
    Q2_0,
    // Complex pairs (real, imaginary) of f32 / f64, as PyTorch stores them:
    // listed with their shape; their values are not decoded to one number.
    C64,
    C128,
    // Quantized integers (PyTorch's qint8, quint8, qint32: each value is
    // scale × (q − zero point), the scale and zero point beside them in the
    // pickle): listed with their shape; their values are not decoded.
    QI8,
    QU8,
    QI32,
};

// "F32", "BF16", "F8_E4M3"… as safetensors spells them; "Q4_K", "IQ2_XXS"…
// as ggml does.
const char* dtypeName(Dtype dtype);
// How a dtype is stored: `elements` values in `bytes` bytes. Every dtype
// here has a block of one element (F32 is 1 in 4, BF16 1 in 2); block-
// quantized types (GGUF's Q4_K: 256 in 144) have larger blocks, and their
// values are decoded a whole block at a time (formats/tensorvalues.h).
struct DtypeBlock {
    uint32_t elements = 1;
    uint32_t bytes = 4;
};
DtypeBlock dtypeBlock(Dtype dtype);
// Bytes per element of a one-element-block dtype; 0 for a block type (use
// dtypeBytes).
size_t dtypeSize(Dtype dtype);
// Bytes that `elements` values take: nullopt when they are not whole blocks
// or the size passes 64 bits.
std::optional<uint64_t> dtypeBytes(Dtype dtype, uint64_t elements);
// The dtype a safetensors header names; nullopt for a name we do not read
// (ggml's block types are not safetensors dtypes).
std::optional<Dtype> parseDtype(std::string_view name);
// The dtype of a ggml type id (GGUF tensor infos); nullopt for an id ggml
// does not define.
std::optional<Dtype> dtypeFromGgml(uint32_t ggmlType);
// False for a type whose values cannot be decoded to one number each (Q8_1,
// complex): readTensorValues refuses it, naming the type. Complex values are
// read as stored (readRawValues: (real, imaginary) pairs).
bool dtypeDecodable(Dtype dtype);
// True when every value of the type is exactly an f32 (F64, 32- and 64-bit
// integers may be rounded).
bool exactInF32(Dtype dtype);
bool isInteger(Dtype dtype);   // BOOL and the integer types
bool isComplex(Dtype dtype);   // C64, C128
bool isQuantized(Dtype dtype); // QI8, QU8, QI32
// The integer type a quantized type's stored codes are (QI8: I8, QU8: U8,
// QI32: I32); any other type is its own.
Dtype storedInteger(Dtype dtype);
// The type of each of a complex type's two parts (C64: F32, C128: F64): what
// a big-endian storage swaps, part by part, as torch does. Any other type
// is its own part.
Dtype complexPart(Dtype dtype);

// NumPy's type string for .npy headers ("<f4", "|b1", "<c8"…); nullptr for
// BF16, F8 and the block types, which NumPy has no type for (written as
// '<f4').
const char* npyDescr(Dtype dtype);

// Decoders of single elements, exact (every value is representable).
float halfToFloat(uint16_t bits);
float bfloat16ToFloat(uint16_t bits);
float f8e4m3ToFloat(uint8_t bits); // E4M3FN: no infinities, S.1111.111 is NaN
float f8e5m2ToFloat(uint8_t bits); // the upper byte of an F16

// n little-endian elements at src (any alignment) converted; for a block
// type n is a whole number of blocks. Throws std::invalid_argument for Q8_1.
void convertToF32(Dtype dtype, const void* src, size_t n, float* out);
void convertToF64(Dtype dtype, const void* src, size_t n, double* out);

} // namespace ckptscope
