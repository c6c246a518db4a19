#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ckptscope {

// Element types of tensors. OXCK stores only F32; safetensors files may hold
// any of these (FORMATS.md §3). Values reach statistics, histograms and views
// as f32 (or f64 for F64 statistics) through the one routine per type below.
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
};

// "F32", "BF16", "F8_E4M3"… as safetensors spells them.
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
// Bytes per element of a one-element-block dtype (all of the above).
size_t dtypeSize(Dtype dtype);
// Bytes that `elements` values take: nullopt when they are not whole blocks
// or the size passes 64 bits.
std::optional<uint64_t> dtypeBytes(Dtype dtype, uint64_t elements);
// The dtype a safetensors header names; nullopt for a name we do not read.
std::optional<Dtype> parseDtype(std::string_view name);
// True when every value of the type is exactly an f32 (F64, 32- and 64-bit
// integers may be rounded).
bool exactInF32(Dtype dtype);
bool isInteger(Dtype dtype); // BOOL and the integer types

// NumPy's type string for .npy headers ("<f4", "|b1"…); nullptr for BF16,
// which NumPy has no type for.
const char* npyDescr(Dtype dtype);

// Decoders of single elements, exact (every value is representable).
float halfToFloat(uint16_t bits);
float bfloat16ToFloat(uint16_t bits);
float f8e4m3ToFloat(uint8_t bits); // E4M3FN: no infinities, S.1111.111 is NaN
float f8e5m2ToFloat(uint8_t bits); // the upper byte of an F16

// n little-endian elements at src (any alignment) converted.
void convertToF32(Dtype dtype, const void* src, size_t n, float* out);
void convertToF64(Dtype dtype, const void* src, size_t n, double* out);

} // namespace ckptscope
