#include "ckptscope/formats/gguf/blockanatomy.h"

#include "ckptscope/common/numberformat.h"
#include "formats/gguf/ggmlblocks.h"
#include "formats/gguf/ggmlquants.h"
#include "formats/gguf/ggmltables.h"
#include "formats/gguf/ggmltype.h"

#include <array>
#include <bit>
#include <stdexcept>

// One element of a block taken apart as ggml's dequantize_row_* (ggml-quants.c)
// reads it; byte offsets are those of ggml-common.h, as in ggmlquants.cpp and
// ggmliquants.cpp. Each reader fills scale, level and offset with the floats
// the decoder multiplies and subtracts, rounded where the decoder rounds them
// (this file, too, is compiled with -ffp-contract=off).

namespace ckptscope::gguf {

namespace {

using namespace blocks;
using A = BlockAnatomy;

// A 4-bit code of the 32-element layout of Q4_0, Q4_1, IQ4_NL, MXFP4:
// elements 0-15 in the low nibbles, 16-31 in the high ones.
uint32_t nibble32(const uint8_t* qs, uint32_t i) {
    return i < 16 ? qs[i] & 0xFu : uint32_t(qs[i - 16] >> 4);
}

void setCode(A& a, uint32_t code, uint32_t bits, float level) {
    a.code = code;
    a.codeBits = bits;
    a.level = level;
}

void q4_0(A& a, const uint8_t* b, uint32_t i) {
    a.d = a.scale = f16At(b);
    const uint32_t q = nibble32(b + 2, i);
    setCode(a, q, 4, float(int(q) - 8));
    a.formula = "d·(q − 8)";
}

void q4_1(A& a, const uint8_t* b, uint32_t i) {
    a.d = a.scale = f16At(b);
    a.dmin = f16At(b + 2);
    a.offset = -*a.dmin; // d·q + m: x + m is x − (−m) exactly
    const uint32_t q = nibble32(b + 4, i);
    setCode(a, q, 4, float(q));
    a.formula = "d·q + m";
}

// Q5_0 / Q5_1: element j's fifth bit is bit j of qh.
uint32_t q5Code(uint32_t qh, const uint8_t* qs, uint32_t i) {
    return nibble32(qs, i) | (((qh >> i) & 1) << 4);
}

void q5_0(A& a, const uint8_t* b, uint32_t i) {
    a.d = a.scale = f16At(b);
    const uint32_t q = q5Code(u32At(b + 2), b + 6, i);
    setCode(a, q, 5, float(int(q) - 16));
    a.formula = "d·(q − 16)";
}

void q5_1(A& a, const uint8_t* b, uint32_t i) {
    a.d = a.scale = f16At(b);
    a.dmin = f16At(b + 2);
    a.offset = -*a.dmin;
    const uint32_t q = q5Code(u32At(b + 4), b + 8, i);
    setCode(a, q, 5, float(q));
    a.formula = "d·q + m";
}

void q8_0(A& a, const uint8_t* b, uint32_t i) {
    a.d = a.scale = f16At(b);
    const int q = int8_t(b[2 + i]);
    setCode(a, uint8_t(q), 8, float(q));
    a.formula = "d·q";
}

void q1_0(A& a, const uint8_t* b, uint32_t i) {
    a.d = a.scale = f16At(b);
    const uint32_t bit = (b[2 + i / 8] >> (i % 8)) & 1;
    setCode(a, bit, 1, bit ? 1.0f : -1.0f);
    a.formula = "d·(±1)";
}

// Q2_0 and TQ2_0: a 2-bit code q standing for q − 1.
void q2_0(A& a, const uint8_t* b, uint32_t i) {
    a.d = a.scale = f16At(b);
    const uint32_t q = (b[2 + i / 4] >> (2 * (i % 4))) & 3;
    setCode(a, q, 2, float(int(q) - 1));
    a.formula = "d·(q − 1)";
}

void mxfp4(A& a, const uint8_t* b, uint32_t i) {
    a.dCode = b[0];
    a.d = a.scale = e8m0Half(b[0]);
    const uint32_t q = nibble32(b + 1, i);
    setCode(a, q, 4, float(kValuesFp4[q]));
    a.formula = "d·fp4[q]";
}

// NVFP4: four sub-blocks of 16, each with a UE4M3 scale; within one, elements
// 0-7 in the low nibbles, 8-15 in the high ones.
void nvfp4(A& a, const uint8_t* b, uint32_t i) {
    const uint32_t s = i / 16, k = i % 16;
    a.subBlock = s;
    a.dCode = b[s];
    a.d = a.scale = ue4m3HalfOf(b[s]);
    const uint8_t* qs = b + 4 + 8 * s;
    const uint32_t q = k < 8 ? qs[k] & 0xFu : uint32_t(qs[k - 8] >> 4);
    setCode(a, q, 4, float(kValuesFp4[q]));
    a.formula = "d·fp4[q]";
}

void q2_K(A& a, const uint8_t* b, uint32_t i) {
    a.d = f16At(b + 80);
    a.dmin = f16At(b + 82);
    a.subBlock = i / 16; // scales[is++] per 16 values, in element order
    const uint8_t sc = b[i / 16];
    a.subScale = sc & 0xF;
    a.subMin = sc >> 4;
    a.scale = a.d * float(*a.subScale);
    a.offset = *a.dmin * float(*a.subMin);
    const uint32_t shift = 2 * ((i % 128) / 32);
    const uint32_t q = (b[16 + 32 * (i / 128) + i % 32] >> shift) & 3;
    setCode(a, q, 2, float(q));
    a.formula = "d·sc·q − dmin·m";
}

void q3_K(A& a, const uint8_t* b, uint32_t i) {
    a.d = f16At(b + 108);
    const uint32_t group = i / 32, t = i % 32; // hmask bit `group`, 2-bit field group % 4
    const uint8_t* packed = b + 96;
    const uint32_t j = i / 16;
    const int low4 = j < 8 ? packed[j] & 0xF : packed[j - 8] >> 4;
    const int high2 = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    a.subBlock = j;
    a.subScale = (low4 | (high2 << 4)) - 32;
    a.scale = a.d * float(*a.subScale);
    const uint32_t low = (b[32 + 32 * (group / 4) + t] >> (2 * (group % 4))) & 3;
    const uint32_t high = (b[t] >> group) & 1;
    setCode(a, low | (high << 2), 3, float(int(low) - (high ? 0 : 4)));
    a.formula = "d·sc·(q − 4·!hbit)";
}

// Q4_K / Q5_K: eight sub-blocks of 32 with 6-bit scales and minimums.
void kScaleMin(A& a, const uint8_t* b, uint32_t i) {
    a.d = f16At(b);
    a.dmin = f16At(b + 2);
    int sc = 0, m = 0;
    scaleMinK4(int(i / 32), b + 4, sc, m);
    a.subBlock = i / 32;
    a.subScale = sc;
    a.subMin = m;
    a.scale = a.d * float(sc);
    a.offset = *a.dmin * float(m);
    a.formula = "d·sc·q − dmin·m";
}

void q4_K(A& a, const uint8_t* b, uint32_t i) {
    kScaleMin(a, b, i);
    const uint8_t byte = b[16 + 32 * (i / 64) + i % 32];
    const uint32_t q = (i % 64) < 32 ? byte & 0xFu : uint32_t(byte >> 4);
    setCode(a, q, 4, float(q));
}

void q5_K(A& a, const uint8_t* b, uint32_t i) {
    kScaleMin(a, b, i);
    const uint8_t byte = b[48 + 32 * (i / 64) + i % 32];
    const uint32_t low = (i % 64) < 32 ? byte & 0xFu : uint32_t(byte >> 4);
    const uint32_t q = low | (((b[16 + i % 32] >> (i / 32)) & 1) << 4);
    setCode(a, q, 5, float(q));
}

void q6_K(A& a, const uint8_t* b, uint32_t i) {
    a.d = f16At(b + 208);
    a.subBlock = i / 16; // ggml's scale index 8n + is + 2k is i / 16
    a.subScale = int8_t(b[192 + i / 16]);
    a.scale = a.d * float(*a.subScale);
    const uint32_t n = i / 128, k = (i % 128) / 32, l = i % 32;
    const uint8_t* ql = b + 64 * n;
    const uint8_t qh = b[128 + 32 * n + l];
    const uint8_t lowByte = ql[l + (k % 2 ? 32 : 0)];
    const uint32_t low = k < 2 ? lowByte & 0xFu : uint32_t(lowByte >> 4);
    const uint32_t q = low | (((qh >> (2 * k)) & 3) << 4);
    setCode(a, q, 6, float(int(q) - 32));
    a.formula = "d·sc·(q − 32)";
}

void q8_K(A& a, const uint8_t* b, uint32_t i) {
    a.d = a.scale = std::bit_cast<float>(u32At(b));
    const int q = int8_t(b[4 + i]);
    setCode(a, uint8_t(q), 8, float(q));
    a.formula = "d·q";
}

void tq1_0(A& a, const uint8_t* b, uint32_t i) {
    static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
    a.d = a.scale = f16At(b + 52);
    uint8_t byte = 0, pow3 = 1;
    if (i < 160) { // qs[0..31]: 32 values per digit
        byte = b[i % 32];
        pow3 = kPow3[i / 32];
    } else if (i < 240) { // qs[32..47]: 16 values per digit
        byte = b[32 + (i - 160) % 16];
        pow3 = kPow3[(i - 160) / 16];
    } else { // qh[0..3]
        byte = b[48 + (i - 240) % 4];
        pow3 = kPow3[(i - 240) / 4];
    }
    const uint32_t trit = (uint32_t(uint8_t(byte * pow3)) * 3) >> 8;
    setCode(a, trit, 2, float(int(trit) - 1));
    a.formula = "d·(t − 1)";
}

void tq2_0(A& a, const uint8_t* b, uint32_t i) {
    a.d = a.scale = f16At(b + 64);
    const uint32_t q = (b[32 * (i / 128) + i % 32] >> (2 * ((i % 128) / 32))) & 3;
    setCode(a, q, 2, float(int(q) - 1));
    a.formula = "d·(q − 1)";
}

void iq4_nl(A& a, const uint8_t* b, uint32_t i) {
    a.d = a.scale = f16At(b);
    const uint32_t q = nibble32(b + 2, i);
    setCode(a, q, 4, float(kValuesIq4nl[q]));
    a.formula = "d·iq4nl[q]";
}

void iq4_xs(A& a, const uint8_t* b, uint32_t i) {
    a.d = f16At(b);
    const uint32_t ib = i / 32, scalesH = u16At(b + 2);
    const int ls =
        ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | int(((scalesH >> (2 * ib)) & 3) << 4);
    a.subBlock = ib;
    a.subScale = ls - 32;
    a.scale = a.d * float(ls - 32);
    const uint32_t q = nibble32(b + 8 + 16 * ib, i % 32);
    setCode(a, q, 4, float(kValuesIq4nl[q]));
    a.formula = "d·(ls − 32)·iq4nl[q]";
}

// The IQ2/IQ3 types: byte j of grid entry `entry`, the sign bit from a sign
// byte (ksigns or stored), scale db; level ±grid (db·grid·(±1) rounds as
// db·(±grid): negation commutes with rounding).
template <typename T>
void gridElement(A& a, uint32_t index, T entry, uint32_t j, uint32_t signs, uint32_t indexBits) {
    a.gridIndex = index;
    a.gridValue = int(uint8_t(entry >> (8 * j)));
    a.signBit = (signs >> (j % 8)) & 1;
    setCode(a, index, indexBits, float(*a.signBit ? -*a.gridValue : *a.gridValue));
}

// db of IQ2_XXS/IQ2_XS/IQ2_S: d·(0.5 + ls)·0.25 (IQ3_XXS: ·0.5).
float iqHalfScale(float d, int ls, float quarter) {
    return d * (0.5f + float(ls)) * quarter;
}

void iq2_xxs(A& a, const uint8_t* b, uint32_t i) {
    a.d = f16At(b);
    const uint32_t ib = i / 32, l = (i % 32) / 8;
    const uint8_t* idx = b + 2 + 8 * ib;
    const uint32_t aux = u32At(idx + 4);
    a.subBlock = ib;
    a.subScale = int(aux >> 28);
    a.scale = iqHalfScale(a.d, *a.subScale, 0.25f);
    gridElement(a, idx[l], kIq2xxsGrid[idx[l]], i % 8, kSignsIq2xs[(aux >> (7 * l)) & 127], 8);
    a.formula = "d·(0.5 + s)·0.25·grid·(±1)";
}

// IQ2_XS / IQ2_S: f16 d and a 4-bit scale per 16 values at byte scalesAt.
void iq2Scale(A& a, const uint8_t* b, uint32_t i, uint32_t scalesAt) {
    a.d = f16At(b);
    const uint32_t ib = i / 32, l = (i % 32) / 8;
    a.subBlock = ib;
    a.subScale = l < 2 ? b[scalesAt + ib] & 0xF : b[scalesAt + ib] >> 4;
    a.scale = iqHalfScale(a.d, *a.subScale, 0.25f);
    a.formula = "d·(0.5 + s)·0.25·grid·(±1)";
}

void iq2_xs(A& a, const uint8_t* b, uint32_t i) {
    iq2Scale(a, b, i, 66);
    const uint32_t q = u16At(b + 2 + 2 * (i / 8));
    gridElement(a, q & 511, kIq2xsGrid[q & 511], i % 8, kSignsIq2xs[q >> 9], 9);
}

void iq2_s(A& a, const uint8_t* b, uint32_t i) {
    iq2Scale(a, b, i, 74);
    const uint32_t ib = i / 32, l = (i % 32) / 8;
    const uint32_t index = b[2 + 4 * ib + l] | ((uint32_t(b[66 + ib]) << (8 - 2 * l)) & 0x300);
    gridElement(a, index, kIq2sGrid[index], i % 8, b[34 + 4 * ib + l], 10);
}

void iq3_xxs(A& a, const uint8_t* b, uint32_t i) {
    a.d = f16At(b);
    const uint32_t ib = i / 32, l = (i % 32) / 8, j = i % 8;
    const uint32_t aux = u32At(b + 66 + 4 * ib);
    a.subBlock = ib;
    a.subScale = int(aux >> 28);
    a.scale = iqHalfScale(a.d, *a.subScale, 0.5f);
    const uint32_t index = b[2 + 8 * ib + 2 * l + j / 4];
    gridElement(a, index, kIq3xxsGrid[index], j % 4,
                kSignsIq2xs[(aux >> (7 * l)) & 127] >> (j / 4 * 4), 8);
    a.formula = "d·(0.5 + s)·0.5·grid·(±1)";
}

void iq3_s(A& a, const uint8_t* b, uint32_t i) {
    a.d = f16At(b);
    const uint32_t ib = i / 32, l = (i % 32) / 8, j = i % 8;
    a.subBlock = ib;
    a.subScale = ib % 2 ? b[106 + ib / 2] >> 4 : b[106 + ib / 2] & 0xF;
    a.scale = a.d * float(1 + 2 * *a.subScale);
    const uint32_t high = b[66 + ib];
    const uint32_t index = j < 4 ? b[2 + 8 * ib + 2 * l] | ((high << (8 - 2 * l)) & 256)
                                 : b[2 + 8 * ib + 2 * l + 1] | ((high << (7 - 2 * l)) & 256);
    gridElement(a, index, kIq3sGrid[index], j % 4, uint32_t(b[74 + 4 * ib + l]) >> (j / 4 * 4), 9);
    a.formula = "d·(1 + 2s)·grid·(±1)";
}

// IQ1_S / IQ1_M: dl·(grid + delta), grid −1, 0 or 1, delta ±0.125.
void iq1Element(A& a, float dl, uint32_t index, uint32_t j, uint32_t negativeDelta) {
    a.scale = dl;
    a.gridIndex = index;
    a.gridValue = int(int8_t(uint8_t(kIq1sGrid[index] >> (8 * j))));
    const float delta = negativeDelta ? -0.125f : 0.125f;
    setCode(a, index, 11, float(*a.gridValue) + delta);
    a.formula = "d·(2s + 1)·(grid ± 0.125)";
}

void iq1_s(A& a, const uint8_t* b, uint32_t i) {
    a.d = f16At(b);
    const uint32_t ib = i / 32, l = (i % 32) / 8;
    const uint32_t qh = u16At(b + 34 + 2 * ib);
    a.subBlock = ib;
    a.subScale = int((qh >> 12) & 7);
    const uint32_t index = b[2 + 4 * ib + l] | (((qh >> (3 * l)) & 7) << 8);
    iq1Element(a, a.d * float(2 * *a.subScale + 1), index, i % 8, (qh >> 15) & 1);
}

void iq1_m(A& a, const uint8_t* b, uint32_t i) {
    uint32_t sc[4];
    for (uint32_t k = 0; k < 4; ++k)
        sc[k] = u16At(b + 48 + 2 * k);
    a.d = halfToFloat(uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) |
                               (sc[3] & 0xF000)));
    const uint32_t ib = i / 32, l = (i % 32) / 8;
    const uint32_t s = sc[ib / 2] >> (6 * (ib % 2));
    a.subBlock = ib;
    a.subScale = int(l < 2 ? s & 7 : (s >> 3) & 7);
    const uint32_t h = b[32 + 2 * ib + l / 2] >> (4 * (l % 2));
    const uint32_t index = b[4 * ib + l] | ((h << 8) & 0x700);
    iq1Element(a, a.d * float(2 * *a.subScale + 1), index, i % 8, (h >> 3) & 1);
}

using Reader = void (*)(A&, const uint8_t*, uint32_t);

Reader readerFor(Dtype dtype) {
    switch (dtype) {
    case Dtype::Q4_0:
        return q4_0;
    case Dtype::Q4_1:
        return q4_1;
    case Dtype::Q5_0:
        return q5_0;
    case Dtype::Q5_1:
        return q5_1;
    case Dtype::Q8_0:
        return q8_0;
    case Dtype::Q2_K:
        return q2_K;
    case Dtype::Q3_K:
        return q3_K;
    case Dtype::Q4_K:
        return q4_K;
    case Dtype::Q5_K:
        return q5_K;
    case Dtype::Q6_K:
        return q6_K;
    case Dtype::Q8_K:
        return q8_K;
    case Dtype::IQ2_XXS:
        return iq2_xxs;
    case Dtype::IQ2_XS:
        return iq2_xs;
    case Dtype::IQ3_XXS:
        return iq3_xxs;
    case Dtype::IQ1_S:
        return iq1_s;
    case Dtype::IQ4_NL:
        return iq4_nl;
    case Dtype::IQ3_S:
        return iq3_s;
    case Dtype::IQ2_S:
        return iq2_s;
    case Dtype::IQ4_XS:
        return iq4_xs;
    case Dtype::IQ1_M:
        return iq1_m;
    case Dtype::TQ1_0:
        return tq1_0;
    case Dtype::TQ2_0:
        return tq2_0;
    case Dtype::MXFP4:
        return mxfp4;
    case Dtype::NVFP4:
        return nvfp4;
    case Dtype::Q1_0:
        return q1_0;
    case Dtype::Q2_0:
        return q2_0;
    default:
        return nullptr; // one-element types and Q8_1
    }
}

const GgmlTypeInfo* ggmlTypeOf(Dtype dtype) {
    for (const GgmlTypeInfo& t : ggmlTypes())
        if (dtypeFromGgml(t.id) == dtype)
            return &t;
    return nullptr;
}

} // namespace

std::optional<BlockLocation> locateBlock(const TensorEntry& tensor, uint64_t element) {
    const DtypeBlock block = dtypeBlock(tensor.dtype);
    if (block.elements <= 1 || element >= tensor.dataLen)
        return std::nullopt;
    BlockLocation loc;
    loc.block = element / block.elements;
    loc.firstElement = loc.block * block.elements;
    loc.elements = block.elements;
    loc.bytes = block.bytes;
    loc.fileOffset = tensor.dataOffset + loc.block * block.bytes;
    return loc;
}

BlockAnatomy blockAnatomy(Dtype dtype, std::span<const uint8_t> block, uint32_t indexInBlock) {
    const Reader reader = readerFor(dtype);
    const GgmlTypeInfo* type = ggmlTypeOf(dtype);
    if (!reader || !type || block.size() != type->blockBytes || indexInBlock >= type->blockElements)
        throw std::invalid_argument(std::string("blockAnatomy: not one whole block of ") +
                                    dtypeName(dtype) + " or element past it");
    BlockAnatomy a;
    a.dtype = dtype;
    a.indexInBlock = indexInBlock;
    reader(a, block.data(), indexInBlock);
    std::array<float, 256> values{};
    dequantizeBlocks(type->id, block.data(), 1, values.data());
    a.value = values[indexInBlock];
    return a;
}

} // namespace ckptscope::gguf

namespace ckptscope::gguf {

namespace {

// How the block's scale d is stored.
std::string scaleStorage(const BlockAnatomy& a) {
    switch (a.dtype) {
    case Dtype::Q8_K:
        return "f32";
    case Dtype::MXFP4:
        return "E8M0 " + std::to_string(*a.dCode) + ", halved";
    case Dtype::NVFP4:
        return "UE4M3 " + std::to_string(*a.dCode) + ", halved";
    default:
        return "f16";
    }
}

std::string binary(uint32_t code, uint32_t bits) {
    std::string s;
    for (uint32_t b = bits; b-- > 0;)
        s += (code >> b) & 1 ? '1' : '0';
    return s;
}

} // namespace

std::vector<BlockField> blockFields(const BlockAnatomy& a) {
    std::vector<BlockField> rows;
    const bool kQuant = a.dmin && a.subMin;
    rows.push_back({kQuant || a.subScale ? "super-block scale d" : "block scale d",
                    fmt::exact(a.d) + " (" + scaleStorage(a) + ")"});
    if (a.dmin)
        rows.push_back(
            {kQuant ? "super-block min dmin" : "block min m", fmt::exact(*a.dmin) + " (f16)"});
    if (a.subBlock)
        rows.push_back({"sub-block", std::to_string(*a.subBlock)});
    if (a.subScale)
        rows.push_back({"sub-block scale s", std::to_string(*a.subScale)});
    if (a.subMin)
        rows.push_back({"sub-block min m", std::to_string(*a.subMin)});
    if (a.gridValue) // the entry's own index is the quant code below
        rows.push_back({"grid value", std::to_string(*a.gridValue)});
    if (a.signBit)
        rows.push_back({"sign bit", *a.signBit ? "1 (negative)" : "0 (positive)"});
    rows.push_back({a.gridIndex ? "quant code (grid index)" : "quant code q",
                    std::to_string(a.code) + " (0b" + binary(a.code, a.codeBits) + ")"});
    rows.push_back({"formula", a.formula});
    rows.push_back({"scale · level − offset", fmt::exact(a.scale) + " · " + fmt::exact(a.level) +
                                                  " − " + fmt::exact(a.offset)});
    rows.push_back({"value", fmt::exact(a.value)});
    return rows;
}

} // namespace ckptscope::gguf
