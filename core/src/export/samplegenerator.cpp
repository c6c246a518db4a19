#include "ckptscope/export/samplegenerator.h"

#include "ckptscope/formats/oxck/metadatacodec.h"
#include "ckptscope/io/atomicfile.h"
#include "formats/oxck/oxckencoding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ostream>
#include <random>
#include <unordered_map>
#include <vector>

namespace ckptscope {

namespace {

// Transformer-like parameter names: 8 per layer, then embeddings/head.
std::string tensorName(uint64_t i) {
    static const char* perLayer[] = {"attn.q.weight",   "attn.k.weight", "attn.v.weight",
                                     "attn.out.weight", "mlp.up.weight", "mlp.down.weight",
                                     "norm1.weight",    "norm2.bias"};
    if (i == 0)
        return "embed.tokens.weight";
    return "layers." + std::to_string((i - 1) / 8) + "." + perLayer[(i - 1) % 8];
}

std::string hexId(std::mt19937_64& rng, int digits) {
    static const char* hex = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < digits; ++i)
        s += hex[rng() & 15];
    return s;
}

std::string uuid(std::mt19937_64& rng) {
    std::string h = hexId(rng, 32);
    h[12] = '4'; // version 4
    return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
           "-" + h.substr(20);
}

std::string cid(std::mt19937_64& rng) {
    static const char* b32 = "abcdefghijklmnopqrstuvwxyz234567";
    std::string s = "bafyrei";
    for (int i = 0; i < 52; ++i)
        s += b32[rng() & 31];
    return s;
}

} // namespace

void writeSyntheticModel(const std::string& path, const SyntheticModelSpec& spec) {
    const uint64_t count = std::max<uint64_t>(spec.tensorCount, 1);
    const uint64_t perTensor = std::max<uint64_t>(spec.totalBytes / 4 / count, 1);
    Metadata meta{{"model", "synthetic-transformer"},
                  {"step", std::to_string(1000 + spec.seed)},
                  {"loss", "2.4731"},
                  {"lr", "0.0003"},
                  {"seed", std::to_string(spec.seed)}};
    writeFileAtomically(path, [&](std::ostream& out) {
        oxck::writeHeader(out, 1, serializeMetadata(meta), count);
        std::mt19937_64 rng(spec.seed);
        std::vector<float> values;
        for (uint64_t i = 0; i < count; ++i) {
            const std::string name = tensorName(i);
            // A roughly square matrix with perTensor elements.
            const uint64_t rows = std::max<uint64_t>(1, uint64_t(std::sqrt(double(perTensor))));
            const uint64_t cols = perTensor / rows;
            const uint64_t n = rows * cols;
            oxck::writeTensorHeader(out, name, {rows, cols}, n);
            values.resize(size_t(std::min<uint64_t>(n, 1 << 20)));
            const int kind = int(i % 4);
            std::normal_distribution<float> normal(0.0f, 0.02f + 0.01f * float(i % 7));
            std::uniform_real_distribution<float> uniform(-0.1f, 0.1f);
            for (uint64_t done = 0; done < n;) {
                const size_t chunk = size_t(std::min<uint64_t>(values.size(), n - done));
                for (size_t k = 0; k < chunk; ++k) {
                    switch (kind) {
                    case 0:
                        values[k] = normal(rng);
                        break;
                    case 1:
                        values[k] = uniform(rng);
                        break;
                    case 2:
                        values[k] = 1.0f + normal(rng);
                        break; // norm scales
                    default:
                        values[k] = std::abs(normal(rng)) * 3;
                        break;
                    }
                }
                oxck::writeValues(out, values.data(), chunk);
                done += chunk;
            }
        }
    });
}

GradientCheckpoint makeSyntheticGradient(const SyntheticGraphSpec& spec) {
    std::mt19937_64 rng(spec.seed);
    ComputationGraphStore g;
    std::vector<ComputationNode> nodes;
    auto add = [&](const std::string& op, std::vector<std::string> inputs,
                   const std::string& shape) -> std::string {
        ComputationNode n(uuid(rng), op, std::move(inputs));
        n.outputCid = cid(rng);
        if (spec.completeBackward)
            n.gradientCid = cid(rng);
        n = std::move(n).withMeta("shape", shape).withMeta("dtype", "f32");
        const std::string out = *n.outputCid;
        nodes.push_back(std::move(n));
        return out;
    };
    const std::string act = "[8,128]";
    std::string x = add("embedding", {cid(rng)}, act);
    // Exactly spec.nodeCount nodes (at least 3): embedding, whole blocks of
    // 12, a chain of dropouts for the remainder, then logits and the loss.
    const uint64_t body = std::max<uint64_t>(spec.nodeCount, 3) - 3;
    const uint64_t blocks = body / 12;
    for (uint64_t b = 0; b < blocks; ++b) {
        const std::string h = add("layer_norm", {x}, act);
        const std::string q = add("matmul", {h, cid(rng)}, act);
        const std::string k = add("matmul", {h, cid(rng)}, act);
        const std::string v = add("matmul", {h, cid(rng)}, act);
        const std::string a = add("attention", {q, k, v}, act);
        const std::string o = add("matmul", {a, cid(rng)}, act);
        const std::string r1 = add("add", {x, o}, act);
        const std::string h2 = add("layer_norm", {r1}, act);
        const std::string up = add("matmul", {h2, cid(rng)}, "[8,512]");
        const std::string ge = add("gelu", {up}, "[8,512]");
        const std::string dn = add("matmul", {ge, cid(rng)}, act);
        x = add("add", {r1, dn}, act);
    }
    for (uint64_t r = 0; r < body % 12; ++r)
        x = add("dropout", {x}, act);
    const std::string logits = add("matmul", {x, cid(rng)}, "[8,1000]");
    const std::string loss = add("cross_entropy", {logits, cid(rng)}, "[]");
    // Edges from CIDs through a producer index: addNode() scans every node,
    // which is quadratic for the 100k-node benchmark graphs.
    std::unordered_map<std::string, std::string> producerOf;
    for (const auto& n : nodes)
        producerOf.emplace(*n.outputCid, n.id);
    for (auto& n : nodes) {
        for (const std::string& in : n.inputCids) {
            const auto it = producerOf.find(in);
            if (it != producerOf.end())
                g.addEdge(it->second, n.id);
        }
        g.insertNode(std::move(n));
    }
    GradientCheckpoint ck(std::move(g), spec.step);
    ck.timestamp = 1732867200 + spec.seed;
    ck = std::move(ck).withLossCid(loss);
    // Adam moments of a few parameters, as f32 little-endian bytes.
    std::normal_distribution<float> moment(0.0f, 1e-3f);
    const uint64_t params =
        spec.optimizerBytes ? std::max<uint64_t>(1, spec.optimizerBytes / 4096) : 0;
    for (uint64_t p = 0; p < params && p < 64; ++p) {
        const uint64_t floats = spec.optimizerBytes / 4 / std::min<uint64_t>(params, 64);
        std::vector<uint8_t> bytes(size_t(floats * 4));
        for (uint64_t f = 0; f < floats; ++f) {
            const float m = moment(rng);
            std::memcpy(bytes.data() + f * 4, &m, 4);
        }
        ck.setOptimizerState("layers." + std::to_string(p / 2) + ".mlp.up.weight." +
                                 (p % 2 ? "exp_avg_sq" : "exp_avg"),
                             std::move(bytes));
    }
    return ck;
}

} // namespace ckptscope
