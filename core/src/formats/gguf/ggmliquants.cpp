#include "formats/gguf/ggmlblocks.h"
#include "formats/gguf/ggmltables.h"

#include <bit>

// The decoders of the types built on ggml's codebooks (ggmltables.h) and of
// the ternary types; same rules as ggmlquants.cpp (ggml's operations in
// ggml's order).

namespace ckptscope::gguf::blocks {

namespace {

// Sign j of a sign byte as ggml applies it: a multiplication by ±1.
// Made from the bit, without a branch, so the loops vectorise.
float signOf(uint32_t signs, int j) {
    return std::bit_cast<float>(0x3F800000u | (((signs >> j) & 1) << 31));
}
// Byte j of a codebook entry (ggml reads entries as byte arrays, little-endian).
template <typename T> int gridAt(T entry, int j) {
    return int(uint8_t(entry >> (8 * j)));
}
template <typename T> int signedGridAt(T entry, int j) {
    return int(int8_t(uint8_t(entry >> (8 * j))));
}

// One base-3 digit of a TQ1_0 byte: the byte times 3^n (mod 256), its top trit.
float trit(uint8_t byte, uint8_t pow3, float d) {
    const uint8_t q = uint8_t(byte * pow3);
    const int xi = (int(q) * 3) >> 8;
    return float(xi - 1) * d;
}

// TQ1_0: qs[48] (5 trits a byte), qh[4] (4 trits a byte), f16 d.
void decodeTq1_0(const uint8_t* __restrict b, float* __restrict y) {
    static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
    const uint8_t* qs = b;
    const uint8_t* qh = b + 48;
    const float d = f16At(b + 52);
    for (int n = 0; n < 5; ++n) // bytes 0-31: 32 values per digit
        for (int m = 0; m < 32; ++m)
            *y++ = trit(qs[m], kPow3[n], d);
    for (int n = 0; n < 5; ++n) // bytes 32-47: 16 values per digit
        for (int m = 0; m < 16; ++m)
            *y++ = trit(qs[32 + m], kPow3[n], d);
    for (int n = 0; n < 4; ++n)
        for (int j = 0; j < 4; ++j)
            *y++ = trit(qh[j], kPow3[n], d);
}

// TQ2_0: qs[64] (2-bit codes), f16 d; value (q - 1) * d.
void decodeTq2_0(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b + 64);
    for (int j = 0; j < 64; j += 32)
        for (int l = 0; l < 4; ++l)
            for (int m = 0; m < 32; ++m)
                *y++ = float(((b[j + m] >> (l * 2)) & 3) - 1) * d;
}

// Eight values of an IQ2 grid entry with their signs: db * grid * ±1.
void iq2Eight(float db, uint64_t entry, uint32_t signs, float* y) {
    for (int j = 0; j < 8; ++j)
        y[j] = db * float(gridAt(entry, j)) * signOf(signs, j);
}

// IQ2_XXS: f16 d, then per 32 values 8 bytes: four grid indices, then a u32
// of four 7-bit sign codes and a 4-bit scale.
void decodeIq2_xxs(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    for (int ib = 0; ib < 8; ++ib) {
        const uint8_t* idx = b + 2 + 8 * ib;
        const uint32_t aux = u32At(idx + 4);
        const float db = d * (0.5f + float(aux >> 28)) * 0.25f;
        for (int l = 0; l < 4; ++l, y += 8)
            iq2Eight(db, kIq2xxsGrid[idx[l]], kSignsIq2xs[(aux >> (7 * l)) & 127], y);
    }
}

// IQ2_XS: f16 d, u16 qs[32] (9-bit index, 7-bit sign code), scales[8].
void decodeIq2_xs(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const uint8_t* scales = b + 66;
    for (int ib = 0; ib < 8; ++ib) {
        const float db[2] = {d * (0.5f + float(scales[ib] & 0xF)) * 0.25f,
                             d * (0.5f + float(scales[ib] >> 4)) * 0.25f};
        for (int l = 0; l < 4; ++l, y += 8) {
            const uint32_t q = u16At(b + 2 + 2 * (4 * ib + l));
            iq2Eight(db[l / 2], kIq2xsGrid[q & 511], kSignsIq2xs[q >> 9], y);
        }
    }
}

// IQ2_S: f16 d, qs[32] index bytes, signs[32], qh[8] (index bits 8-9), scales[8].
void decodeIq2_s(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const uint8_t* qs = b + 2;
    const uint8_t* signs = b + 34;
    const uint8_t* qh = b + 66;
    const uint8_t* scales = b + 74;
    for (int ib = 0; ib < 8; ++ib, qs += 4, signs += 4) {
        const float db[2] = {d * (0.5f + float(scales[ib] & 0xF)) * 0.25f,
                             d * (0.5f + float(scales[ib] >> 4)) * 0.25f};
        for (int l = 0; l < 4; ++l, y += 8) {
            const uint32_t index = qs[l] | ((uint32_t(qh[ib]) << (8 - 2 * l)) & 0x300);
            iq2Eight(db[l / 2], kIq2sGrid[index], signs[l], y);
        }
    }
}

// Two IQ3 grid entries (4 values each) with eight signs: db * grid * ±1.
void iq3Eight(float db, uint32_t grid1, uint32_t grid2, uint32_t signs, float* y) {
    for (int j = 0; j < 4; ++j) {
        y[j] = db * float(gridAt(grid1, j)) * signOf(signs, j);
        y[j + 4] = db * float(gridAt(grid2, j)) * signOf(signs, j + 4);
    }
}

// IQ3_XXS: f16 d, qs[64] grid indices, then per 32 values a u32 of four
// 7-bit sign codes and a 4-bit scale.
void decodeIq3_xxs(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const uint8_t* qs = b + 2;
    for (int ib = 0; ib < 8; ++ib, qs += 8) {
        const uint32_t aux = u32At(b + 66 + 4 * ib);
        const float db = d * (0.5f + float(aux >> 28)) * 0.5f;
        for (int l = 0; l < 4; ++l, y += 8) {
            const uint32_t signs = kSignsIq2xs[(aux >> (7 * l)) & 127];
            iq3Eight(db, kIq3xxsGrid[qs[2 * l]], kIq3xxsGrid[qs[2 * l + 1]], signs, y);
        }
    }
}

// IQ3_S: f16 d, qs[64], qh[8] (index bit 8), signs[32], scales[4].
void decodeIq3_s(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const uint8_t* qs = b + 2;
    const uint8_t* qh = b + 66;
    const uint8_t* signs = b + 74;
    const uint8_t* scales = b + 106;
    for (int ib = 0; ib < 8; ++ib, qs += 8, signs += 4) {
        const int scale = ib % 2 ? scales[ib / 2] >> 4 : scales[ib / 2] & 0xF;
        const float db = d * float(1 + 2 * scale);
        const uint32_t high = qh[ib];
        for (int l = 0; l < 4; ++l, y += 8) {
            const uint32_t i1 = qs[2 * l] | ((high << (8 - 2 * l)) & 256);
            const uint32_t i2 = qs[2 * l + 1] | ((high << (7 - 2 * l)) & 256);
            iq3Eight(db, kIq3sGrid[i1], kIq3sGrid[i2], signs[l], y);
        }
    }
}

// Eight values of an IQ1 grid entry (-1, 0, 1): dl * (grid + delta).
void iq1Eight(float dl, uint64_t entry, float delta, float* y) {
    for (int j = 0; j < 8; ++j)
        y[j] = dl * (float(signedGridAt(entry, j)) + delta);
}

// ±IQ1S_DELTA (= IQ1M_DELTA = 0.125f), negative when `negative` is 1; made
// without a branch.
float iq1Delta(uint32_t negative) {
    return std::bit_cast<float>(0x3E000000u | (negative << 31));
}

// IQ1_S: f16 d, qs[32] index bytes, u16 qh[8] (3 index bits per group of 8,
// a 3-bit scale, the delta's sign).
void decodeIq1_s(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const uint8_t* qs = b + 2;
    for (int ib = 0; ib < 8; ++ib, qs += 4) {
        const uint32_t qh = u16At(b + 34 + 2 * ib);
        const float dl = d * float(2 * ((qh >> 12) & 7) + 1);
        const float delta = iq1Delta((qh >> 15) & 1);
        for (int l = 0; l < 4; ++l, y += 8)
            iq1Eight(dl, kIq1sGrid[qs[l] | (((qh >> (3 * l)) & 7) << 8)], delta, y);
    }
}

// IQ1_M: qs[32], qh[16] (3 index bits and a delta sign per group of 8),
// scales[8] read as four u16: 3-bit sub-scales and, in the top nibbles, f16 d.
void decodeIq1_m(const uint8_t* __restrict b, float* __restrict y) {
    const uint8_t* qs = b;
    const uint8_t* qh = b + 32;
    uint32_t sc[4];
    for (int k = 0; k < 4; ++k)
        sc[k] = u16At(b + 48 + 2 * k);
    const uint32_t dBits =
        (sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000);
    const float d = halfToFloat(uint16_t(dBits));
    for (int ib = 0; ib < 8; ++ib, qs += 4, qh += 2) {
        const uint32_t s = sc[ib / 2] >> (6 * (ib % 2));
        const float dl[2] = {d * float(2 * (s & 7) + 1), d * float(2 * ((s >> 3) & 7) + 1)};
        for (int l = 0; l < 4; ++l, y += 8) {
            const uint32_t h = qh[l / 2] >> (4 * (l % 2)); // low nibble of this group
            const uint32_t index = qs[l] | ((h << 8) & 0x700);
            iq1Eight(dl[l / 2], kIq1sGrid[index], iq1Delta((h >> 3) & 1), y);
        }
    }
}

void decodeIq4_nl(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const uint8_t* qs = b + 2;
    for (int j = 0; j < 16; ++j)
        y[j] = d * float(kValuesIq4nl[qs[j] & 0xF]);
    for (int j = 0; j < 16; ++j)
        y[j + 16] = d * float(kValuesIq4nl[qs[j] >> 4]);
}

// IQ4_XS: f16 d, u16 scales_h, scales_l[4], qs[128]; 6-bit scales minus 32.
void decodeIq4_xs(const uint8_t* __restrict b, float* __restrict y) {
    const float d = f16At(b);
    const uint32_t scalesH = u16At(b + 2);
    const uint8_t* scalesL = b + 4;
    const uint8_t* qs = b + 8;
    for (int ib = 0; ib < 8; ++ib, qs += 16, y += 32) {
        const int ls =
            ((scalesL[ib / 2] >> (4 * (ib % 2))) & 0xF) | int(((scalesH >> (2 * ib)) & 3) << 4);
        const float dl = d * float(ls - 32);
        for (int j = 0; j < 16; ++j) {
            y[j] = dl * float(kValuesIq4nl[qs[j] & 0xF]);
            y[j + 16] = dl * float(kValuesIq4nl[qs[j] >> 4]);
        }
    }
}

} // namespace

bool dequantizeIqBlocks(uint32_t id, const uint8_t* src, size_t blocks, float* dst, bool wide) {
    switch (id) {
    case 16:
        eachBlock<66, 256, decodeIq2_xxs>(src, blocks, dst, wide);
        break;
    case 17:
        eachBlock<74, 256, decodeIq2_xs>(src, blocks, dst, wide);
        break;
    case 18:
        eachBlock<98, 256, decodeIq3_xxs>(src, blocks, dst, wide);
        break;
    case 19:
        eachBlock<50, 256, decodeIq1_s>(src, blocks, dst, wide);
        break;
    case 20:
        eachBlock<18, 32, decodeIq4_nl>(src, blocks, dst, wide);
        break;
    case 21:
        eachBlock<110, 256, decodeIq3_s>(src, blocks, dst, wide);
        break;
    case 22:
        eachBlock<82, 256, decodeIq2_s>(src, blocks, dst, wide);
        break;
    case 23:
        eachBlock<136, 256, decodeIq4_xs>(src, blocks, dst, wide);
        break;
    case 29:
        eachBlock<56, 256, decodeIq1_m>(src, blocks, dst, wide);
        break;
    case 34:
        eachBlock<54, 256, decodeTq1_0>(src, blocks, dst, wide);
        break;
    case 35:
        eachBlock<66, 256, decodeTq2_0>(src, blocks, dst, wide);
        break;
    default:
        return false;
    }
    return true;
}

} // namespace ckptscope::gguf::blocks
