#pragma once

#include "ckptscope/formats/dtype.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/formats/objecttree.h"
#include "ckptscope/io/bytesource.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// Marks a TensorEntry that owns its bytes (no TensorView).
inline constexpr uint32_t kNoView = UINT32_MAX;
// The most files one model may span (TensorEntry::shard).
inline constexpr size_t kMaxShards = UINT16_MAX;

// One tensor as indexed: everything but the values. The common case (OXCK,
// safetensors, GGUF) owns one contiguous run of bytes at dataOffset in its
// shard; a view over a storage, or a tensor made of pieces, says so by
// `view` (FormatIndex::views), so the common case pays no more for them.
struct TensorEntry {
    std::string name;
    std::vector<uint64_t> shape;
    uint64_t dataLen = 0;    // elements stored (of dtype)
    uint64_t dataOffset = 0; // byte offset of the first value (the first block)
    uint64_t headerOffset = 0;
    // Product of shape (0 for an empty shape); empty when it overflows u64.
    std::optional<uint64_t> elementCount;
    Dtype dtype = Dtype::F32;
    // The file of a multi-file model holding the bytes (FormatIndex::shards);
    // 0 for a single file. 16 bits (ggml's split count is a u16; an index of
    // more shards is refused, kMaxShards), so that `view` fits where the
    // padding was and an entry costs what it did (104 bytes).
    uint16_t shard = 0;
    // FormatIndex::views: a strided view over a storage or a tensor made of
    // pieces; kNoView for a tensor that owns its contiguous bytes (a meta
    // tensor owns none: TensorTraits::meta). A view's
    // dataLen is its element count and its dataOffset the byte where its
    // first element lies (used as is when the view is contiguous).
    uint32_t view = kNoView;
};

// One record of bytes that tensors view (a PyTorch storage): every tensor
// viewing it names it by its index in FormatIndex::storages, so tied
// weights are seen to share it and its bytes are counted once.
struct TensorStorage {
    std::string key;     // the format's name for it ("data/0"), for people
    uint32_t shard = 0;  // the file holding it (FormatIndex::shards), 0 for one file
    uint64_t offset = 0; // its first byte in that file
    uint64_t bytes = 0;
    Dtype dtype = Dtype::F32; // of its elements
    // Stored big-endian (a torch.save with byteorder "big"): values are
    // swapped to little-endian when read.
    bool bigEndian = false;
    // Found on first read (FormatIndex::resolver): the storage lies inside a
    // container not read at open (a DCP chunk's torch.save archive, whose
    // first byte is `offset` and length `containerBytes`); `bytes` is what
    // the plan says it holds. Read through storageAt(), never directly.
    bool deferred = false;
    uint64_t containerBytes = 0;
    // A piece's storage that holds its box as a strided view (a DCP chunk
    // torch saved without making it contiguous: a transposed tensor): the
    // element strides of the box's dimensions, from `offset`. Empty when the
    // box lies in C order.
    std::vector<int64_t> boxStrides = {};
};

// Finds deferred storages (TensorStorage::deferred) when a read first needs
// them: a DCP folder's thousands of chunk archives are not read at open.
// Thread-safe; each storage is resolved once and kept.
class StorageResolver {
public:
    virtual ~StorageResolver() = default;
    // The storage as it lies in its file. Throws CheckpointError naming the
    // file and the tensor when its container is not what the plan says.
    virtual const TensorStorage& resolve(uint32_t storage) const = 0;
};

// A box of a tensor kept in a storage of its own, in C order unless the
// storage gives its strides (a PyTorch DCP chunk). One offset and one size on a tensor of more than
// one dimension is a run of the flattened tensor instead (a DeepSpeed ZeRO partition, cut
// anywhere).
struct TensorPiece {
    std::vector<uint64_t> offsets; // in the tensor's shape
    std::vector<uint64_t> sizes;
    uint32_t storage = 0;       // FormatIndex::storages
    uint64_t elementOffset = 0; // its first element in that storage
};

// How a tensor that does not own its bytes finds them: a strided view over
// one storage, or pieces (then storage, elementOffset and strides are unused).
struct TensorView {
    uint32_t storage = 0;       // FormatIndex::storages
    uint64_t elementOffset = 0; // of element [0, 0, …] in that storage
    // In elements, one per dimension, possibly 0 (an expanded tensor);
    // empty when the view is C-contiguous.
    std::vector<int64_t> strides;
    std::vector<TensorPiece> pieces;
};

// What a global a pickle names could do were the file loaded by Python
// (Ckptscope never imports it): data only, run code or touch the system,
// or not known.
enum class ImportRisk : uint8_t { Safe, Unknown, Unsafe };

// A global a file's pickle names: what torch.load would import.
struct PickleImport {
    std::string name;   // module.name as the pickle writes it ("__builtin__.getattr")
    uint64_t count = 0; // how many times the pickle names it
    ImportRisk risk = ImportRisk::Safe; // the worst of its uses
    // ObjectTree nodes (Object or Call) of the calls that make it unsafe,
    // whose arguments a scanner reports (the payload).
    std::vector<uint32_t> calls;
};

// What a pickled tensor is beyond its view (PyTorch).
struct TensorTraits {
    // The first tensor that is the very same object (a pickle's memo: the
    // same tensor reached by two paths), UINT32_MAX for none.
    uint32_t sameAs = UINT32_MAX;
    bool requiresGrad = false;
    bool isParameter = false; // an nn.Parameter
    // An optimizer's state tensor: the name of the parameter it belongs to,
    // inferred from the parameter groups' order ("" when not known).
    std::string parameter;
    // A quantized tensor's quantizer parameters as Python writes them
    // ("(torch.per_tensor_affine, 0.1, 0)"); "" for any other tensor.
    std::string quantization;
    // A tensor on the meta device (torch._utils._rebuild_meta_tensor_no_storage):
    // torch saved its dtype and shape, no values; its entry stores 0 and
    // owns no bytes (no view).
    bool meta = false;
};

struct IndexWarning {
    std::string message;
    std::optional<size_t> tensor; // index into tensors, when about one
    // A file or folder the warning points to, which a front end offers to
    // open (a shard's whole model); "" for none.
    std::string opens = {};
};

// One file of a multi-file model: a shard of a sharded safetensors model
// (a GGUF split the same way).
struct IndexShard {
    std::shared_ptr<const ByteSource> source;
    std::string name; // as the model's index writes it, relative to the index's folder
};

// What a metadata value is, so front ends can show it in their own way
// without knowing which format uses which key.
enum class MetadataKind {
    Text,      // shown as stored
    Integer,   // decimal digits
    Timestamp, // Unix time in seconds, decimal
};

// An array value left in the file: `value` is its summary ("[151936 × str]")
// and its items are read on demand from `offset` (GGUF: readGgufArrayItems),
// so a 150 000-token vocabulary costs one row at open.
struct MetadataArray {
    uint64_t offset = 0; // of the first item
    uint64_t count = 0;
    uint32_t itemType = 0; // the format's own type code
};

// Items read from the head of a MetadataArray (Document::arrayRun): their
// text, the nested arrays among them (to be read in turn), and the array of
// the items after them, to read on from without skipping these again.
struct MetadataArrayRun {
    std::vector<std::string> items; // strings as stored, numbers in decimal, arrays as summaries
    std::vector<std::optional<MetadataArray>> nested; // per item: the array it is, if it is one
    MetadataArray rest;
};

struct MetadataRow {
    MetadataRow() = default;
    MetadataRow(std::string k, std::string v, MetadataKind c = MetadataKind::Text)
        : key(std::move(k)), value(std::move(v)), kind(c) {}

    std::string key;
    std::string value; // as stored (or, for summary fields, as the file spells them)
    MetadataKind kind = MetadataKind::Text;
    std::string type; // the format's name for the value's type ("u32", "arr[str]"); "" if none
    std::optional<MetadataArray> array;
};

// What a format module's opener yields: everything of a file but the values,
// in no format's terms. A tensor format fills `tensors`; a graph format
// (gradient checkpoints) fills `gradient` and `graphSplit` instead.
struct FormatIndex {
    uint32_t version = 0; // the format's own version field, 0 where it has none
    uint64_t flags = 0;
    // Where the tensor data begins and the alignment of each tensor in it,
    // for formats that declare one (GGUF); 0 otherwise.
    uint64_t dataStart = 0;
    uint32_t alignment = 0;
    std::vector<TensorEntry> tensors;
    std::vector<MetadataRow> metadata;
    std::vector<IndexWarning> warnings;
    std::optional<GradientCheckpoint> gradient;
    // The graph's topological order and the nodes left out of it, computed
    // once at open: a pass over a large graph costs as much as validating it.
    ComputationGraphStore::TopologicalSplit graphSplit;
    // A multi-file model: the files its tensors lie in, TensorEntry::shard
    // indexing them. Empty for a single file: the tensors lie in the file
    // that was opened.
    std::vector<IndexShard> shards;
    // The index file's own metadata (sharded safetensors: "metadata", with
    // total_size): shown apart from the model's and never compared.
    std::vector<MetadataRow> indexMetadata;
    // Tensors that view storages or are made of pieces (TensorEntry::view):
    // the storages and the views. Empty for formats whose tensors own their
    // bytes.
    std::vector<TensorStorage> storages;
    std::vector<TensorView> views;
    // Resolves the deferred storages; null when there are none.
    std::shared_ptr<const StorageResolver> resolver;
    // Metadata that is a tree of values (a PyTorch checkpoint's object, its
    // tensors as ObjectKind::Tensor nodes); empty for formats whose metadata
    // is the flat `metadata` rows.
    ObjectTree objects;
    // The globals a pickle names (PyTorch), sorted by name; empty otherwise.
    std::vector<PickleImport> imports;
    // Per tensor, for formats whose tensors are pickled objects; empty otherwise.
    std::vector<TensorTraits> traits;
};

// The storage as it lies in its file: resolved through index.resolver when
// deferred. Throws CheckpointError for a storage not in the index or one
// that cannot be resolved.
const TensorStorage& storageAt(const FormatIndex& index, uint32_t storage);

// Sum of the tensors' element counts (saturating); a tensor viewing the very
// elements another views (tied weights saved twice) counts once.
uint64_t indexParams(const FormatIndex& index);
// The bytes the tensors take: a tensor's own in its dtype, each storage that
// tensors view once and whole (a slice saved alone keeps its whole storage).
uint64_t indexBytes(const FormatIndex& index);
// Tensors that view a storage some other tensor views too.
size_t tensorsSharingStorage(const FormatIndex& index);

// Whether tensor `i` is a meta tensor (TensorTraits::meta), and what every
// reader says of one.
inline bool isMetaTensor(const FormatIndex& index, size_t i) {
    return i < index.traits.size() && index.traits[i].meta;
}
inline constexpr const char* kMetaTensorNote =
    "a meta tensor: torch saved its dtype and shape, no values";

// Product of a shape with the reference quirk (empty shape → 0); nullopt on
// u64 overflow.
std::optional<uint64_t> shapeElementCount(const std::vector<uint64_t>& shape);

// The bytes the tensor's elements take in its dtype; nullopt when unknown or
// over 64 bits.
std::optional<uint64_t> tensorSizeBytes(const TensorEntry& tensor);
// Stored bits per element (4.5 for Q4_K, 32 for F32); nullopt for an empty
// tensor or an unknown size (info --json, the compare view).
std::optional<double> tensorBitsPerWeight(const TensorEntry& tensor);

} // namespace ckptscope
