#include "ckptscope/formats/dtype.h"

#include "stats/statssimd.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#ifdef CKPTSCOPE_STATS_AVX2
#include <cpuid.h>
#endif

namespace ckptscope {

static_assert(std::endian::native == std::endian::little,
              "tensor data is little-endian; a big-endian port must byte-swap");

namespace {

struct Info {
    Dtype dtype;
    const char* name;
    size_t size;
    const char* npy;
};

constexpr Info kInfo[] = {
    {Dtype::Bool, "BOOL", 1, "|b1"},
    {Dtype::U8, "U8", 1, "|u1"},
    {Dtype::I8, "I8", 1, "|i1"},
    {Dtype::U16, "U16", 2, "<u2"},
    {Dtype::I16, "I16", 2, "<i2"},
    {Dtype::F16, "F16", 2, "<f2"},
    {Dtype::BF16, "BF16", 2, nullptr},
    {Dtype::U32, "U32", 4, "<u4"},
    {Dtype::I32, "I32", 4, "<i4"},
    {Dtype::F32, "F32", 4, "<f4"},
    {Dtype::F64, "F64", 8, "<f8"},
    {Dtype::U64, "U64", 8, "<u8"},
    {Dtype::I64, "I64", 8, "<i8"},
    {Dtype::F8E4M3, "F8_E4M3", 1, nullptr},
    {Dtype::F8E5M2, "F8_E5M2", 1, nullptr},
};

const Info& info(Dtype d) {
    return kInfo[size_t(d)];
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
// (tst_formatmodule compares all 65 536 with halfToFloat).
__attribute__((target("f16c,avx"))) void halfToFloatF16C(const uint8_t* p, size_t n, float* out) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h;
        std::memcpy(&h, p + 2 * i, 16);
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
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

// F16C besides the AVX2 the statistics use (stats::useAvx2, which
// CKPTSCOPE_SIMD=0 turns off, so the plain loops are tested too): CPUID leaf
// 1, ECX bit 29 (clang 14's __builtin_cpu_supports does not know "f16c").
bool haveF16C() {
    static const bool have = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return stats::useAvx2() && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
    }();
    return have;
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
            if (haveF16C())
                return halfToFloatF16C(p, n, out);
#endif
        return decodeEach<uint16_t>(p, n, out, halfToFloat);
    case Dtype::BF16:
#ifdef CKPTSCOPE_STATS_AVX2
        if constexpr (std::is_same_v<Out, float>)
            if (stats::useAvx2())
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
    }
}

} // namespace

const char* dtypeName(Dtype dtype) {
    return info(dtype).name;
}

size_t dtypeSize(Dtype dtype) {
    return info(dtype).size;
}

DtypeBlock dtypeBlock(Dtype dtype) {
    return {1, uint32_t(info(dtype).size)};
}

std::optional<uint64_t> dtypeBytes(Dtype dtype, uint64_t elements) {
    const DtypeBlock block = dtypeBlock(dtype);
    if (elements % block.elements != 0 || elements / block.elements > UINT64_MAX / block.bytes)
        return std::nullopt;
    return elements / block.elements * block.bytes;
}

std::optional<Dtype> parseDtype(std::string_view name) {
    for (const Info& i : kInfo)
        if (name == i.name)
            return i.dtype;
    return std::nullopt;
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
