#pragma once

#include "ckptscope/diff/elementdiff.h"
#include "ckptscope/diff/namemapping.h"
#include "ckptscope/document/document.h"

#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// DtypeChanged: the values are equal (under the tolerance) but stored in
// another dtype; never called "changed".
// Tied: a tensor only one side lists that, on its side, views the very
// elements of another tensor both sides have (a tied weight, which
// safetensors stores once where a torch.save file names it twice): not a
// difference.
enum class DiffStatus { Same, Changed, Added, Removed, ShapeChanged, DtypeChanged, Tied };
// "same", "changed", "added", "removed", "shape_changed", "dtype_changed",
// "tied".
const char* diffStatusName(DiffStatus status);

// One tensor name (one occurrence of it: the k-th `x` of A pairs with the
// k-th `x` of B) in the comparison of two tensor documents.
struct TensorDiffEntry {
    std::string name;   // A's name (B's for a tensor only B has)
    std::string nameB;  // B's name when it differs (a mapped pair), else empty
    RowOrder rowOrderB; // how B's rows lie against A's (a Llama GGUF's q/k)
    std::string tiedTo; // Tied: the tensor of its side whose elements it views
    DiffStatus status = DiffStatus::Same;
    std::optional<size_t> indexA, indexB; // into each document's tensors()
    std::optional<std::vector<uint64_t>> shapeA, shapeB;
    std::optional<std::string> dtypeA, dtypeB;
    // Filled when the values were compared: same shape and same stored
    // value count on both sides (status same or changed).
    std::optional<ElementDiff> elements;
};

struct MetadataDiffEntry {
    std::string key;
    DiffStatus status = DiffStatus::Same; // same, changed, added or removed
    std::optional<std::string> a, b;      // the values' text as stored
    // What differs besides the text: the format's type names when they
    // differ (a u32 1 and an i32 1), and for two arrays of one summary
    // ("[100 × str]") where their items first differ ("item 37 = foo").
    std::string typeA, typeB, itemA, itemB;
    // Side a (or b) as shown: its text with those ("1 (u32)",
    // "[100 × str], item 37 = foo").
    std::optional<std::string> shown(bool sideB) const;
};

struct TensorDiffSummary {
    uint64_t same = 0, changed = 0, added = 0, removed = 0, shapeChanged = 0, dtypeChanged = 0;
    uint64_t tied = 0;
    uint64_t differingElements = 0;
    uint64_t nonFiniteMismatch = 0; // tensors with a NaN or Inf mismatch
};

// Two tensor documents compared, A the reference.
struct TensorDiff {
    std::vector<MetadataDiffEntry> metadata; // sorted by key
    // A's tensors in file order, then B-only tensors in B's order.
    std::vector<TensorDiffEntry> tensors;
    TensorDiffSummary summary;
    // The built-in name map used ("llama", "qwen2"…: llama.cpp's names on
    // the GGUF side), empty when tensors paired by their own names.
    std::string nameMap;
    // Anything at all differs: a tensor or a metadata entry.
    bool differs() const;
};

// Pairs where NaN or an infinity stands against anything but itself.
uint64_t nonFiniteMismatches(const TensorDiffEntry& e);
// The order "most changed first" (CLI text, compare view): tensors with NaN
// or Inf mismatches first (more of them first), then by relative L2 change
// (those without one after), then by name.
bool changedMore(const TensorDiffEntry& x, const TensorDiffEntry& y);
// The index of the most changed tensor that differs in values (changedMore),
// else of the first stored in another dtype, or -1 when none is either.
int mostChangedTensor(const TensorDiff& diff);

// A tensor name that neither document holds (limits given by the caller).
class UnknownTensorError : public std::exception {
public:
    explicit UnknownTensorError(std::string name);
    const char* what() const noexcept override { return m_message.c_str(); }
    const std::string& name() const { return m_name; }

private:
    std::string m_name, m_message;
};

// Reads values of tensor `index` of doc; any failure (damaged, changed on
// disk) is thrown as OpenError naming the document's file, so a reader of
// two files says which one failed.
ValueReader tensorReader(const Document& doc, size_t index);
// The same in double (F64 and integer tensors: exact up to 2^53).
ValueReaderF64 tensorReaderF64(const Document& doc, size_t index);
// A complex tensor's values as (real, imaginary) doubles, 2 n for n values.
ValueReaderF64 complexReader(const Document& doc, size_t index);

// Compares two tensor documents; `only` (when not empty) limits the tensors
// compared to those names (every occurrence, A's names), metadata is always
// compared. Tensors pair under `names` (namemapping.h): by default a GGUF
// against a Hugging Face model pairs llama.cpp's names with the originals
// and reads a Llama q/k tensor's rows in the other side's order.
// Values are read block by block from both files. Throws
// UnknownTensorError for a name in neither document, OpenError naming the
// side whose file failed while its values were read (damaged, changed on
// disk), and Cancelled.
TensorDiff diffTensors(const Document& a, const Document& b, const DiffOptions& options,
                       const std::vector<std::string>& only = {}, const NameMapOptions& names = {});

} // namespace ckptscope
