#include "ckptscope/document/document.h"
#include "ckptscope/formats/storagecache.h"

#include "ckptscope/common/printable.h"
#include "ckptscope/common/saturating.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/tensorvalues.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/io/folderlisting.h"
#include "ckptscope/io/httpsource.h"

#include "formats/safetensors/shardedmodel.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <new>

namespace ckptscope {

namespace {

// "; it holds 2 files (a.json, b.txt) and 1 folder (logs)": what a folder
// that is no model holds, its first names, for the error to say.
std::string whatFolderHolds(const std::string& folder) {
    std::vector<FolderEntry> entries;
    try {
        entries = listFolder(folder);
    } catch (const IoError&) {
        return {};
    }
    std::string files, folders;
    size_t nFiles = 0, nFolders = 0;
    for (const FolderEntry& e : entries) {
        size_t& n = e.folder ? nFolders : nFiles;
        std::string& names = e.folder ? folders : files;
        if (++n <= 3)
            names += (n > 1 ? ", " : "") + printable(e.name);
        else if (n == 4)
            names += ", …";
    }
    if (nFiles + nFolders == 0)
        return "; it is empty";
    const auto part = [](size_t n, const char* one, const char* many, const std::string& names) {
        return n == 0 ? std::string()
                      : std::to_string(n) + " " + (n == 1 ? one : many) + " (" + names + ")";
    };
    const std::string a = part(nFiles, "file", "files", files);
    const std::string b = part(nFolders, "folder", "folders", folders);
    return "; it holds " + a + (a.empty() || b.empty() ? "" : " and ") + b;
}

} // namespace

std::shared_ptr<const Document> Document::open(const std::string& path) {
    // A prefix in a bucket is listed once, whichever readers ask about it.
    const ListingScope listings;
    const bool s3 = isS3Url(path);
    std::error_code ec;
    if (s3 ? namesS3Prefix(path) : std::filesystem::is_directory(path, ec))
        return openFolder(folderPath(path));
    // A folder format's entry file (a DCP's .metadata) stands for its folder,
    // on a server too.
    const std::filesystem::path file(path);
    for (const FolderFormat& f : folderFormats())
        if (f.entryFile && file.filename() == f.entryFile &&
            (isUrl(path) || isModelFolder(file.parent_path().string())))
            return openFolderAs(f, file.parent_path().string(), file.parent_path().string());
    std::shared_ptr<const ByteSource> source;
    try {
        source = openByteSource(path);
    } catch (const IoError& e) {
        // s3://bucket/run/checkpoint-50: a prefix named without its '/'.
        if (s3 && isFolder(path))
            return openFolder(path);
        throw OpenError(path, e.what());
    }
    return open(std::move(source));
}

std::shared_ptr<const Document> Document::open(std::shared_ptr<const ByteSource> source) {
    std::shared_ptr<Document> doc(new Document);
    doc->m_source = std::move(source);
    const ByteSource& src = *doc->m_source;
    doc->m_path = src.name();
    try {
        doc->m_module = &detectFormat(src);
        doc->keepIndex(doc->m_module->open(src));
    } catch (const OpenError&) {
        throw;
    } catch (const std::bad_alloc&) {
        // Every count is checked before allocating, so this is a genuinely
        // large file on a small machine, not a hostile count.
        throw OpenError(src.name(), "not enough memory to open this file (" +
                                        std::to_string(src.size()) + " bytes)");
    } catch (const std::exception& e) {
        // CheckpointError, GradientError, IoError, SourceChangedError: all
        // carry the file name already.
        throw OpenError(src.name(), e.what());
    }
    return doc;
}

bool Document::isModelFolder(const std::string& folder) {
    if (!isFolder(folder))
        return false;
    for (const FolderFormat& f : folderFormats()) {
        try {
            if (!f.locate(folder).empty())
                return true;
        } catch (const std::exception&) {
            return true; // a damaged pointer (`latest`): opening it says what is wrong
        }
    }
    return findShardedModelIn(folder).isModel() || findShardedModelIn(folder, ".bin").isModel();
}

bool Document::isRunFolder(const std::string& path) {
    return isFolder(path) && !isModelFolder(folderPath(path));
}

// A folder is the model it holds: a folder format's (DeepSpeed, DCP), else
// a sharded model by its index, else by its one complete shard set (shards
// in number order).
std::shared_ptr<const Document> Document::openFolder(const std::string& path) {
    if (isS3Url(path)) {
        // A prefix is listed before any reader asks: its trouble (403, no
        // such bucket) is said as it is, and an empty one as empty.
        try {
            if (listFolder(path).empty())
                throw OpenError(path, "nothing is stored under this prefix");
        } catch (const IoError& e) {
            throw OpenError(path, e.what());
        }
    }
    for (const FolderFormat& f : folderFormats()) {
        std::string located;
        try {
            located = f.locate(path);
        } catch (const std::exception& e) {
            throw OpenError(path, e.what());
        }
        if (!located.empty())
            return openFolderAs(f, path, located);
    }
    // A safetensors model first, as transformers prefers it; else torch.save shards.
    ShardedFolder found = findShardedModelIn(path);
    if (!found.isModel())
        if (ShardedFolder bin = findShardedModelIn(path, ".bin"); bin.isModel())
            found = std::move(bin);
    if (!found.index.empty())
        return open(pathInFolder(path, found.index));
    if (!found.set)
        throw OpenError(path, found.problem.empty()
                                  ? "a folder holding no sharded model (no "
                                    "*.safetensors.index.json, no NAME-00001-of-0000M.safetensors "
                                    "set" +
                                        whatFolderHolds(path) +
                                        "); open a file, or the folder as a run"
                                  : found.problem);
    std::shared_ptr<Document> doc(new Document);
    doc->m_path = path;
    try {
        static const FormatModule safetensors = shardedSafetensorsFormat();
        static const FormatModule pytorch = shardedPytorchFormat();
        doc->m_module = found.set->extension == ".safetensors" ? &safetensors : &pytorch;
        doc->keepIndex(openShardSet(path, *found.set));
        doc->m_source = doc->m_index.shards.front().source;
    } catch (const std::bad_alloc&) {
        throw OpenError(path, "not enough memory to open this model");
    } catch (const std::exception& e) {
        throw OpenError(path, e.what());
    }
    return doc;
}

std::shared_ptr<const Document> Document::openFolderAs(const FolderFormat& format,
                                                       const std::string& path,
                                                       const std::string& located) {
    std::shared_ptr<Document> doc(new Document);
    doc->m_path = path;
    try {
        doc->m_module = &format.module;
        doc->keepIndex(format.open(located));
        doc->m_source = doc->m_index.shards.front().source;
    } catch (const std::bad_alloc&) {
        throw OpenError(path, "not enough memory to open this checkpoint");
    } catch (const std::exception& e) {
        throw OpenError(path, e.what());
    }
    return doc;
}

std::shared_ptr<const Document> Document::convertedModel(std::string& leftOut,
                                                         const ConvertChoice& choice) const {
    if (!m_module->converted)
        return nullptr;
    const std::vector<ConvertedTensor> chosen = m_module->converted(m_index, choice);
    std::shared_ptr<Document> doc(new Document);
    doc->m_module = m_module;
    doc->m_path = m_path;
    doc->m_source = m_source;
    doc->m_metadata = m_metadata;
    FormatIndex& index = doc->m_index;
    index.shards = m_index.shards;
    index.storages = m_index.storages;
    index.views = m_index.views;
    index.resolver = m_index.resolver;
    index.metadata = m_index.metadata;
    std::vector<bool> kept(m_index.tensors.size());
    std::vector<uint32_t> renumbered(m_index.tensors.size(), kNoNode);
    for (const ConvertedTensor& c : chosen) {
        TensorEntry t = m_index.tensors.at(c.tensor);
        t.name = c.name;
        renumbered.at(c.tensor) = uint32_t(index.tensors.size());
        index.tensors.push_back(std::move(t));
        doc->m_asF32.push_back(c.asF32);
        if (c.tensor < m_index.traits.size()) { // a meta tensor stays one; the optimizer's names
            TensorTraits traits = m_index.traits[c.tensor];
            traits.sameAs = UINT32_MAX; // renumbered: each written whole
            index.traits.resize(index.tensors.size() - 1);
            index.traits.push_back(std::move(traits));
        }
        kept[c.tensor] = true;
    }
    // The tree stays, so that the values that are not tensors are named as
    // left out; a tensor left out is still a tensor there (counted below).
    index.objects = m_index.objects;
    for (ObjectNode& n : index.objects.nodes)
        if (n.kind == ObjectKind::Tensor && n.tensor < renumbered.size())
            n.tensor = renumbered[n.tensor];
    // What is left out, counted by the first part of its name (module.*,
    // exp_avg.*, …): every tensor accounted for, none cut from the list.
    std::vector<std::pair<std::string, size_t>> groups;
    size_t left = 0;
    for (size_t i = 0; i < kept.size(); ++i) {
        if (kept[i])
            continue;
        ++left;
        const std::string& name = m_index.tensors[i].name;
        const std::string prefix = name.substr(0, name.find('.')) + ".*";
        auto g = std::find_if(groups.begin(), groups.end(),
                              [&](const auto& x) { return x.first == prefix; });
        if (g == groups.end())
            groups.emplace_back(prefix, 1);
        else
            ++g->second;
    }
    if (left > 0) {
        leftOut = std::to_string(left) + " tensors left out, the rest of the " +
                  m_module->description + " (";
        for (size_t k = 0; k < groups.size(); ++k)
            leftOut += (k ? ", " : "") + std::to_string(groups[k].second) + " " + groups[k].first;
        leftOut += ")";
    }
    return doc;
}

void Document::keepIndex(FormatIndex index) {
    m_index = std::move(index);
    for (const MetadataRow& row : m_index.metadata)
        m_metadata.emplace_back(row.key, row.value);
}

const ByteSource& Document::sourceOf(const TensorEntry& t) const {
    return m_index.shards.empty() ? *m_source : *m_index.shards.at(t.shard).source;
}

const std::string& Document::shardName(size_t index) const {
    static const std::string none;
    return m_index.shards.empty() ? none : m_index.shards.at(m_index.tensors.at(index).shard).name;
}

std::vector<std::string> Document::sourceNames() const {
    std::vector<std::string> names{m_source->name()};
    for (const IndexShard& s : m_index.shards)
        if (std::find(names.begin(), names.end(), s.source->name()) == names.end())
            names.push_back(s.source->name());
    return names;
}

uint64_t Document::fileSize() const {
    if (m_index.shards.empty())
        return m_source->size();
    uint64_t sum = 0;
    for (const IndexShard& s : m_index.shards)
        sum = saturatingAdd(sum, s.source->size());
    return sum;
}

uint64_t Document::numParams() const {
    return indexParams(m_index);
}

uint64_t Document::totalBytes() const {
    return indexBytes(m_index);
}

size_t Document::tensorsSharingStorage() const {
    return ckptscope::tensorsSharingStorage(m_index);
}

Document::Document() : m_storageCache(std::make_unique<StorageCache>()) {}

Document::~Document() = default;

TensorSources Document::sources() const {
    return TensorSources{*m_source, m_index, m_storageCache.get()};
}

void Document::refuseMeta(size_t index, uint64_t count) const {
    if (count > 0 && isMetaTensor(m_index, index))
        throw CheckpointError(CheckpointError::Kind::Invalid,
                              m_source->name() + ": tensor " +
                                  quotedName(m_index.tensors.at(index).name) + ": " +
                                  kMetaTensorNote);
}

void Document::readValues(size_t index, uint64_t first, uint64_t count, float* out) const {
    refuseMeta(index, count);
    readTensorValues(sources(), m_index.tensors.at(index), first, count, out);
}

void Document::readValues(size_t index, uint64_t first, uint64_t count, double* out) const {
    refuseMeta(index, count);
    readTensorValues(sources(), m_index.tensors.at(index), first, count, out);
}

void Document::readValuesInStorageOrder(size_t index, uint64_t first, uint64_t count,
                                        float* out) const {
    refuseMeta(index, count);
    readTensorValuesInStorageOrder(sources(), m_index.tensors.at(index), first, count, out);
}

void Document::readValuesInStorageOrder(size_t index, uint64_t first, uint64_t count,
                                        double* out) const {
    refuseMeta(index, count);
    readTensorValuesInStorageOrder(sources(), m_index.tensors.at(index), first, count, out);
}

void Document::readComplexValues(size_t index, uint64_t first, uint64_t count, double* out) const {
    refuseMeta(index, count);
    ckptscope::readComplexValues(sources(), m_index.tensors.at(index), first, count, out);
}

std::optional<MappedValues> Document::mappedValues(size_t index, ScanUse use) const {
    const TensorEntry& t = m_index.tensors.at(index);
    if (t.dtype != Dtype::F32)
        return std::nullopt;
    if (t.view != kNoView) {
        // A contiguous little-endian view (a PyTorch state dict's every
        // tensor) is one run of its storage, scanned in place like a tensor
        // that owns its bytes; any other view is gathered by readValues.
        const TensorView& v = m_index.views.at(t.view);
        if (!v.strides.empty() || !v.pieces.empty())
            return std::nullopt;
        const TensorStorage& s = m_index.storages.at(v.storage);
        if (s.deferred || s.bigEndian || s.dtype != Dtype::F32 || s.shard != t.shard ||
            v.elementOffset > s.bytes / 4 || t.dataLen > s.bytes / 4 - v.elementOffset ||
            t.dataOffset != s.offset + v.elementOffset * 4)
            return std::nullopt;
    }
    return mapForScan(sourceOf(t), t.dataOffset, t.dataLen, use);
}

std::vector<std::string> Document::arrayItems(const MetadataArray& array, uint64_t first,
                                              uint64_t count) const {
    // Formats with arrays left in the file read them (GGUF); others have none.
    if (!m_module->arrayItems)
        return {};
    return m_module->arrayItems(*m_source, array, first, count);
}

MetadataArrayRun Document::arrayRun(const MetadataArray& array, uint64_t count) const {
    if (!m_module->arrayRun)
        return {};
    return m_module->arrayRun(*m_source, array, count);
}

void Document::readRawValues(size_t index, uint64_t first, uint64_t count, void* out) const {
    refuseMeta(index, count);
    ckptscope::readRawValues(sources(), m_index.tensors.at(index), first, count, out);
}

} // namespace ckptscope
