#include "ckptscope/diff/namemapping.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/document/document.h"

#include <algorithm>
#include <array>
#include <regex>
#include <stdexcept>
#include <unordered_set>

namespace ckptscope {

namespace {

// llama.cpp's names for the tensors of one decoder layer (convert_hf_to_gguf
// / gguf-py tensor_mapping), Hugging Face's first; ".weight" or ".bias"
// follows either.
constexpr std::array<std::pair<const char*, const char*>, 11> kLayerNames{{
    {"self_attn.q_proj", "attn_q"},
    {"self_attn.k_proj", "attn_k"},
    {"self_attn.v_proj", "attn_v"},
    {"self_attn.o_proj", "attn_output"},
    {"self_attn.q_norm", "attn_q_norm"},
    {"self_attn.k_norm", "attn_k_norm"},
    {"input_layernorm", "attn_norm"},
    {"post_attention_layernorm", "ffn_norm"},
    {"mlp.gate_proj", "ffn_gate"},
    {"mlp.up_proj", "ffn_up"},
    {"mlp.down_proj", "ffn_down"},
}};
constexpr std::array<std::pair<const char*, const char*>, 3> kModelNames{{
    {"model.embed_tokens", "token_embd"},
    {"model.norm", "output_norm"},
    {"lm_head", "output"},
}};

// Architectures whose GGUF names follow the map; the first ones also store
// q/k rows in rotary order (llama.cpp permutes them when converting).
struct Architecture {
    const char* name;
    bool rotaryRows;
};
constexpr std::array<Architecture, 4> kArchitectures{{
    {"llama", true},
    {"mistral", true},
    {"qwen2", false},
    {"qwen3", false},
}};

bool startsWith(const std::string& s, std::string_view prefix) {
    return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// "weight" / "bias" after the last dot, split off; false for anything else.
bool splitKind(const std::string& name, std::string& stem, std::string& kind) {
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos)
        return false;
    kind = name.substr(dot + 1);
    stem = name.substr(0, dot);
    return kind == "weight" || kind == "bias";
}

// "7." at the front of `rest` → 7 and what follows the dot.
bool splitLayer(const std::string& rest, std::string& layer, std::string& tail) {
    const size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos)
        return false;
    layer = rest.substr(0, dot);
    if (!std::all_of(layer.begin(), layer.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    tail = rest.substr(dot + 1);
    return true;
}

std::string metadataValue(const Document& doc, const std::string& key) {
    for (const auto& [k, v] : doc.metadata())
        if (k == key)
            return v;
    return {};
}

// Named as llama.cpp names tensors (GGUF).
bool isGguf(const Document& doc) {
    return doc.formatModule().llamaNames;
}

std::string stripped(const std::string& name, const std::string& prefix) {
    return !prefix.empty() && startsWith(name, prefix) ? name.substr(prefix.size()) : name;
}

size_t commonNames(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    const std::unordered_set<std::string> inA(a.begin(), a.end());
    return size_t(std::count_if(b.begin(), b.end(), [&](const auto& n) { return inA.count(n); }));
}

// Heads of the rotary permutation of a q or k tensor (by its Hugging Face
// name), 0 for other tensors.
uint32_t rotaryHeads(const std::string& hfName, const Document& gguf, const std::string& arch) {
    const bool q = hfName.find(".self_attn.q_proj.") != std::string::npos;
    const bool k = hfName.find(".self_attn.k_proj.") != std::string::npos;
    if (!q && !k)
        return 0;
    std::string heads = metadataValue(gguf, arch + ".attention.head_count");
    if (k) {
        const std::string kv = metadataValue(gguf, arch + ".attention.head_count_kv");
        if (!kv.empty())
            heads = kv;
    }
    try {
        const unsigned long n = std::stoul(heads);
        return n > 0 && n <= (1u << 20) ? uint32_t(n) : 0;
    } catch (const std::exception&) {
        return 0;
    }
}

std::vector<std::pair<std::regex, std::string>>
compileRenames(const std::vector<std::string>& renames) {
    std::vector<std::pair<std::regex, std::string>> out;
    for (const std::string& r : renames) {
        const size_t eq = r.find('=');
        if (eq == std::string::npos || eq == 0)
            throw std::invalid_argument("--rename wants REGEX=REPLACEMENT, got '" + r + "'");
        try {
            out.emplace_back(std::regex(r.substr(0, eq)), r.substr(eq + 1));
        } catch (const std::regex_error& e) {
            throw std::invalid_argument("--rename: '" + r.substr(0, eq) +
                                        "' is not a regular expression (" + e.what() + ")");
        }
    }
    return out;
}

} // namespace

void checkRename(const std::string& rename) {
    compileRenames({rename});
}

std::string ggufNameOf(const std::string& hfName) {
    std::string stem, kind;
    if (!splitKind(hfName, stem, kind))
        return {};
    for (const auto& [hf, gguf] : kModelNames)
        if (stem == hf)
            return std::string(gguf) + "." + kind;
    std::string layer, tail;
    if (!startsWith(stem, "model.layers.") || !splitLayer(stem.substr(13), layer, tail))
        return {};
    for (const auto& [hf, gguf] : kLayerNames)
        if (tail == hf)
            return "blk." + layer + "." + gguf + "." + kind;
    return {};
}

std::string hfNameOf(const std::string& ggufName) {
    std::string stem, kind;
    if (!splitKind(ggufName, stem, kind))
        return {};
    for (const auto& [hf, gguf] : kModelNames)
        if (stem == gguf)
            return std::string(hf) + "." + kind;
    std::string layer, tail;
    if (!startsWith(stem, "blk.") || !splitLayer(stem.substr(4), layer, tail))
        return {};
    for (const auto& [hf, gguf] : kLayerNames)
        if (tail == gguf)
            return "model.layers." + layer + "." + hf + "." + kind;
    return {};
}

bool RowOrder::fits(uint64_t rows) const {
    return same() || (heads > 0 && rows % (2 * uint64_t(heads)) == 0);
}

uint64_t RowOrder::rowOfB(uint64_t aRow, uint64_t rows) const {
    if (same())
        return aRow;
    const uint64_t half = rows / heads / 2; // rows per head and half
    const uint64_t head = aRow / (2 * half);
    const uint64_t within = aRow % (2 * half);
    if (kind == Kind::BIsRotary) {
        // A (Hugging Face) row head·2h + two·h + i sits at head·2h + 2i + two in B.
        return head * 2 * half + (within % half) * 2 + within / half;
    }
    // A (GGUF) row head·2h + 2i + two holds B's row head·2h + two·h + i.
    return head * 2 * half + (within % 2) * half + within / 2;
}

uint64_t RowOrder::elementOfB(uint64_t aElement, uint64_t rows, uint64_t rowLength) const {
    if (same() || rowLength == 0)
        return aElement;
    return rowOfB(aElement / rowLength, rows) * rowLength + aElement % rowLength;
}

NamePairing pairTensorNames(const Document& a, const Document& b, const NameMapOptions& options) {
    NamePairing p;
    for (const auto& t : a.tensors())
        p.keysA.push_back(stripped(t.name, options.stripPrefix));
    for (const auto& t : b.tensors())
        p.keysB.push_back(stripped(t.name, options.stripPrefix));
    p.rowOrderB.assign(p.keysB.size(), RowOrder{});

    if (options.builtIn && isGguf(a) != isGguf(b)) {
        const Document& gguf = isGguf(a) ? a : b;
        const std::string arch = metadataValue(gguf, "general.architecture");
        const auto known = std::find_if(kArchitectures.begin(), kArchitectures.end(),
                                        [&](const Architecture& x) { return arch == x.name; });
        if (known != kArchitectures.end()) {
            std::vector<std::string> mapped = p.keysB;
            std::vector<RowOrder> orders(mapped.size());
            for (size_t j = 0; j < mapped.size(); ++j) {
                const std::string other = isGguf(b) ? hfNameOf(mapped[j]) : ggufNameOf(mapped[j]);
                if (other.empty())
                    continue;
                const std::string hf = isGguf(b) ? other : mapped[j];
                mapped[j] = other;
                if (known->rotaryRows)
                    if (const uint32_t heads = rotaryHeads(hf, gguf, arch))
                        orders[j] = RowOrder{isGguf(b) ? RowOrder::Kind::BIsRotary
                                                       : RowOrder::Kind::AIsRotary,
                                             heads};
            }
            if (commonNames(p.keysA, mapped) > commonNames(p.keysA, p.keysB)) {
                p.keysB = std::move(mapped);
                p.rowOrderB = std::move(orders);
                p.builtInMap = arch;
            }
        }
    }
    // std::regex matches by recursion, about 300 bytes of stack per
    // character of `(.*)`: a 30 000-byte name overflowed the main thread's
    // 8 MiB. No packaged engine here is free of it but Qt's (not in the
    // core); names this long are not model names, so they are refused.
    constexpr size_t kMaxRenamed = 4096;
    for (const auto& [re, replacement] : compileRenames(options.renames))
        for (size_t j = 0; j < p.keysB.size(); ++j) {
            std::string& key = p.keysB[j];
            if (key.size() > kMaxRenamed)
                throw std::invalid_argument("--rename applies to tensor names of at most " +
                                            fmt::grouped(kMaxRenamed) + " bytes; tensor " +
                                            fmt::grouped(j + 1) + " of B (" + b.path() + ") has " +
                                            fmt::grouped(key.size()));
            key = std::regex_replace(key, re, replacement);
        }
    return p;
}

void readValuesInOrder(const Document& b, size_t index, const RowOrder& order, uint64_t rows,
                       uint64_t rowLength, uint64_t first, uint64_t count, float* out) {
    if (order.same() || rowLength == 0) {
        b.readValues(index, first, count, out);
        return;
    }
    // Row by row (a piece of one at either end of the range).
    for (uint64_t done = 0; done < count;) {
        const uint64_t element = first + done;
        const uint64_t take = std::min(rowLength - element % rowLength, count - done);
        b.readValues(index, order.elementOfB(element, rows, rowLength), take, out + done);
        done += take;
    }
}

} // namespace ckptscope
