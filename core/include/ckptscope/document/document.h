#pragma once

#include "ckptscope/formats/formatindex.h"
#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/formats/openerror.h"
#include "ckptscope/formats/tensorvalues.h"
#include "ckptscope/io/bytesource.h"
#include "ckptscope/io/mappedfile.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ckptscope {

// One format-neutral, immutable view of an opened file. The UI and the CLI
// talk only to this. Tensor values are read on demand from the file.
class Document {
public:
    // Detects the format by content (formatModules()) and indexes the file
    // with that format's module. A folder opens as the sharded model it
    // holds (findShardedModelIn: one *.safetensors.index.json, or one
    // complete NAME-0000N-of-0000M.safetensors set); an http(s) URL is read
    // by range requests (io/httpsource.h). Throws OpenError.
    static std::shared_ptr<const Document> open(const std::string& path);
    // True when open(folder) reads the folder as one model (a sharded model,
    // a DeepSpeed checkpoint) rather than it being a run of checkpoints.
    static bool isModelFolder(const std::string& folder);
    // A folder (local, or an s3:// prefix: listed) that holds no one model:
    // a run of checkpoints, for timeline and the run window.
    static bool isRunFolder(const std::string& path);
    // Same, over bytes already in hand (fuzzers, tests).
    static std::shared_ptr<const Document> open(std::shared_ptr<const ByteSource> source);

    Format format() const { return m_module->format; }
    // The module that read the file: its name and description for front ends.
    const FormatModule& formatModule() const { return *m_module; }
    // What the module indexed, for its own hooks (FormatModule::headerFields…).
    const FormatIndex& index() const { return m_index; }
    // The file opened (for a sharded model its index), or the folder.
    const std::string& path() const { return m_path; }
    // The file's size; for a multi-file model the sum of its shards' sizes.
    uint64_t fileSize() const;

    // The format's version and flags fields (OXCK); 0 where it has none.
    uint32_t version() const { return m_index.version; }
    uint64_t flags() const { return m_index.flags; }
    // The data section's start and tensor alignment (GGUF); 0 where none.
    uint64_t dataStart() const { return m_index.dataStart; }
    uint32_t alignment() const { return m_index.alignment; }
    const std::vector<TensorEntry>& tensors() const { return m_index.tensors; }
    const std::vector<IndexWarning>& warnings() const { return m_index.warnings; }
    // Metadata as key/value rows (OXCK or safetensors metadata, or gradient
    // summary fields).
    const std::vector<std::pair<std::string, std::string>>& metadata() const { return m_metadata; }
    // The same rows, each saying what kind of value it holds.
    const std::vector<MetadataRow>& metadataRows() const { return m_index.metadata; }
    // Sum of element counts (saturating; a tensor viewing the very elements
    // another views counts once) and of the bytes they take: a tensor's own
    // bytes in its dtype, each storage that tensors view once and whole.
    uint64_t numParams() const;
    uint64_t totalBytes() const;
    // Tensors that view a storage some other tensor views too (tied
    // weights, slices of one buffer); 0 for formats without storages.
    size_t tensorsSharingStorage() const;
    // The storages and views behind tensors that do not own their bytes
    // (TensorEntry::view); empty for today's single-run formats.
    const std::vector<TensorStorage>& storages() const { return m_index.storages; }
    const std::vector<TensorView>& views() const { return m_index.views; }
    // The metadata as a tree of values, for formats whose metadata is one
    // (empty otherwise: their metadata is metadataRows()).
    const ObjectTree& objects() const { return m_index.objects; }
    // What the file's pickle would import, and per tensor what a pickled
    // tensor is beyond its view (PyTorch; empty for other formats).
    const std::vector<PickleImport>& imports() const { return m_index.imports; }
    const std::vector<TensorTraits>& traits() const { return m_index.traits; }
    // True for formats whose tensors() list the file's content (OXCK,
    // safetensors), false for graph formats (gradient checkpoints).
    bool hasTensors() const { return !m_index.gradient; }

    // Gradient checkpoints only.
    const GradientCheckpoint* gradient() const {
        return m_index.gradient ? &*m_index.gradient : nullptr;
    }
    // The graph's topological order and the nodes left out of it, computed
    // once when the file is opened (empty for tensor files): a pass over a
    // large graph costs as much as validating it.
    const ComputationGraphStore::TopologicalSplit& graphSplit() const { return m_index.graphSplit; }

    // Reads count values of tensor `index` starting at element `first`.
    // Throws SourceChangedError if the file changed while reading.
    // Values of any dtype arrive converted to f32 by the one decoder
    // (formats/tensorvalues.h: exact for F32, F16, BF16, F8, 8/16-bit
    // integers and BOOL; rounded for 32/64-bit integers and F64).
    void readValues(size_t index, uint64_t first, uint64_t count, float* out) const;
    // The same in double (F64 statistics; exact for every dtype but 64-bit
    // integers beyond 2^53).
    void readValues(size_t index, uint64_t first, uint64_t count, double* out) const;
    // The same values in their storage's order where the tensor is a
    // transposed or permuted view of one run of it (readTensorValuesIn-
    // StorageOrder), for figures that need no order: statistics.
    void readValuesInStorageOrder(size_t index, uint64_t first, uint64_t count, float* out) const;
    void readValuesInStorageOrder(size_t index, uint64_t first, uint64_t count, double* out) const;
    // The stored little-endian bytes of count elements in the tensor's dtype.
    void readRawValues(size_t index, uint64_t first, uint64_t count, void* out) const;
    // count values of a complex tensor as (real, imaginary) doubles, 2 count
    // of them (exact); throws for a tensor that is not complex.
    void readComplexValues(size_t index, uint64_t first, uint64_t count, double* out) const;
    // Items [first, first + count) of a metadata array (a GGUF tokenizer's
    // strings), as text, read from the file when asked: an array is one row
    // (MetadataRow::array) however long it is.
    std::vector<std::string> arrayItems(const MetadataArray& array, uint64_t first,
                                        uint64_t count) const;
    // The first `count` items of an array, with the nested arrays among them
    // and the rest of it (a tree expanded item by item, a chunk at a time).
    MetadataArrayRun arrayRun(const MetadataArray& array, uint64_t count) const;
    // Where the values of an F32 tensor lie in the file's memory map, for
    // scanning them in place (statistics, comparison); empty for other
    // dtypes, or when mapForScan says to copy for this use: then read them.
    std::optional<MappedValues> mappedValues(size_t index, ScanUse use = ScanUse::Statistics) const;
    // The file opened: for a sharded model its index (or first shard, for
    // a folder without one); the tensors' bytes are in their shard's source.
    const ByteSource& source() const { return *m_source; }

    // Multi-file models (sharded safetensors, GGUF splits): each shard's name as the
    // index writes it, in shard order (TensorEntry::shard); empty for one file.
    bool isSharded() const { return !m_index.shards.empty(); }
    const std::vector<IndexShard>& shards() const { return m_index.shards; }
    // Every file (or URL) the document reads, as opened: the file opened
    // (for a sharded model its index or first shard), then each shard's not
    // already named. A front end watches them all for a writer.
    std::vector<std::string> sourceNames() const;
    // The shard file name of tensor `index` ("" for a single file).
    const std::string& shardName(size_t index) const;
    // The index file's own metadata (total_size…), not the model's: shown
    // apart and never compared.
    const std::vector<MetadataRow>& indexMetadata() const { return m_index.indexMetadata; }

    // The model a conversion writes (FormatModule::converted): a document of
    // those tensors under those names, reading the same files; null when it
    // is this document itself. `leftOut` names what it leaves out.
    std::shared_ptr<const Document> convertedModel(std::string& leftOut,
                                                   const ConvertChoice& choice = {}) const;
    // True for a converted model's tensor that a conversion writes as F32
    // whatever its dtype (ConvertedTensor::asF32).
    bool writtenAsF32(size_t index) const { return index < m_asF32.size() && m_asF32[index]; }

    ~Document();

private:
    Document();
    static std::shared_ptr<const Document> openFolder(const std::string& path);
    // A folder format's model in `located` (the folder `path` leads to).
    static std::shared_ptr<const Document>
    openFolderAs(const FolderFormat& format, const std::string& path, const std::string& located);
    void keepIndex(FormatIndex index);
    // Throws, naming the tensor, when `count` values of a meta tensor
    // (TensorTraits::meta) are asked for: it holds none.
    void refuseMeta(size_t index, uint64_t count) const;
    const ByteSource& sourceOf(const TensorEntry& t) const;

    const FormatModule* m_module = nullptr;
    std::string m_path;
    std::shared_ptr<const ByteSource> m_source;
    FormatIndex m_index;
    std::vector<std::pair<std::string, std::string>> m_metadata;
    std::vector<bool> m_asF32; // per tensor of a converted model
    // Storages that strided views read whole (formats/storagecache.h).
    std::unique_ptr<StorageCache> m_storageCache;
    TensorSources sources() const;
};

} // namespace ckptscope
