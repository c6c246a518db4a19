#include "ckptscope/formats/dtype.h"

#include "common/simd.h"
#include "formats/gguf/ggmlquants.h"
#include "formats/gguf/ggmltype.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ckptscope {

static_assert(std::endian::native == std::endian::little,
              "tensor data is little-endian; a big-endian port must byte-swap");

namespace {

constexpr int kNoGgml = -1;

// Block types take their name and block from ggml's table (ggmlType), so
// their rows here carry only the ggml id.
struct Info {
    Dtype dtype;
    const char* name; // null for a ggml block type
    size_t size;      // 0 for a ggml block type
    const char* npy;
    int ggml;
};

constexpr Info kInfo[] = {
    {Dtype::Bool, "BOOL", 1, "|b1", kNoGgml},
    {Dtype::U8, "U8", 1, "|u1", kNoGgml},
    {Dtype::I8, "I8", 1, "|i1", 24},
    {Dtype::U16, "U16", 2, "<u2", kNoGgml},
    {Dtype::I16, "I16", 2, "<i2", 25},
    {Dtype::F16, "F16", 2, "<f2", 1},
    {Dtype::BF16, "BF16", 2, nullptr, 30},
    {Dtype::U32, "U32", 4, "<u4", kNoGgml},
    {Dtype::I32, "I32", 4, "<i4", 26},
    {Dtype::F32, "F32", 4, "<f4", 0},
    {Dtype::F64, "F64", 8, "<f8", 28},
    {Dtype::U64, "U64", 8, "<u8", kNoGgml},
    {Dtype::I64, "I64", 8, "<i8", 27},
    {Dtype::F8E4M3, "F8_E4M3", 1, nullptr, kNoGgml},
    {Dtype::F8E5M2, "F8_E5M2", 1, nullptr, kNoGgml},
    {Dtype::Q4_0, nullptr, 0, nullptr, 2},
    {Dtype::Q4_1, nullptr, 0, nullptr, 3},
    {Dtype::Q5_0, nullptr, 0, nullptr, 6},
    {Dtype::Q5_1, nullptr, 0, nullptr, 7},
    {Dtype::Q8_0, nullptr, 0, nullptr, 8},
    {Dtype::Q8_1, nullptr, 0, nullptr, 9},
    {Dtype::Q2_K, nullptr, 0, nullptr, 10},
    {Dtype::Q3_K, nullptr, 0, nullptr, 11},
    {Dtype::Q4_K, nullptr, 0, nullptr, 12},
    {Dtype::Q5_K, nullptr, 0, nullptr, 13},
    {Dtype::Q6_K, nullptr, 0, nullptr, 14},
    {Dtype::Q8_K, nullptr, 0, nullptr, 15},
    {Dtype::IQ2_XXS, nullptr, 0, nullptr, 16},
    {Dtype::IQ2_XS, nullptr, 0, nullptr, 17},
    {Dtype::IQ3_XXS, nullptr, 0, nullptr, 18},
    {Dtype::IQ1_S, nullptr, 0, nullptr, 19},
    {Dtype::IQ4_NL, nullptr, 0, nullptr, 20},
    {Dtype::IQ3_S, nullptr, 0, nullptr, 21},
    {Dtype::IQ2_S, nullptr, 0, nullptr, 22},
    {Dtype::IQ4_XS, nullptr, 0, nullptr, 23},
    {Dtype::IQ1_M, nullptr, 0, nullptr, 29},
    {Dtype::TQ1_0, nullptr, 0, nullptr, 34},
    {Dtype::TQ2_0, nullptr, 0, nullptr, 35},
    {Dtype::MXFP4, nullptr, 0, nullptr, 39},
    {Dtype::NVFP4, nullptr, 0, nullptr, 40},
    {Dtype::Q1_0, nullptr, 0, nullptr, 41},
    {Dtype::Q2_0, nullptr, 0, nullptr, 42},
    {Dtype::C64, "C64", 8, "<c8", kNoGgml},
    {Dtype::C128, "C128", 16, "<c16", kNoGgml},
    {Dtype::QI8, "QINT8", 1, nullptr, kNoGgml},
    {Dtype::QU8, "QUINT8", 1, nullptr, kNoGgml},
    {Dtype::QI32, "QINT32", 4, nullptr, kNoGgml},
};

const Info& info(Dtype d) {
    return kInfo[size_t(d)];
}

// ggml's row for a block type (every block type's id is in its table).
const gguf::GgmlTypeInfo& ggml(Dtype d) {
    const gguf::GgmlTypeInfo* t = gguf::ggmlType(uint32_t(info(d).ggml));
    if (!t)
        throw std::logic_error("dtype: a block type ggml does not define");
    return *t;
}

// Whole blocks of a ggml type dequantized by ggml's reference decoder, in
// f32 (ggml's to_float); in double through a small f32 buffer, exactly.
template <typename Out> void decodeBlocks(Dtype d, const uint8_t* p, size_t n, Out* out) {
    const gguf::GgmlTypeInfo& t = ggml(d);
    if (!t.dequantizable)
        throw std::invalid_argument(std::string("values of type ") + t.name +
                                    " cannot be read: ggml has no decoder for it");
    if constexpr (std::is_same_v<Out, float>) {
        gguf::dequantizeBlocks(t.id, p, n / t.blockElements, out);
    } else {
        float buffer[4096];
        const size_t perChunk = sizeof buffer / sizeof(float) / t.blockElements;
        for (size_t done = 0; done < n / t.blockElements;) {
            const size_t blocks = std::min(perChunk, n / t.blockElements - done);
            gguf::dequantizeBlocks(t.id, p + done * t.blockBytes, blocks, buffer);
            std::copy_n(buffer, blocks * t.blockElements, out + done * t.blockElements);
            done += blocks;
        }
    }
}

template <typename T> T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// n elements of one stored type, each turned into Out by `decode`: a plain
// loop the compiler vectorises (no switch per element).
template <typename Stored, typename Out, typename Decode>
void decodeEach(const uint8_t* p, size_t n, Out* out, Decode decode) {
    for (size_t i = 0; i < n; ++i)
        out[i] = Out(decode(load<Stored>(p + i * sizeof(Stored))));
}

const auto kAsIs = [](auto v) { return v; };

// The 256 values of an 8-bit float type, decoded once.
template <float (*Decode)(uint8_t)> const float* byteTable() {
    static const auto table = [] {
        std::array<float, 256> t{};
        for (size_t b = 0; b < 256; ++b)
            t[b] = Decode(uint8_t(b));
        return t;
    }();
    return table.data();
}

#ifdef CKPTSCOPE_STATS_AVX2
// F16 to f32 by the F16C instruction, eight at a time: exact for every half
// (tst_formatmodule compares all 65 536 with halfToFloat, bit for bit). The
// instruction quiets a signaling NaN; its quiet bit is cleared again, so a
// value reads the same whichever path (vector or tail) decodes it.
__attribute__((target("f16c,avx2"))) void halfToFloatF16C(const uint8_t* p, size_t n, float* out) {
    const __m256i expAndQuiet = _mm256_set1_epi32(0x7e00), signaling = _mm256_set1_epi32(0x7c00);
    const __m256i payload = _mm256_set1_epi32(0x01ff), quietF32 = _mm256_set1_epi32(0x00400000);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h;
        std::memcpy(&h, p + 2 * i, 16);
        const __m256i w = _mm256_cvtepu16_epi32(h);
        const __m256i sNaN = _mm256_andnot_si256(
            _mm256_cmpeq_epi32(_mm256_and_si256(w, payload), _mm256_setzero_si256()),
            _mm256_cmpeq_epi32(_mm256_and_si256(w, expAndQuiet), signaling));
        const __m256i f = _mm256_castps_si256(_mm256_cvtph_ps(h));
        _mm256_storeu_ps(
            out + i, _mm256_castsi256_ps(_mm256_andnot_si256(_mm256_and_si256(sNaN, quietF32), f)));
    }
    for (; i < n; ++i)
        out[i] = halfToFloat(load<uint16_t>(p + 2 * i));
}

// BF16 to f32: each value is the upper half of an f32, eight at a time.
__attribute__((target("avx2"))) void bfloat16ToFloatAvx2(const uint8_t* p, size_t n, float* out) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h;
        std::memcpy(&h, p + 2 * i, 16);
        const __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
        _mm256_storeu_ps(out + i, _mm256_castsi256_ps(w));
    }
    for (; i < n; ++i)
        out[i] = bfloat16ToFloat(load<uint16_t>(p + 2 * i));
}

#endif

template <typename Out> void convert(Dtype d, const void* src, size_t n, Out* out) {
    const auto* p = static_cast<const uint8_t*>(src);
    switch (d) {
    case Dtype::Bool:
        return decodeEach<uint8_t>(p, n, out, [](uint8_t b) { return b ? 1 : 0; });
    case Dtype::U8:
        return decodeEach<uint8_t>(p, n, out, kAsIs);
    case Dtype::I8:
        return decodeEach<int8_t>(p, n, out, kAsIs);
    case Dtype::U16:
        return decodeEach<uint16_t>(p, n, out, kAsIs);
    case Dtype::I16:
        return decodeEach<int16_t>(p, n, out, kAsIs);
    case Dtype::F16:
#ifdef CKPTSCOPE_STATS_AVX2
        if constexpr (std::is_same_v<Out, float>)
            if (simd::useF16C())
                return halfToFloatF16C(p, n, out);
#endif
        return decodeEach<uint16_t>(p, n, out, halfToFloat);
    case Dtype::BF16:
#ifdef CKPTSCOPE_STATS_AVX2
        if constexpr (std::is_same_v<Out, float>)
            if (simd::useAvx2())
                return bfloat16ToFloatAvx2(p, n, out);
#endif
        return decodeEach<uint16_t>(p, n, out, bfloat16ToFloat);
    case Dtype::U32:
        return decodeEach<uint32_t>(p, n, out, kAsIs);
    case Dtype::I32:
        return decodeEach<int32_t>(p, n, out, kAsIs);
    case Dtype::F32:
        if constexpr (std::is_same_v<Out, float>)
            return void(std::memcpy(out, p, n * 4));
        return decodeEach<float>(p, n, out, kAsIs);
    case Dtype::F64:
        return decodeEach<double>(p, n, out, kAsIs);
    case Dtype::U64:
        return decodeEach<uint64_t>(p, n, out, kAsIs);
    case Dtype::I64:
        return decodeEach<int64_t>(p, n, out, kAsIs);
    case Dtype::F8E4M3:
        return decodeEach<uint8_t>(p, n, out,
                                   [t = byteTable<f8e4m3ToFloat>()](uint8_t b) { return t[b]; });
    case Dtype::F8E5M2:
        return decodeEach<uint8_t>(p, n, out,
                                   [t = byteTable<f8e5m2ToFloat>()](uint8_t b) { return t[b]; });
    case Dtype::Q4_0:
    case Dtype::Q4_1:
    case Dtype::Q5_0:
    case Dtype::Q5_1:
    case Dtype::Q8_0:
    case Dtype::Q8_1:
    case Dtype::Q2_K:
    case Dtype::Q3_K:
    case Dtype::Q4_K:
    case Dtype::Q5_K:
    case Dtype::Q6_K:
    case Dtype::Q8_K:
    case Dtype::IQ2_XXS:
    case Dtype::IQ2_XS:
    case Dtype::IQ3_XXS:
    case Dtype::IQ1_S:
    case Dtype::IQ4_NL:
    case Dtype::IQ3_S:
    case Dtype::IQ2_S:
    case Dtype::IQ4_XS:
    case Dtype::IQ1_M:
    case Dtype::TQ1_0:
    case Dtype::TQ2_0:
    case Dtype::MXFP4:
    case Dtype::NVFP4:
    case Dtype::Q1_0:
    case Dtype::Q2_0:
        return decodeBlocks(d, p, n, out);
    case Dtype::C64:
    case Dtype::C128:
        throw std::invalid_argument(std::string(dtypeName(d)) +
                                    " values are pairs, not one number each");
    case Dtype::QI8:
    case Dtype::QU8:
    case Dtype::QI32:
        throw std::invalid_argument(std::string(dtypeName(d)) +
                                    " values need their scale and zero point");
    }
}

} // namespace

const char* dtypeName(Dtype dtype) {
    return info(dtype).name ? info(dtype).name : ggml(dtype).name;
}

size_t dtypeSize(Dtype dtype) {
    return info(dtype).size;
}

DtypeBlock dtypeBlock(Dtype dtype) {
    if (info(dtype).size == 0)
        return {ggml(dtype).blockElements, ggml(dtype).blockBytes};
    return {1, uint32_t(info(dtype).size)};
}

static_assert(
    [] {
        for (size_t i = 0; i < std::size(kInfo); ++i)
            if (size_t(kInfo[i].dtype) != i)
                return false;
        return std::size(kInfo) == size_t(Dtype::QI32) + 1;
    }(),
    "kInfo lists every dtype, in enum order");

std::optional<uint64_t> dtypeBytes(Dtype dtype, uint64_t elements) {
    const DtypeBlock block = dtypeBlock(dtype);
    if (elements % block.elements != 0 || elements / block.elements > UINT64_MAX / block.bytes)
        return std::nullopt;
    return elements / block.elements * block.bytes;
}

std::optional<Dtype> parseDtype(std::string_view name) {
    for (const Info& i : kInfo)
        if (i.name && name == i.name && !isQuantized(i.dtype)) // torch's own, no safetensors dtype
            return i.dtype;
    return std::nullopt;
}

std::optional<Dtype> dtypeFromGgml(uint32_t ggmlType) {
    for (const Info& i : kInfo)
        if (i.ggml >= 0 && uint32_t(i.ggml) == ggmlType)
            return i.dtype;
    return std::nullopt;
}

bool dtypeDecodable(Dtype dtype) {
    if (isComplex(dtype) || isQuantized(dtype))
        return false;
    return info(dtype).size != 0 ? true : ggml(dtype).dequantizable;
}

bool isComplex(Dtype dtype) {
    return dtype == Dtype::C64 || dtype == Dtype::C128;
}

bool isQuantized(Dtype dtype) {
    return dtype == Dtype::QI8 || dtype == Dtype::QU8 || dtype == Dtype::QI32;
}

Dtype storedInteger(Dtype dtype) {
    switch (dtype) {
    case Dtype::QI8:
        return Dtype::I8;
    case Dtype::QU8:
        return Dtype::U8;
    case Dtype::QI32:
        return Dtype::I32;
    default:
        return dtype;
    }
}

Dtype complexPart(Dtype dtype) {
    return dtype == Dtype::C64 ? Dtype::F32 : dtype == Dtype::C128 ? Dtype::F64 : dtype;
}

bool exactInF32(Dtype dtype) {
    switch (dtype) {
    case Dtype::U32:
    case Dtype::I32:
    case Dtype::U64:
    case Dtype::I64:
    case Dtype::F64:
        return false;
    default:
        return true;
    }
}

bool isInteger(Dtype dtype) {
    switch (dtype) {
    case Dtype::Bool:
    case Dtype::U8:
    case Dtype::I8:
    case Dtype::U16:
    case Dtype::I16:
    case Dtype::U32:
    case Dtype::I32:
    case Dtype::U64:
    case Dtype::I64:
        return true;
    default:
        return false;
    }
}

const char* npyDescr(Dtype dtype) {
    return info(dtype).npy;
}

float halfToFloat(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13); // Inf, NaN (payload kept)
    } else if (exp != 0) {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;
    } else {
        // Subnormal half: mant × 2^-24, exact in f32.
        const float v = std::ldexp(float(mant), -24);
        return sign ? -v : v;
    }
    return std::bit_cast<float>(bits);
}

float bfloat16ToFloat(uint16_t bits) {
    return std::bit_cast<float>(uint32_t(bits) << 16);
}

float f8e4m3ToFloat(uint8_t b) {
    const bool negative = b & 0x80;
    const int exp = (b >> 3) & 0xf;
    const int mant = b & 7;
    float v;
    if (exp == 0xf && mant == 7)
        v = std::numeric_limits<float>::quiet_NaN();
    else if (exp == 0)
        v = std::ldexp(float(mant), -9); // subnormal: mant/8 × 2^(1-7)
    else
        v = std::ldexp(float(8 + mant), exp - 7 - 3);
    return negative ? -v : v;
}

float f8e5m2ToFloat(uint8_t bits) {
    return halfToFloat(uint16_t(bits) << 8);
}

void convertToF32(Dtype dtype, const void* src, size_t n, float* out) {
    convert(dtype, src, n, out);
}

void convertToF64(Dtype dtype, const void* src, size_t n, double* out) {
    convert(dtype, src, n, out);
}

} // namespace ckptscope
