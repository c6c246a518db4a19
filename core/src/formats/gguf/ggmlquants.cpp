#include "formats/gguf/ggmlquants.h"

#include "formats/gguf/ggmlblocks.h"
#include "formats/gguf/ggmltables.h"

#include <array>
#include <bit>
#include <cmath>

// Every decoder here and in ggmliquants.cpp repeats the float operations of
// ggml's dequantize_row_* (ggml-quants.c) in the same order, so the results
// are bit for bit ggml's: products are rounded one at a time (both files are
// compiled with -ffp-contract=off; ggml's reference rounds `d * q - m` twice
// as well), and ints become floats where ggml converts them. Block layouts
// are those of ggml-common.h; offsets are written out as numbers of bytes.

namespace ckptscope::gguf {

namespace {

using namespace blocks;

// Sign masks of the eight values a Q1_0 byte holds: bit i clear, value i
// negative (the f32 sign bit set).
constexpr auto kQ1SignMasks = [] {
    std::array<std::array<uint32_t, 8>, 256> masks{};
    for (uint32_t byte = 0; byte < 256; ++byte)
        for (uint32_t i = 0; i < 8; ++i)
            masks[byte][i] = ((byte >> i) & 1) ? 0 : 0x80000000u;
    return masks;
}();

// Q1_0: f16 d, 128 sign bits; a set bit is d, a clear one -d (ggml's `-d`:
// the sign flipped, as the mask does).
void decodeQ1_0(const uint8_t* __restrict b, float* __restrict y) {
    const uint32_t d = std::bit_cast<uint32_t>(f16At(b));
    const uint8_t* qs = b + 2;
    for (int k = 0; k < 16; ++k)
        for (int i = 0; i < 8; ++i)
            y[8 * k + i] = std::bit_cast<float>(d ^ kQ1SignMasks[qs[k]][size_t(i)]);
}

// Q2_0: f16 d, 2-bit codes q, value (q - 1) * d.
void decodeQ2_0(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const uint8_t* qs = b + 2;
    for (int k = 0; k < 16; ++k)
        for (int i = 0; i < 4; ++i)
            y[4 * k + i] = float(((qs[k] >> (2 * i)) & 3) - 1) * d;
}

void decodeQ4_0(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const uint8_t* qs = b + 2;
    for (int j = 0; j < 16; ++j)
        y[j] = float((qs[j] & 0x0F) - 8) * d;
    for (int j = 0; j < 16; ++j)
        y[j + 16] = float((qs[j] >> 4) - 8) * d;
}

void decodeQ4_1(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const float m = f16At(b + 2);
    const uint8_t* qs = b + 4;
    for (int j = 0; j < 16; ++j)
        y[j] = float(qs[j] & 0x0F) * d + m;
    for (int j = 0; j < 16; ++j)
        y[j + 16] = float(qs[j] >> 4) * d + m;
}

// Fifth bits of Q5_0 / Q5_1: element j's in bit j of qh.
int q5Low(uint32_t qh, const uint8_t* qs, int j) {
    return (qs[j] & 0x0F) | int(((qh >> j) << 4) & 0x10);
}
int q5High(uint32_t qh, const uint8_t* qs, int j) {
    return (qs[j] >> 4) | int((qh >> (j + 12)) & 0x10);
}

void decodeQ5_0(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const uint32_t qh = u32At(b + 2);
    const uint8_t* qs = b + 6;
    for (int j = 0; j < 16; ++j)
        y[j] = float(q5Low(qh, qs, j) - 16) * d;
    for (int j = 0; j < 16; ++j)
        y[j + 16] = float(q5High(qh, qs, j) - 16) * d;
}

void decodeQ5_1(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const float m = f16At(b + 2);
    const uint32_t qh = u32At(b + 4);
    const uint8_t* qs = b + 8;
    for (int j = 0; j < 16; ++j)
        y[j] = float(q5Low(qh, qs, j)) * d + m;
    for (int j = 0; j < 16; ++j)
        y[j + 16] = float(q5High(qh, qs, j)) * d + m;
}

void decodeQ8_0(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const int8_t* qs = reinterpret_cast<const int8_t*>(b + 2);
    for (int j = 0; j < 32; ++j)
        y[j] = float(qs[j]) * d;
}

void decodeMxfp4(const uint8_t* __restrict b, float* __restrict y) {
    const float d = e8m0Half(b[0]);
    const uint8_t* qs = b + 1;
    for (int j = 0; j < 16; ++j)
        y[j] = float(kValuesFp4[qs[j] & 0x0F]) * d;
    for (int j = 0; j < 16; ++j)
        y[j + 16] = float(kValuesFp4[qs[j] >> 4]) * d;
}

// NVFP4: four sub-blocks of 16, each with its UE4M3 scale.
void decodeNvfp4(const uint8_t* __restrict b, float* __restrict y) {
    for (int s = 0; s < 4; ++s) {
        const float d = ue4m3HalfOf(b[s]);
        const uint8_t* qs = b + 4 + s * 8;
        float* ys = y + s * 16;
        for (int j = 0; j < 8; ++j) {
            ys[j] = float(kValuesFp4[qs[j] & 0x0F]) * d;
            ys[j + 8] = float(kValuesFp4[qs[j] >> 4]) * d;
        }
    }
}

// Q2_K: scales[16] (4-bit scale, 4-bit min), qs[64], f16 d, f16 dmin.
void decodeQ2_K(const uint8_t* __restrict b, float* __restrict y) {
    const uint8_t* scales = b;
    const uint8_t* q = b + 16;
    const float d = f16At(b + 80);
    const float min = f16At(b + 82);
    int is = 0;
    for (int n = 0; n < 256; n += 128, q += 32) {
        for (int shift = 0; shift < 8; shift += 2) {
            for (int half = 0; half < 32; half += 16) {
                const uint8_t sc = scales[is++];
                const float dl = d * float(sc & 0xF);
                const float ml = min * float(sc >> 4);
                for (int l = 0; l < 16; ++l)
                    *y++ = dl * float((q[l + half] >> shift) & 3) - ml;
            }
        }
    }
}

// Q3_K: hmask[32], qs[64], scales[12], f16 d; a clear high bit subtracts 4.
void decodeQ3_K(const uint8_t* __restrict b, float* __restrict y) {
    const uint8_t* hm = b;
    const float dAll = f16At(b + 108);
    int scales[16];
    blocks::q3kScales(b + 96, scales);
    for (int group = 0; group < 8; ++group) { // bit `group` of hm, 2-bit field group % 4
        const uint8_t* q = b + 32 + 32 * (group / 4);
        const int shift = 2 * (group % 4);
        for (int half = 0; half < 32; half += 16, y += 16) {
            const float dl = dAll * float(scales[2 * group + half / 16]);
            for (int l = 0; l < 16; ++l) {
                const int low = (q[l + half] >> shift) & 3;
                const int clear = ((~hm[l + half] >> group) & 1) << 2;
                y[l] = dl * float(low - clear);
            }
        }
    }
}

// Q4_K: f16 d, f16 dmin, scales[12], qs[128]; eight sub-blocks of 32.
void decodeQ4_K(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const float min = f16At(b + 2);
    const uint8_t* scales = b + 4;
    const uint8_t* q = b + 16;
    for (int is = 0; is < 8; is += 2, q += 32) {
        const auto [d1, m1, d2, m2] = scalePairK4(d, min, scales, is);
        for (int l = 0; l < 32; ++l)
            y[l] = d1 * float(q[l] & 0xF) - m1;
        for (int l = 0; l < 32; ++l)
            y[l + 32] = d2 * float(q[l] >> 4) - m2;
        y += 64;
    }
}

// Q5_K: as Q4_K with qh[32] (fifth bits) before qs[128].
void decodeQ5_K(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const float min = f16At(b + 2);
    const uint8_t* scales = b + 4;
    const uint8_t* qh = b + 16;
    const uint8_t* ql = b + 48;
    for (int is = 0; is < 8; is += 2, ql += 32) {
        const auto [d1, m1, d2, m2] = scalePairK4(d, min, scales, is);
        for (int l = 0; l < 32; ++l)
            y[l] = d1 * float((ql[l] & 0xF) + (((qh[l] >> is) & 1) << 4)) - m1;
        for (int l = 0; l < 32; ++l)
            y[l + 32] = d2 * float((ql[l] >> 4) + (((qh[l] >> (is + 1)) & 1) << 4)) - m2;
        y += 64;
    }
}

// Q6_K: ql[128], qh[64], int8 scales[16], f16 d; value (d * scale) * q, the
// product d * scale taken once per 16 values (the same value ggml rounds).
void decodeQ6_K(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b + 208);
    const uint8_t* ql = b;
    const uint8_t* qh = b + 128;
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
    for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
        for (int is = 0; is < 2; ++is) {
            const float s1 = d * float(sc[is]), s2 = d * float(sc[is + 2]);
            const float s3 = d * float(sc[is + 4]), s4 = d * float(sc[is + 6]);
            for (int l = 16 * is; l < 16 * is + 16; ++l) {
                const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l] = s1 * float(q1);
                y[l + 32] = s2 * float(q2);
                y[l + 64] = s3 * float(q3);
                y[l + 96] = s4 * float(q4);
            }
        }
    }
}

// Q8_K: f32 d, int8 qs[256], bsums (unused here).
void decodeQ8_K(const uint8_t* __restrict b, float* __restrict y) {
    const float d = std::bit_cast<float>(u32At(b));
    const int8_t* qs = reinterpret_cast<const int8_t*>(b + 4);
    for (int j = 0; j < 256; ++j)
        y[j] = d * float(qs[j]);
}

} // namespace

namespace blocks {

void dequantizeWith(uint32_t id, const uint8_t* src, size_t blocks, float* dst, bool wide) {
#ifdef CKPTSCOPE_STATS_AVX2
    if (wide && dequantizeAvx2(id, src, blocks, dst))
        return;
#endif
    switch (id) {
    case 0:
        return convertToF32(Dtype::F32, src, blocks, dst);
    case 1:
        return convertToF32(Dtype::F16, src, blocks, dst);
    case 2:
        return eachBlock<18, 32, decodeQ4_0>(src, blocks, dst, wide);
    case 3:
        return eachBlock<20, 32, decodeQ4_1>(src, blocks, dst, wide);
    case 6:
        return eachBlock<22, 32, decodeQ5_0>(src, blocks, dst, wide);
    case 7:
        return eachBlock<24, 32, decodeQ5_1>(src, blocks, dst, wide);
    case 8:
        return eachBlock<34, 32, decodeQ8_0>(src, blocks, dst, wide);
    case 10:
        return eachBlock<84, 256, decodeQ2_K>(src, blocks, dst, wide);
    case 11:
        return eachBlock<110, 256, decodeQ3_K>(src, blocks, dst, wide);
    case 12:
        return eachBlock<144, 256, decodeQ4_K>(src, blocks, dst, wide);
    case 13:
        return eachBlock<176, 256, decodeQ5_K>(src, blocks, dst, wide);
    case 14:
        return eachBlock<210, 256, decodeQ6_K>(src, blocks, dst, wide);
    case 15:
        return eachBlock<292, 256, decodeQ8_K>(src, blocks, dst, wide);
    case 24:
        return convertToF32(Dtype::I8, src, blocks, dst);
    case 25:
        return convertToF32(Dtype::I16, src, blocks, dst);
    case 26:
        return convertToF32(Dtype::I32, src, blocks, dst);
    case 27:
        return convertToF32(Dtype::I64, src, blocks, dst);
    case 28:
        return convertToF32(Dtype::F64, src, blocks, dst);
    case 30:
        return convertToF32(Dtype::BF16, src, blocks, dst);
    case 39:
        return eachBlock<17, 32, decodeMxfp4>(src, blocks, dst, wide);
    case 40:
        return eachBlock<36, 64, decodeNvfp4>(src, blocks, dst, wide);
    case 41:
        return eachBlock<18, 128, decodeQ1_0>(src, blocks, dst, wide);
    case 42:
        return eachBlock<18, 64, decodeQ2_0>(src, blocks, dst, wide);
    default:
        // The IQ and TQ types; Q8_1 and undefined ids fall through untouched
        // (the caller checks ggmlType() first).
        dequantizeIqBlocks(id, src, blocks, dst, wide);
    }
}

} // namespace blocks

void dequantizeBlocks(uint32_t id, const uint8_t* src, size_t blocks, float* dst) {
    blocks::dequantizeWith(id, src, blocks, dst, simd::useAvx2());
}

} // namespace ckptscope::gguf
