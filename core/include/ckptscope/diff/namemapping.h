#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ckptscope {

class Document;

// How the rows of B's tensor lie against A's: llama.cpp stores the rows of
// a Llama q_proj/k_proj interleaved per head for its rotary embedding (rows
// viewed as [heads, 2, rows / heads / 2] with the two middle axes swapped),
// so row r of the Hugging Face tensor is not row r of the GGUF one.
struct RowOrder {
    enum class Kind : uint8_t {
        Same,      // row r of A is row r of B
        BIsRotary, // B is the GGUF side: B holds A's rows interleaved
        AIsRotary, // A is the GGUF side: A holds B's rows interleaved
    };
    Kind kind = Kind::Same;
    uint32_t heads = 0;

    bool same() const { return kind == Kind::Same; }
    // The row of B that holds what row `aRow` of A holds (rows: the count
    // of the tensor's first dimension). Needs rows % (2 * heads) == 0.
    uint64_t rowOfB(uint64_t aRow, uint64_t rows) const;
    // The element of B that holds what element `aElement` of A holds
    // (rowLength: elements per row) — the one mapping every view of a pair
    // reads B through.
    uint64_t elementOfB(uint64_t aElement, uint64_t rows, uint64_t rowLength) const;
    // Whether the tensor's row count fits the permutation.
    bool fits(uint64_t rows) const;
};

// How tensor names of two files are matched in a comparison.
struct NameMapOptions {
    // llama.cpp's renaming (and q/k row order) when one side is GGUF and the
    // other is not and their names do not match as they are.
    bool builtIn = true;
    // "REGEX=REPLACEMENT" rewrites of B's names, after the built-in map
    // (ECMAScript regex, $1… in the replacement).
    std::vector<std::string> renames;
    // Removed from the front of names on both sides ("module.").
    std::string stripPrefix;
};

// The key each tensor is matched under, and how B's rows are ordered.
struct NamePairing {
    std::vector<std::string> keysA;  // per tensor of A
    std::vector<std::string> keysB;  // per tensor of B
    std::vector<RowOrder> rowOrderB; // per tensor of B
    // The built-in map used ("llama", "qwen2"…), empty when none.
    std::string builtInMap;
};

// Throws std::invalid_argument for a rename that is not "REGEX=REPLACEMENT"
// or whose regex does not compile (the message names it).
void checkRename(const std::string& rename);
// Throws as checkRename for each of options.renames.
NamePairing pairTensorNames(const Document& a, const Document& b, const NameMapOptions& options);

// A GGUF architecture's tensor name for a Hugging Face one and back
// ("model.layers.3.self_attn.q_proj.weight" <-> "blk.3.attn_q.weight");
// empty when the name is not one the map knows.
std::string ggufNameOf(const std::string& hfName);
std::string hfNameOf(const std::string& ggufName);

// Reads `count` values of B's tensor `index` starting at A's element
// `first`, in A's row order (rowLength: elements per row).
void readValuesInOrder(const Document& b, size_t index, const RowOrder& order, uint64_t rows,
                       uint64_t rowLength, uint64_t first, uint64_t count, float* out);

} // namespace ckptscope
