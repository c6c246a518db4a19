#include "formats/gguf/ggmlquants.h"

#include "ckptscope/formats/dtype.h"
#include "formats/gguf/ggmltables.h"
#include "formats/gguf/ggmltype.h"
#include "stats/statskernels.h"

#include <bit>
#include <cmath>

// Every decoder below repeats the float operations of ggml's dequantize_row_*
// (ggml-quants.c) in the same order, so the results are bit for bit ggml's:
// products are rounded one at a time (this file is compiled with
// -ffp-contract=off, ggml's reference rounds `d * q - m` twice as well), and
// ints become floats exactly where ggml converts them. Block layouts are those
// of ggml-common.h; offsets are written out as numbers of bytes.

namespace ckptscope::gguf {

namespace {

uint16_t u16At(const uint8_t* p) {
    return stats::valueAt(reinterpret_cast<const uint16_t*>(p), 0);
}
uint32_t u32At(const uint8_t* p) {
    return stats::valueAt(reinterpret_cast<const uint32_t*>(p), 0);
}
float f16At(const uint8_t* p) {
    return halfToFloat(u16At(p));
}
// Sign j of a sign byte as ggml applies it: a multiplication by ±1.
float signOf(uint32_t signs, int j) {
    return (signs >> j) & 1 ? -1.f : 1.f;
}
// Byte j of a codebook entry (ggml reads entries as byte arrays, little-endian).
template <typename T> int gridAt(T entry, int j) {
    return int(uint8_t(entry >> (8 * j)));
}
template <typename T> int signedGridAt(T entry, int j) {
    return int(int8_t(uint8_t(entry >> (8 * j))));
}

// E8M0 scale halved (ggml_e8m0_to_fp32_half): 2^(e-128); e < 2 gives subnormals.
float e8m0Half(uint8_t e) {
    const uint32_t bits = e < 2 ? uint32_t(0x00200000) << e : uint32_t(e - 1) << 23;
    return std::bit_cast<float>(bits);
}

// UE4M3 scale halved (ggml_ue4m3_to_fp32); 0 and 0x7F are zero, bit 7 ignored.
float ue4m3Half(uint8_t x) {
    if (x == 0 || x == 0x7F)
        return 0.0f;
    const int exp = (x >> 3) & 0xF;
    const int man = x & 0x7;
    const float raw =
        exp == 0 ? std::ldexp(float(man), -9) : std::ldexp(1.0f + float(man) / 8.0f, exp - 7);
    return raw * 0.5f;
}

// Q1_0: f16 d, 128 sign bits; a set bit is d, a clear one -d.
void decodeQ1_0(const uint8_t* b, float* y) {
    const uint32_t d = std::bit_cast<uint32_t>(f16At(b));
    const uint8_t* qs = b + 2;
    for (int j = 0; j < 128; ++j) {
        const uint32_t clear = ~(uint32_t(qs[j / 8]) >> (j % 8)) & 1;
        y[j] = std::bit_cast<float>(d ^ (clear << 31));
    }
}

// Q2_0: f16 d, 2-bit codes q, value (q - 1) * d.
void decodeQ2_0(const uint8_t* b, float* y) {
    const float d = f16At(b);
    const uint8_t* qs = b + 2;
    for (int j = 0; j < 64; ++j) {
        const int q = (qs[j / 4] >> ((j % 4) * 2)) & 3;
        y[j] = float(q - 1) * d;
    }
}

void decodeQ4_0(const uint8_t* b, float* y) {
    const float d = f16At(b);
    const uint8_t* qs = b + 2;
    for (int j = 0; j < 16; ++j) {
        y[j] = float((qs[j] & 0x0F) - 8) * d;
        y[j + 16] = float((qs[j] >> 4) - 8) * d;
    }
}

void decodeQ4_1(const uint8_t* b, float* y) {
    const float d = f16At(b);
    const float m = f16At(b + 2);
    const uint8_t* qs = b + 4;
    for (int j = 0; j < 16; ++j) {
        y[j] = float(qs[j] & 0x0F) * d + m;
        y[j + 16] = float(qs[j] >> 4) * d + m;
    }
}

// Fifth bits of Q5_0 / Q5_1: element j's in bit j of qh.
int q5Low(uint32_t qh, const uint8_t* qs, int j) {
    return (qs[j] & 0x0F) | int(((qh >> j) << 4) & 0x10);
}
int q5High(uint32_t qh, const uint8_t* qs, int j) {
    return (qs[j] >> 4) | int((qh >> (j + 12)) & 0x10);
}

void decodeQ5_0(const uint8_t* b, float* y) {
    const float d = f16At(b);
    const uint32_t qh = u32At(b + 2);
    const uint8_t* qs = b + 6;
    for (int j = 0; j < 16; ++j) {
        y[j] = float(q5Low(qh, qs, j) - 16) * d;
        y[j + 16] = float(q5High(qh, qs, j) - 16) * d;
    }
}

void decodeQ5_1(const uint8_t* b, float* y) {
    const float d = f16At(b);
    const float m = f16At(b + 2);
    const uint32_t qh = u32At(b + 4);
    const uint8_t* qs = b + 8;
    for (int j = 0; j < 16; ++j) {
        y[j] = float(q5Low(qh, qs, j)) * d + m;
        y[j + 16] = float(q5High(qh, qs, j)) * d + m;
    }
}

void decodeQ8_0(const uint8_t* b, float* y) {
    const float d = f16At(b);
    const int8_t* qs = reinterpret_cast<const int8_t*>(b + 2);
    for (int j = 0; j < 32; ++j)
        y[j] = float(qs[j]) * d;
}

void decodeMxfp4(const uint8_t* b, float* y) {
    const float d = e8m0Half(b[0]);
    const uint8_t* qs = b + 1;
    for (int j = 0; j < 16; ++j) {
        y[j] = float(kValuesFp4[qs[j] & 0x0F]) * d;
        y[j + 16] = float(kValuesFp4[qs[j] >> 4]) * d;
    }
}

// NVFP4: four sub-blocks of 16, each with its UE4M3 scale.
void decodeNvfp4(const uint8_t* b, float* y) {
    for (int s = 0; s < 4; ++s) {
        const float d = ue4m3Half(b[s]);
        const uint8_t* qs = b + 4 + s * 8;
        float* ys = y + s * 16;
        for (int j = 0; j < 8; ++j) {
            ys[j] = float(kValuesFp4[qs[j] & 0x0F]) * d;
            ys[j + 8] = float(kValuesFp4[qs[j] >> 4]) * d;
        }
    }
}

// Q2_K: scales[16] (4-bit scale, 4-bit min), qs[64], f16 d, f16 dmin.
void decodeQ2_K(const uint8_t* b, float* y) {
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

// Q3_K's sixteen 6-bit scales from its 12 bytes, minus 32.
void q3kScales(const uint8_t* packed, int* scales) {
    for (int j = 0; j < 16; ++j) {
        const int low = j < 8 ? packed[j] & 0xF : packed[j - 8] >> 4;
        const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
        scales[j] = (low | (high << 4)) - 32;
    }
}

// Q3_K: hmask[32], qs[64], scales[12], f16 d; a clear high bit subtracts 4.
void decodeQ3_K(const uint8_t* b, float* y) {
    const uint8_t* hm = b;
    const uint8_t* q = b + 32;
    const float dAll = f16At(b + 108);
    int scales[16];
    q3kScales(b + 96, scales);
    int is = 0;
    uint8_t m = 1;
    for (int n = 0; n < 256; n += 128, q += 32) {
        for (int shift = 0; shift < 8; shift += 2, m = uint8_t(m << 1)) {
            for (int half = 0; half < 32; half += 16) {
                const float dl = dAll * float(scales[is++]);
                for (int l = 0; l < 16; ++l) {
                    const int low = (q[l + half] >> shift) & 3;
                    *y++ = dl * float(low - ((hm[l + half] & m) ? 0 : 4));
                }
            }
        }
    }
}

// 6-bit scale and min j of Q4_K / Q5_K (ggml's get_scale_min_k4).
void scaleMinK4(int j, const uint8_t* q, int& scale, int& min) {
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
ScalePair scalePairK4(float d, float min, const uint8_t* scales, int is) {
    int sc = 0, m = 0;
    scaleMinK4(is, scales, sc, m);
    ScalePair p{d * float(sc), min * float(m), 0, 0};
    scaleMinK4(is + 1, scales, sc, m);
    p.d2 = d * float(sc);
    p.m2 = min * float(m);
    return p;
}

// Q4_K: f16 d, f16 dmin, scales[12], qs[128]; eight sub-blocks of 32.
void decodeQ4_K(const uint8_t* b, float* y) {
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
void decodeQ5_K(const uint8_t* b, float* y) {
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

// Q6_K: ql[128], qh[64], int8 scales[16], f16 d; value (d * scale) * q.
void decodeQ6_K(const uint8_t* b, float* y) {
    const float d = f16At(b + 208);
    const uint8_t* ql = b;
    const uint8_t* qh = b + 128;
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
    for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
        for (int l = 0; l < 32; ++l) {
            const int is = l / 16;
            const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * float(sc[is]) * float(q1);
            y[l + 32] = d * float(sc[is + 2]) * float(q2);
            y[l + 64] = d * float(sc[is + 4]) * float(q3);
            y[l + 96] = d * float(sc[is + 6]) * float(q4);
        }
    }
}

// Q8_K: f32 d, int8 qs[256], bsums (unused here).
void decodeQ8_K(const uint8_t* b, float* y) {
    const float d = std::bit_cast<float>(u32At(b));
    const int8_t* qs = reinterpret_cast<const int8_t*>(b + 4);
    for (int j = 0; j < 256; ++j)
        y[j] = d * float(qs[j]);
}

// One base-3 digit of a TQ1_0 byte: the byte times 3^n (mod 256), its top trit.
float trit(uint8_t byte, uint8_t pow3, float d) {
    const uint8_t q = uint8_t(byte * pow3);
    const int xi = (int(q) * 3) >> 8;
    return float(xi - 1) * d;
}

// TQ1_0: qs[48] (5 trits a byte), qh[4] (4 trits a byte), f16 d.
void decodeTq1_0(const uint8_t* b, float* y) {
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
void decodeTq2_0(const uint8_t* b, float* y) {
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
void decodeIq2_xxs(const uint8_t* b, float* y) {
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
void decodeIq2_xs(const uint8_t* b, float* y) {
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
void decodeIq2_s(const uint8_t* b, float* y) {
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
void decodeIq3_xxs(const uint8_t* b, float* y) {
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
void decodeIq3_s(const uint8_t* b, float* y) {
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

constexpr float kIq1Delta = 0.125f; // IQ1S_DELTA, IQ1M_DELTA

// IQ1_S: f16 d, qs[32] index bytes, u16 qh[8] (3 index bits per group of 8,
// a 3-bit scale, the delta's sign).
void decodeIq1_s(const uint8_t* b, float* y) {
    const float d = f16At(b);
    const uint8_t* qs = b + 2;
    for (int ib = 0; ib < 8; ++ib, qs += 4) {
        const uint32_t qh = u16At(b + 34 + 2 * ib);
        const float dl = d * float(2 * ((qh >> 12) & 7) + 1);
        const float delta = qh & 0x8000 ? -kIq1Delta : kIq1Delta;
        for (int l = 0; l < 4; ++l, y += 8)
            iq1Eight(dl, kIq1sGrid[qs[l] | (((qh >> (3 * l)) & 7) << 8)], delta, y);
    }
}

// IQ1_M: qs[32], qh[16] (3 index bits and a delta sign per group of 8),
// scales[8] read as four u16: 3-bit sub-scales and, in the top nibbles, f16 d.
void decodeIq1_m(const uint8_t* b, float* y) {
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
            const float delta = h & 0x08 ? -kIq1Delta : kIq1Delta;
            iq1Eight(dl[l / 2], kIq1sGrid[index], delta, y);
        }
    }
}

void decodeIq4_nl(const uint8_t* b, float* y) {
    const float d = f16At(b);
    const uint8_t* qs = b + 2;
    for (int j = 0; j < 16; ++j) {
        y[j] = d * float(kValuesIq4nl[qs[j] & 0xF]);
        y[j + 16] = d * float(kValuesIq4nl[qs[j] >> 4]);
    }
}

// IQ4_XS: f16 d, u16 scales_h, scales_l[4], qs[128]; 6-bit scales minus 32.
void decodeIq4_xs(const uint8_t* b, float* y) {
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

// The loop over blocks, instantiated per type so the decoder is inlined.
template <uint32_t Bytes, uint32_t Elements, void (*Decode)(const uint8_t*, float*)>
void eachBlock(const uint8_t* src, size_t blocks, float* dst) {
    for (size_t i = 0; i < blocks; ++i)
        Decode(src + i * Bytes, dst + i * Elements);
}

} // namespace

void dequantizeBlocks(uint32_t id, const uint8_t* src, size_t blocks, float* dst) {
    switch (id) {
    case 0:
        return convertToF32(Dtype::F32, src, blocks, dst);
    case 1:
        return convertToF32(Dtype::F16, src, blocks, dst);
    case 2:
        return eachBlock<18, 32, decodeQ4_0>(src, blocks, dst);
    case 3:
        return eachBlock<20, 32, decodeQ4_1>(src, blocks, dst);
    case 6:
        return eachBlock<22, 32, decodeQ5_0>(src, blocks, dst);
    case 7:
        return eachBlock<24, 32, decodeQ5_1>(src, blocks, dst);
    case 8:
        return eachBlock<34, 32, decodeQ8_0>(src, blocks, dst);
    case 10:
        return eachBlock<84, 256, decodeQ2_K>(src, blocks, dst);
    case 11:
        return eachBlock<110, 256, decodeQ3_K>(src, blocks, dst);
    case 12:
        return eachBlock<144, 256, decodeQ4_K>(src, blocks, dst);
    case 13:
        return eachBlock<176, 256, decodeQ5_K>(src, blocks, dst);
    case 14:
        return eachBlock<210, 256, decodeQ6_K>(src, blocks, dst);
    case 15:
        return eachBlock<292, 256, decodeQ8_K>(src, blocks, dst);
    case 16:
        return eachBlock<66, 256, decodeIq2_xxs>(src, blocks, dst);
    case 17:
        return eachBlock<74, 256, decodeIq2_xs>(src, blocks, dst);
    case 18:
        return eachBlock<98, 256, decodeIq3_xxs>(src, blocks, dst);
    case 19:
        return eachBlock<50, 256, decodeIq1_s>(src, blocks, dst);
    case 20:
        return eachBlock<18, 32, decodeIq4_nl>(src, blocks, dst);
    case 21:
        return eachBlock<110, 256, decodeIq3_s>(src, blocks, dst);
    case 22:
        return eachBlock<82, 256, decodeIq2_s>(src, blocks, dst);
    case 23:
        return eachBlock<136, 256, decodeIq4_xs>(src, blocks, dst);
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
    case 29:
        return eachBlock<56, 256, decodeIq1_m>(src, blocks, dst);
    case 30:
        return convertToF32(Dtype::BF16, src, blocks, dst);
    case 34:
        return eachBlock<54, 256, decodeTq1_0>(src, blocks, dst);
    case 35:
        return eachBlock<66, 256, decodeTq2_0>(src, blocks, dst);
    case 39:
        return eachBlock<17, 32, decodeMxfp4>(src, blocks, dst);
    case 40:
        return eachBlock<36, 64, decodeNvfp4>(src, blocks, dst);
    case 41:
        return eachBlock<18, 128, decodeQ1_0>(src, blocks, dst);
    case 42:
        return eachBlock<18, 64, decodeQ2_0>(src, blocks, dst);
    default:
        break; // Q8_1 and undefined ids: the caller checks ggmlType() first
    }
}

} // namespace ckptscope::gguf
