#pragma once

// What the block decoders (ggmlquants.cpp, ggmliquants.cpp, ggmlquantsavx2.cpp)
// share: fields of a block read at any alignment, scale decoders, and the loop
// over blocks.
#include "ckptscope/formats/dtype.h"
#include "common/simd.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace ckptscope::gguf::blocks {

inline uint16_t u16At(const uint8_t* p) {
    return valueAt(reinterpret_cast<const uint16_t*>(p), 0);
}
inline uint32_t u32At(const uint8_t* p) {
    return valueAt(reinterpret_cast<const uint32_t*>(p), 0);
}
inline float f16At(const uint8_t* p) {
    return halfToFloat(u16At(p));
}

// E8M0 scale halved (ggml_e8m0_to_fp32_half): 2^(e-128); e < 2 gives subnormals.
inline float e8m0Half(uint8_t e) {
    const uint32_t bits = e < 2 ? uint32_t(0x00200000) << e : uint32_t(e - 1) << 23;
    return std::bit_cast<float>(bits);
}

// UE4M3 scale halved (ggml_ue4m3_to_fp32); 0 and 0x7F are zero, bit 7 ignored.
inline float ue4m3Half(uint8_t x) {
    if (x == 0 || x == 0x7F)
        return 0.0f;
    const int exp = (x >> 3) & 0xF;
    const int man = x & 0x7;
    const float raw =
        exp == 0 ? std::ldexp(float(man), -9) : std::ldexp(1.0f + float(man) / 8.0f, exp - 7);
    return raw * 0.5f;
}
// ue4m3Half of every byte, computed once (ldexp is a library call; NVFP4
// takes a scale per 16 values).
inline float ue4m3HalfOf(uint8_t x) {
    static const auto table = [] {
        std::array<float, 256> t{};
        for (size_t b = 0; b < t.size(); ++b)
            t[b] = ue4m3Half(uint8_t(b));
        return t;
    }();
    return table[x];
}

// Q3_K's sixteen 6-bit scales from its 12 bytes, minus 32.
inline void q3kScales(const uint8_t* packed, int* scales) {
    for (int k = 0; k < 16; ++k) {
        const int low = k < 8 ? packed[k] & 0xF : packed[k - 8] >> 4;
        const int high = (packed[8 + k % 4] >> (2 * (k / 4))) & 3;
        scales[k] = (low | (high << 4)) - 32;
    }
}

// 6-bit scale and min j of Q4_K / Q5_K (ggml's get_scale_min_k4).
inline void scaleMinK4(int j, const uint8_t* q, int& scale, int& min) {
    if (j < 4) {
        scale = q[j] & 63;
        min = q[j + 4] & 63;
    } else {
        scale = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// d * scale and dmin * min of sub-blocks is and is + 1 of Q4_K / Q5_K.
struct ScalePair {
    float d1, m1, d2, m2;
};
inline ScalePair scalePairK4(float d, float min, const uint8_t* scales, int is) {
    int sc = 0, m = 0;
    scaleMinK4(is, scales, sc, m);
    ScalePair p{d * float(sc), min * float(m), 0, 0};
    scaleMinK4(is + 1, scales, sc, m);
    p.d2 = d * float(sc);
    p.m2 = min * float(m);
    return p;
}

using Decoder = void (*)(const uint8_t* block, float* values);

template <uint32_t Bytes, uint32_t Elements, Decoder Decode>
void eachBlockPlain(const uint8_t* src, size_t blocks, float* dst) {
    for (size_t i = 0; i < blocks; ++i)
        Decode(src + i * Bytes, dst + i * Elements);
}

#ifdef CKPTSCOPE_STATS_AVX2
// The same loop with the decoder inlined into AVX2 code: the compiler
// vectorises its element loops eight wide. The same source, so the same
// operations: the results are the plain loop's (the files are compiled with
// -ffp-contract=off, so FMA being available fuses nothing).
template <uint32_t Bytes, uint32_t Elements, Decoder Decode>
__attribute__((target("avx2,fma"), flatten)) void eachBlockAvx2(const uint8_t* src, size_t blocks,
                                                                float* dst) {
    for (size_t i = 0; i < blocks; ++i)
        Decode(src + i * Bytes, dst + i * Elements);
}
#endif

// `blocks` blocks of one type decoded, by the AVX2 loop when `wide`: one
// branch per call, none per element.
template <uint32_t Bytes, uint32_t Elements, Decoder Decode>
void eachBlock(const uint8_t* src, size_t blocks, float* dst, bool wide) {
#ifdef CKPTSCOPE_STATS_AVX2
    if (wide)
        return eachBlockAvx2<Bytes, Elements, Decode>(src, blocks, dst);
#endif
    (void)wide;
    eachBlockPlain<Bytes, Elements, Decode>(src, blocks, dst);
}

// dequantizeBlocks with the AVX2 code (`wide`, only where stats::useAvx2())
// or without: tests compare the two in one process.
void dequantizeWith(uint32_t id, const uint8_t* src, size_t blocks, float* dst, bool wide);

// The i-quants (IQ1_S … IQ4_XS) and the ternary types (TQ1_0, TQ2_0), in
// ggmliquants.cpp; false for any other id.
bool dequantizeIqBlocks(uint32_t id, const uint8_t* src, size_t blocks, float* dst, bool wide);

#ifdef CKPTSCOPE_STATS_AVX2
// The most common types by AVX2 code written out (ggmlquantsavx2.cpp): Q1_0,
// Q4_0, Q8_0, Q4_K, Q6_K and the 4-bit types of 32-value blocks (Q4_1, Q5_0,
// Q5_1, IQ4_NL, IQ4_XS, MXFP4, NVFP4); false for any other id. Call only when the CPU
// has AVX2.
bool dequantizeAvx2(uint32_t id, const uint8_t* src, size_t blocks, float* dst);
#endif

} // namespace ckptscope::gguf::blocks
