// writeSyntheticGguf: a Llama-shaped GGUF model of random but well-formed
// blocks, streamed (nothing the size of a tensor is held), and optionally its
// dequantized f32 twin as safetensors for comparisons.
#include "ckptscope/formats/gguf/syntheticgguf.h"

#include "ckptscope/io/atomicfile.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <ostream>
#include <random>
#include <stdexcept>
#include <vector>

namespace ckptscope::gguf {

namespace {

constexpr uint64_t kAlignment = 32; // GGUF's default: general.alignment is not written

struct PlannedTensor {
    std::string name;
    uint64_t ne0 = 0, ne1 = 1; // ne1 == 0: one dimension
    Dtype type = Dtype::F32;
    uint64_t bytes = 0, offset = 0; // offset within the data section
    uint64_t elements() const { return ne0 * std::max<uint64_t>(ne1, 1); }
};

struct Plan {
    uint64_t dim = 0, ff = 0, vocab = 0, layers = 0;
    std::vector<PlannedTensor> tensors;
    uint64_t dataBytes = 0;
};

uint64_t bytesOf(Dtype type, uint64_t elements) {
    return *dtypeBytes(type, elements); // whole blocks: dim is a multiple of 256
}

uint32_t ggmlIdOf(Dtype type) {
    for (uint32_t id = 0; id < 64; ++id)
        if (dtypeFromGgml(id) == type)
            return id;
    throw std::logic_error("syntheticgguf: a dtype without a ggml id");
}

void addTensor(Plan& p, std::string name, uint64_t ne0, uint64_t ne1, Dtype type) {
    PlannedTensor t{std::move(name), ne0, ne1, type, 0, 0};
    t.bytes = bytesOf(type, t.elements());
    t.offset = p.dataBytes;
    p.dataBytes += (t.bytes + kAlignment - 1) / kAlignment * kAlignment;
    p.tensors.push_back(std::move(t));
}

// The widest model whose layer is at most a quarter of the size, and as many
// layers as fill it (at least one).
Plan plan(const SyntheticGgufSpec& spec) {
    Plan p;
    const auto perElement = [&](uint64_t n) { return bytesOf(spec.type, n); };
    p.dim = 256;
    for (uint64_t d = 512; d <= 4096; d *= 2) {
        const uint64_t f = (d * 11 / 4 + 255) / 256 * 256;
        if (perElement(4 * d * d + 3 * d * f) * 4 <= spec.totalBytes)
            p.dim = d;
    }
    p.ff = (p.dim * 11 / 4 + 255) / 256 * 256;
    p.vocab = std::min<uint64_t>(32000, 16 * p.dim);
    const uint64_t layer = perElement(4 * p.dim * p.dim + 3 * p.dim * p.ff);
    const uint64_t ends = 2 * perElement(p.dim * p.vocab);
    p.layers = spec.totalBytes > ends + layer ? (spec.totalBytes - ends) / layer : 1;
    addTensor(p, "token_embd.weight", p.dim, p.vocab, spec.type);
    for (uint64_t l = 0; l < p.layers; ++l) {
        const std::string blk = "blk." + std::to_string(l) + ".";
        addTensor(p, blk + "attn_norm.weight", p.dim, 0, Dtype::F32);
        for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_output"})
            addTensor(p, blk + n + ".weight", p.dim, p.dim, spec.type);
        addTensor(p, blk + "ffn_norm.weight", p.dim, 0, Dtype::F32);
        addTensor(p, blk + "ffn_gate.weight", p.dim, p.ff, spec.type);
        addTensor(p, blk + "ffn_up.weight", p.dim, p.ff, spec.type);
        addTensor(p, blk + "ffn_down.weight", p.ff, p.dim, spec.type);
    }
    addTensor(p, "output_norm.weight", p.dim, 0, Dtype::F32);
    addTensor(p, "output.weight", p.dim, p.vocab, spec.type);
    return p;
}

template <typename T> void put(std::ostream& out, T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof v); // little-endian hosts only, as the reader
    out.write(b, sizeof b);
}
void putString(std::ostream& out, const std::string& s) {
    put<uint64_t>(out, s.size());
    out.write(s.data(), std::streamsize(s.size()));
}
void putKvString(std::ostream& out, const std::string& key, const std::string& value) {
    putString(out, key);
    put<uint32_t>(out, 8); // str
    putString(out, value);
}
void putKvU32(std::ostream& out, const std::string& key, uint64_t value) {
    putString(out, key);
    put<uint32_t>(out, 4); // u32
    put<uint32_t>(out, uint32_t(value));
}
void pad(std::ostream& out, uint64_t written, uint64_t to) {
    static const char zeros[64] = {};
    out.write(zeros, std::streamsize((to - written % to) % to));
}

// Header and tensor infos; returns the bytes written.
uint64_t writeHeader(std::ostream& out, const Plan& p) {
    const std::streampos start = out.tellp();
    out.write("GGUF", 4);
    put<uint32_t>(out, 3);
    put<uint64_t>(out, p.tensors.size());
    put<uint64_t>(out, 8);
    putKvString(out, "general.architecture", "llama");
    putKvString(out, "general.name", "ckptscope synthetic");
    putKvU32(out, "llama.block_count", p.layers);
    putKvU32(out, "llama.context_length", 4096);
    putKvU32(out, "llama.embedding_length", p.dim);
    putKvU32(out, "llama.feed_forward_length", p.ff);
    putKvU32(out, "llama.attention.head_count", p.dim / 64);
    putKvU32(out, "llama.attention.head_count_kv", p.dim / 64);
    for (const PlannedTensor& t : p.tensors) {
        putString(out, t.name);
        put<uint32_t>(out, t.ne1 ? 2 : 1);
        put<uint64_t>(out, t.ne0);
        if (t.ne1)
            put<uint64_t>(out, t.ne1);
        put<uint32_t>(out, ggmlIdOf(t.type));
        put<uint64_t>(out, t.offset);
    }
    const auto written = uint64_t(out.tellp() - start);
    pad(out, written, kAlignment);
    return (written + kAlignment - 1) / kAlignment * kAlignment;
}

// A finite positive f16 of exponent field e .. e + 3: a block scale that
// puts the values near a trained model's (|w| up to about 0.1).
uint16_t randomScale(std::mt19937_64& rng, unsigned e) {
    const auto r = rng();
    return uint16_t(((e + r % 4) << 10) | ((r >> 8) & 0x3FF));
}

// The f16 scales of a block type (the rest are codes): byte offsets, and
// each one's lowest exponent field.
struct BlockScales {
    std::vector<size_t> offsets;
    std::vector<unsigned> exponents;
};
BlockScales blockScales(Dtype type) {
    switch (type) {
    case Dtype::Q4_0:
        return {{0}, {6}}; // 2^-9 .. 2^-6, times -8 .. 7
    case Dtype::Q8_0:
        return {{0}, {5}}; // times -128 .. 127
    case Dtype::Q1_0:
        return {{0}, {8}}; // ±d
    case Dtype::Q4_K:
        // d and dmin, times 6-bit scales and mins: dmin * m about half of
        // d * sc * 15, so values lie around zero as a trained model's do.
        return {{0, 2}, {1, 4}};
    // ggml-common.h's block layouts: each scale's offset in its block.
    case Dtype::Q2_K:
        return {{80, 82}, {4, 4}}; // d, dmin; times 4-bit scales and mins, codes 0..3
    case Dtype::Q3_K:
        return {{108}, {3}}; // d; times 6-bit scales - 32, codes -4..3
    case Dtype::Q5_K:
        return {{0, 2}, {1, 3}}; // as Q4_K (d one binary order lower: codes 0..31)
    case Dtype::Q6_K:
        return {{208}, {1}}; // d; times int8 scales, codes -32..31
    default:
        return {};
    }
}

// `n` elements of type `type` at `out`: random codes and scales.
void fillRandom(Dtype type, uint64_t n, std::mt19937_64& rng, std::vector<uint8_t>& out) {
    out.resize(size_t(bytesOf(type, n)));
    if (type == Dtype::F32) {
        std::normal_distribution<float> normal(0.0f, 0.02f);
        for (size_t i = 0; i < n; ++i) {
            const float v = normal(rng);
            std::memcpy(out.data() + 4 * i, &v, 4);
        }
        return;
    }
    for (size_t i = 0; i < out.size(); i += 8) {
        const uint64_t r = rng();
        std::memcpy(out.data() + i, &r, std::min<size_t>(8, out.size() - i));
    }
    if (type == Dtype::F16) {
        for (size_t i = 0; i < n; ++i) { // finite: exponent field below 31
            out[2 * i + 1] = uint8_t(out[2 * i + 1] % 0x78);
        }
        return;
    }
    const DtypeBlock block = dtypeBlock(type);
    const BlockScales scales = blockScales(type);
    for (size_t b = 0; b < n / block.elements; ++b)
        for (size_t k = 0; k < scales.offsets.size(); ++k) {
            const uint16_t s = randomScale(rng, scales.exponents[k]);
            std::memcpy(out.data() + b * block.bytes + scales.offsets[k], &s, 2);
        }
}

void writeTwinHeader(std::ostream& out, const Plan& p) {
    std::string json = "{";
    uint64_t offset = 0;
    for (const PlannedTensor& t : p.tensors) {
        const uint64_t end = offset + 4 * t.elements();
        json += (offset ? ",\"" : "\"") + t.name + "\":{\"dtype\":\"F32\",\"shape\":[" +
                (t.ne1 ? std::to_string(t.ne1) + "," : "") + std::to_string(t.ne0) +
                "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
        offset = end;
    }
    json += "}";
    json.append((8 - json.size() % 8) % 8, ' ');
    put<uint64_t>(out, json.size());
    out.write(json.data(), std::streamsize(json.size()));
}

// Elements per chunk written: whole rows of every type (dims are multiples of 256).
constexpr uint64_t kChunk = uint64_t(1) << 20;

void writeFiles(std::ostream& gguf, std::ostream* twin, const Plan& p, uint64_t seed) {
    uint64_t at = writeHeader(gguf, p);
    if (twin)
        writeTwinHeader(*twin, p);
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> bytes;
    std::vector<float> values;
    for (const PlannedTensor& t : p.tensors) {
        const uint64_t start = at;
        for (uint64_t done = 0; done < t.elements();) {
            const uint64_t n = std::min(kChunk, t.elements() - done);
            fillRandom(t.type, n, rng, bytes);
            gguf.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
            at += bytes.size();
            if (twin) {
                values.resize(size_t(n));
                convertToF32(t.type, bytes.data(), size_t(n), values.data());
                twin->write(reinterpret_cast<const char*>(values.data()), std::streamsize(4 * n));
            }
            done += n;
        }
        pad(gguf, at - start, kAlignment);
        at = start + (t.bytes + kAlignment - 1) / kAlignment * kAlignment;
    }
}

} // namespace

bool syntheticGgufType(Dtype type) {
    return type == Dtype::F32 || type == Dtype::F16 || !blockScales(type).offsets.empty();
}

void writeSyntheticGguf(const std::string& path, const SyntheticGgufSpec& spec) {
    if (!syntheticGgufType(spec.type))
        throw std::invalid_argument(
            std::string("generate gguf: type ") + dtypeName(spec.type) +
            " is not written (F32, F16, Q4_0, Q8_0, Q1_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K)");
    const Plan p = plan(spec);
    if (spec.f32Twin.empty()) {
        writeFileAtomically(path,
                            [&](std::ostream& out) { writeFiles(out, nullptr, p, spec.seed); });
        return;
    }
    writeFileAtomically(spec.f32Twin, [&](std::ostream& twin) {
        writeFileAtomically(path, [&](std::ostream& out) { writeFiles(out, &twin, p, spec.seed); });
    });
}

} // namespace ckptscope::gguf
