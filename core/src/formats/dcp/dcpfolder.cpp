#include "formats/dcp/dcpfolder.h"
#include "formats/dcp/dcpstorages.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/safetensors/shardset.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/io/folderlisting.h"
#include "ckptscope/io/httpsource.h"

#include "formats/dcp/plantree.h"
#include "formats/objectfields.h"
#include "formats/objectsize.h"
#include "formats/pytorch/pickleimports.h"
#include "formats/pytorch/pytorchformat.h"
#include "formats/pytorch/torchunpickler.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>

namespace ckptscope {

namespace fs = std::filesystem;

namespace {

const char* const kMetadataFile = ".metadata";
// .metadata is read whole: a 70B model's plan is a few MiB.
constexpr uint64_t kMaxMetadataBytes = uint64_t(1) << 30;
// Chunks are checked against each other pairwise: more in one tensor is
// refused rather than taking minutes (one per rank is the usual count).
constexpr size_t kMaxChunks = 16384;
// A non-tensor item larger than this is listed, not unpickled.
constexpr uint64_t kMaxItemBytes = uint64_t(64) << 20;

using dcp::after;
using dcp::chunkKey;
using dcp::DcpStorages;
using dcp::isSafetensorsChunk;
using dcp::sizesText;

struct Chunk {
    std::vector<uint64_t> offsets, sizes;
};

// A logical tensor as state_dict_metadata describes it.
struct Item {
    std::string fqn;
    bool tensor = false;
    Dtype dtype = Dtype::F32;
    std::vector<uint64_t> size;
    std::vector<Chunk> chunks;
};

// Where one chunk or item lies: _StorageInfo.
struct Where {
    std::string file;
    uint64_t offset = 0, length = 0;
};

// One key of a planner_data path: an int (a list's index) or str(key).
struct PathKey {
    bool isInt = false;
    int64_t integer = 0;
    std::string text;
};

class Builder {
public:
    explicit Builder(std::string folder) : m_folder(std::move(folder)) {}
    FormatIndex build();

private:
    void readMetadata();
    // The plan's fields, from either machine's tree (the dataclasses'
    // fields are read alike: formats/objectfields.h).
    template <class Tree> void readPlan(const Tree& t, uint32_t root);
    template <class Tree> void readItems(const Tree& t, uint32_t items);
    template <class Tree> void readStorageData(const Tree& t, uint32_t data);
    template <class Tree> void readPlannerData(const Tree& t, uint32_t planner);
    uint16_t shardOf(const std::string& file, const std::function<std::string()>& item);
    // The shard holding w's bytes, checked to lie inside its file.
    uint16_t placed(const Where& w, const std::function<std::string()>& what);
    FormatIndex openArchive(const Where& w, const std::string& what, uint16_t& shard);
    void addTensor(Item& item);
    uint32_t itemValue(const Item& item);
    void place(const Item& item, uint32_t value);
    void mergeImports(const std::vector<PickleImport>& imports);

    std::string m_folder, m_metaPath;
    std::string m_planBytes; // the .metadata pickle
    ObjectTree m_meta;       // the .metadata pickle, when the general machine read it
    std::vector<PickleImport> m_metaImports;
    std::vector<Item> m_items;
    // fqn → chunk offsets → where; fqn → where for a non-tensor item.
    // Keyed by views of the plan's texts (m_planBytes, m_meta).
    std::unordered_map<std::string_view, std::map<std::vector<uint64_t>, Where>> m_where;
    std::unordered_map<std::string, std::vector<PathKey>> m_paths; // fqn → planner_data key path
    std::unordered_map<std::string, uint16_t> m_shardOf;
    std::map<std::pair<uint32_t, std::string>, uint32_t> m_child; // (dict, key) → dict
    FormatIndex m_out;
    std::shared_ptr<DcpStorages> m_resolver = std::make_shared<DcpStorages>();
    // Each file is read in many small pieces at open: its change check is
    // made once, at the end, not after every read. Declared after m_out, so
    // the checks end before the files they point to close.
    std::vector<std::unique_ptr<DeferredChangeCheck>> m_checks;
};

void Builder::readMetadata() {
    m_metaPath = pathInFolder(m_folder, kMetadataFile);
    std::shared_ptr<const ByteSource> source;
    try {
        source = openByteSource(m_metaPath);
    } catch (const IoError& e) {
        failInvalid(m_metaPath, after(e.what(), m_metaPath));
    }
    if (source->size() > kMaxMetadataBytes)
        failInvalid(m_metaPath, "a plan of " + std::to_string(source->size()) +
                                    " bytes, more than the 1 GiB read whole");
    std::string& bytes = m_planBytes;
    bytes.resize(size_t(source->size()));
    source->read(0, bytes.data(), bytes.size());
    // A plan as DCP writes it is read by the compact machine. Whatever it
    // does not read, and any plan it reads that is not what a plan must be,
    // goes to the general machine, which words the errors and warnings.
    if (const std::optional<dcp::PlanTree> plan = dcp::PlanTree::read(bytes)) {
        try {
            readPlan(*plan, plan->root());
            m_metaImports = plan->imports();
            return;
        } catch (const CheckpointError&) {
            m_items.clear();
            m_where.clear();
            m_paths.clear();
            m_out.metadata.clear();
        }
    }
    pytorch::TorchUnpickler u(m_meta, m_metaPath);
    m_meta.root = u.run(bytes, 0);
    // The plan's values are walked (its imports' warnings): nested no
    // deeper than a torch.save object may be.
    if (u.depthWithin(kMaxObjectDepth) > kMaxObjectDepth)
        failInvalid(m_metaPath, "the plan nests more than " + std::to_string(kMaxObjectDepth) +
                                    " levels deep (too deep to read)");
    m_metaImports = pytorch::classifyImports(m_meta, u);
    readPlan(m_meta, m_meta.root);
}

template <class Tree> void Builder::readPlan(const Tree& t, uint32_t root) {
    const ObjectFields<Tree> f{t};
    if (!f.isObject(root, ".Metadata") && t.at(root).kind != ObjectKind::Dict)
        failInvalid(m_metaPath, "the pickle holds no torch.distributed.checkpoint Metadata object");
    const uint32_t items = f.field(root, "state_dict_metadata");
    const uint32_t data = f.field(root, "storage_data");
    if (items == kNoNode || t.at(items).kind != ObjectKind::Dict)
        failInvalid(m_metaPath, "Metadata has no state_dict_metadata dict");
    if (data == kNoNode || t.at(data).kind != ObjectKind::Dict)
        failInvalid(m_metaPath, "Metadata has no storage_data dict (where each chunk lies)");
    readItems(t, items);
    readStorageData(t, data);
    readPlannerData(t, f.field(root, "planner_data"));
    if (const auto v = f.text(f.field(root, "version")))
        m_out.metadata.emplace_back("dcp.version", *v);
}

template <class Tree> void Builder::readItems(const Tree& t, uint32_t items) {
    const ObjectFields<Tree> f{t};
    const std::span<const uint32_t> kv = t.at(items).items;
    for (size_t k = 0; k + 1 < kv.size(); k += 2) {
        Item item;
        const auto fqn = f.text(kv[k]);
        if (!fqn)
            failInvalid(m_metaPath, "state_dict_metadata has a key that is not a string");
        item.fqn = *fqn;
        const uint32_t v = kv[k + 1];
        // Messages only: built when one is given.
        const auto where = [&] { return m_metaPath + ": " + quotedName(item.fqn); };
        if (f.isObject(v, ".BytesStorageMetadata")) {
            m_items.push_back(std::move(item));
            continue;
        }
        if (!f.isObject(v, ".TensorStorageMetadata"))
            failInvalid(where(), "neither TensorStorageMetadata nor BytesStorageMetadata");
        item.tensor = true;
        // TensorProperties pickles its state as (dtype, layout, requires_grad,
        // memory format, pin_memory); a dict in case a writer keeps fields.
        const uint32_t props = f.field(v, "properties");
        uint32_t dtype = kNoNode;
        if (props != kNoNode && t.at(props).kind == ObjectKind::Object) {
            const uint32_t state = t.at(props).state;
            if (state != kNoNode && t.at(state).kind == ObjectKind::Tuple &&
                !t.at(state).items.empty())
                dtype = t.at(state).items[0];
            else
                dtype = f.field(props, "dtype");
        }
        const bool global = dtype != kNoNode && t.at(dtype).kind == ObjectKind::Global;
        const auto d = global ? pytorch::torchDtypeNamed(t.at(dtype).text) : std::nullopt;
        if (!d)
            failInvalid(where(),
                        "its properties name no dtype torch has" +
                            (global ? " (" + std::string(t.at(dtype).text) + ")" : std::string()));
        item.dtype = *d;
        const auto size = f.sizes(f.field(v, "size"));
        if (!size)
            failInvalid(where(), "its size is not a torch.Size of sizes");
        item.size = *size;
        const uint32_t chunks = f.field(v, "chunks");
        if (chunks == kNoNode || t.at(chunks).kind != ObjectKind::List)
            failInvalid(where(), "its chunks are not a list");
        if (t.at(chunks).items.size() > kMaxChunks)
            failInvalid(where(), std::to_string(t.at(chunks).items.size()) +
                                     " chunks, more than the " + std::to_string(kMaxChunks) +
                                     " read");
        for (uint32_t c : t.at(chunks).items) {
            const auto offsets = f.sizes(f.field(c, "offsets"));
            const auto sizes = f.sizes(f.field(c, "sizes"));
            if (!f.isObject(c, ".ChunkStorageMetadata") || !offsets || !sizes)
                failInvalid(where(), "a chunk is not a ChunkStorageMetadata(offsets, sizes)");
            item.chunks.push_back({*offsets, *sizes});
        }
        m_items.push_back(std::move(item));
    }
}

template <class Tree> void Builder::readStorageData(const Tree& t, uint32_t data) {
    const ObjectFields<Tree> f{t};
    const std::span<const uint32_t> kv = t.at(data).items;
    for (size_t k = 0; k + 1 < kv.size(); k += 2) {
        const uint32_t key = kv[k], info = kv[k + 1];
        const auto fqn = f.view(f.field(key, "fqn"));
        if (!f.isObject(key, ".MetadataIndex") || !fqn)
            failInvalid(m_metaPath, "storage_data has a key that is not a MetadataIndex(fqn, …)");
        const auto where = [&] {
            return m_metaPath + ": storage_data of " + quotedName(std::string(*fqn));
        };
        const uint32_t at = f.field(key, "offset");
        std::vector<uint64_t> offsets;
        if (!f.none(at)) {
            const auto o = f.sizes(at);
            if (!o)
                failInvalid(where(), "its offset is not a torch.Size");
            offsets = *o;
        }
        Where w;
        const auto file = f.text(f.field(info, "relative_path"));
        const auto offset = f.count(f.field(info, "offset"));
        const auto length = f.count(f.field(info, "length"));
        if (!file || !offset || !length)
            failInvalid(where(), "not a _StorageInfo(relative_path, offset, length)");
        const uint32_t transforms = f.field(info, "transform_descriptors");
        if (!f.none(transforms) && !t.at(transforms).items.empty())
            failInvalid(where(), "written through stream transforms (transform_descriptors, e.g. "
                                 "compression), which are not read");
        w.file = std::move(*file);
        w.offset = *offset;
        w.length = *length;
        m_where[*fqn].insert_or_assign(std::move(offsets), std::move(w));
    }
}

// A planner_data key as place() puts it in the tree: an int, or str(key).
PathKey pathKey(const ObjectTree& t, uint32_t k) {
    const ObjectNode& n = t.at(k);
    return {n.kind == ObjectKind::Int, n.integer, objectKeyText(t, k)};
}
PathKey pathKey(const dcp::PlanTree& t, uint32_t k) {
    const dcp::PlanNode& n = t.at(k);
    if (n.kind == ObjectKind::Int)
        return {true, n.integer, std::to_string(n.integer)};
    if (n.kind != ObjectKind::String) // str() of other keys: the general machine's
        throw CheckpointError(CheckpointError::Kind::Invalid, "a key path of other keys");
    return {false, 0, std::string(n.text)};
}

template <class Tree> void Builder::readPlannerData(const Tree& t, uint32_t planner) {
    if (planner == kNoNode || t.at(planner).kind != ObjectKind::Dict)
        return; // saved without flattening: the names are the keys
    // The paths of the plan's items only (read before): an entry naming no
    // item is not expanded, as a key path a hostile plan shares among many.
    std::unordered_set<std::string_view> items;
    for (const Item& item : m_items)
        items.insert(item.fqn);
    const std::span<const uint32_t> kv = t.at(planner).items;
    uint64_t pathBytes = 0;
    for (size_t k = 0; k + 1 < kv.size(); k += 2) {
        const auto& key = t.at(kv[k]);
        const auto& path = t.at(kv[k + 1]);
        if (key.kind != ObjectKind::String ||
            (path.kind != ObjectKind::Tuple && path.kind != ObjectKind::List) ||
            path.items.empty() || !items.count(key.text))
            continue;
        const auto [slot, fresh] = m_paths.try_emplace(std::string(key.text));
        if (!fresh) // the first entry of a name counts
            continue;
        // Each key a dict level of the document's tree, which is walked.
        if (path.items.size() >= kMaxObjectDepth)
            failInvalid(m_metaPath, "planner_data puts " + quotedName(std::string(key.text)) + " " +
                                        std::to_string(path.items.size()) + " keys deep (at most " +
                                        std::to_string(kMaxObjectDepth - 1) + " are read)");
        std::vector<PathKey> keys;
        keys.reserve(path.items.size());
        for (uint32_t p : path.items) {
            keys.push_back(pathKey(t, p));
            // A key fetched from the memo at many places costs its size each
            // time: bounded as the tree's paths are.
            pathBytes += sizeof(PathKey) + keys.back().text.size();
            if (pathBytes > kMaxPathBytes)
                failInvalid(m_metaPath, "planner_data's key paths take more than " +
                                            std::to_string(kMaxPathBytes >> 20) +
                                            " MiB (keys repeated at many places)");
        }
        slot->second = std::move(keys);
    }
}

// The shard holding `file`: a plain relative name inside the folder, opened
// once.
uint16_t Builder::shardOf(const std::string& file, const std::function<std::string()>& item) {
    if (const auto s = m_shardOf.find(file); s != m_shardOf.end())
        return s->second;
    const std::string where = m_metaPath + ": " + item();
    if (const std::string problem = shardNameProblem(file); !problem.empty())
        failInvalid(where, "its file " + quotedName(file) + " " + problem);
    const std::string path = pathInFolder(m_folder, file);
    // A folder on a server (s3://, https://) has no symbolic links to follow.
    if (const std::string outside = isUrl(m_folder) ? "" : pathLeavingFolder(m_folder, path);
        !outside.empty())
        failInvalid(where, "its file " + quotedName(file) +
                               " leads outside the checkpoint's folder (a symbolic link to " +
                               quotedName(outside) + ")");
    if (m_out.shards.size() >= kMaxShards)
        failInvalid(m_metaPath, "more than " + std::to_string(kMaxShards) + " files");
    std::shared_ptr<const ByteSource> source;
    try {
        source = openByteSource(path);
    } catch (const IoError& e) {
        failInvalid(where, "its file " + quotedName(file) + " cannot be read (" + e.what() +
                               "): a rank's file is missing");
    }
    m_checks.push_back(std::make_unique<DeferredChangeCheck>(*source));
    m_out.shards.push_back({std::move(source), file});
    const uint16_t shard = uint16_t(m_out.shards.size() - 1);
    m_shardOf.emplace(file, shard);
    return shard;
}

uint16_t Builder::placed(const Where& w, const std::function<std::string()>& what) {
    const uint16_t shard = shardOf(w.file, what);
    const ByteSource& source = *m_out.shards[shard].source;
    if (w.offset > source.size() || w.length > source.size() - w.offset)
        failInvalid(source.name(), what() + ": its bytes " + std::to_string(w.offset) + "+" +
                                       std::to_string(w.length) +
                                       " reach past the end of the file (" +
                                       std::to_string(source.size()) + " bytes)");
    return shard;
}

FormatIndex Builder::openArchive(const Where& w, const std::string& what, uint16_t& shard) {
    shard = placed(w, [&] { return what; });
    const ByteSource& source = *m_out.shards[shard].source;
    try {
        FormatIndex part = openPytorchArchive(source, w.offset, w.offset + w.length);
        mergeImports(part.imports);
        for (IndexWarning& x : part.warnings)
            m_out.warnings.push_back({w.file + " (" + what + "): " + x.message, std::nullopt});
        return part;
    } catch (const CheckpointError& e) {
        failInvalid(source.name(), what + ", saved at byte " + std::to_string(w.offset) + ": " +
                                       after(e.what(), source.name()));
    }
}

void Builder::mergeImports(const std::vector<PickleImport>& imports) {
    for (const PickleImport& imp : imports) {
        auto it = std::find_if(m_out.imports.begin(), m_out.imports.end(),
                               [&](const PickleImport& x) { return x.name == imp.name; });
        if (it == m_out.imports.end()) {
            m_out.imports.push_back({imp.name, 0, imp.risk, {}});
            it = m_out.imports.end() - 1;
        }
        it->count += imp.count;
        it->risk = std::max(it->risk, imp.risk);
    }
}

void Builder::addTensor(Item& item) {
    // Messages only: built when one is given.
    const auto what = [&] { return "tensor " + quotedName(item.fqn); };
    const auto numel = shapeElementCount(item.size);
    if (!numel && !item.size.empty())
        failInvalid(m_metaPath,
                    what() + ": its size " + sizesText(item.size) + " overflows 2^64 elements");
    const uint64_t count = item.size.empty() ? 1 : *numel;
    const size_t rank = item.size.size();
    const auto located = m_where.find(item.fqn);
    TensorView view;
    std::vector<std::pair<uint16_t, uint64_t>> blobs; // where its SAFETENSORS chunks lie
    uint64_t covered = 0;
    uint16_t firstShard = 0;
    uint64_t firstByte = 0;
    const uint32_t tensor = uint32_t(m_resolver->tensors.size());
    m_resolver->tensors.push_back(item.fqn);
    for (size_t c = 0; c < item.chunks.size(); ++c) {
        const Chunk& chunk = item.chunks[c];
        // Messages only: built when one is given.
        const auto piece = [&] { return what() + " chunk at " + sizesText(chunk.offsets); };
        if (chunk.offsets.size() != rank || chunk.sizes.size() != rank)
            failInvalid(m_metaPath, piece() + ": " + std::to_string(chunk.sizes.size()) +
                                        " sizes for a tensor of " + std::to_string(rank) +
                                        " dimensions");
        uint64_t volume = 1;
        for (size_t k = 0; k < rank; ++k) {
            if (chunk.offsets[k] > item.size[k] || chunk.sizes[k] > item.size[k] - chunk.offsets[k])
                failInvalid(m_metaPath, piece() + " of sizes " + sizesText(chunk.sizes) +
                                            " reaches outside the tensor's size " +
                                            sizesText(item.size));
            volume *= chunk.sizes[k]; // ≤ the tensor's count, checked above
        }
        // Chunks may not overlap: checked pairwise (kMaxChunks bounds it).
        for (size_t o = 0; o < c; ++o) {
            bool overlap = true;
            for (size_t k = 0; k < rank && overlap; ++k)
                overlap = chunk.offsets[k] < item.chunks[o].offsets[k] + item.chunks[o].sizes[k] &&
                          item.chunks[o].offsets[k] < chunk.offsets[k] + chunk.sizes[k];
            if (overlap && volume > 0)
                failInvalid(m_metaPath, piece() + " overlaps its chunk at " +
                                            sizesText(item.chunks[o].offsets));
        }
        covered += volume;
        const auto w = located == m_where.end() ? nullptr : [&]() -> const Where* {
            const auto it = located->second.find(chunk.offsets);
            return it == located->second.end() ? nullptr : &it->second;
        }();
        if (!w)
            failInvalid(m_metaPath, piece() + ": storage_data does not say where it lies");
        // The chunk's archive is read when a read first needs it
        // (DcpStorages); its place in the file is checked now.
        const uint16_t shard = placed(*w, piece);
        TensorStorage st;
        st.shard = shard;
        st.offset = w->offset;
        st.bytes = volume * dtypeSize(item.dtype); // what the plan says it holds
        st.dtype = item.dtype;
        st.deferred = true;
        st.containerBytes = w->length;
        m_resolver->planned.push_back(st); // its key made when it is found
        const bool safetensors = isSafetensorsChunk(st);
        st.key = chunkKey(w->file, w->offset, item.fqn, safetensors);
        if (safetensors) {
            // A safetensors blob holds one tensor of a name: a second chunk
            // there would read the first one's values.
            if (std::find(blobs.begin(), blobs.end(), std::make_pair(shard, w->offset)) !=
                blobs.end())
                failInvalid(m_metaPath, piece() +
                                            ": a second chunk of the tensor in the "
                                            "safetensors data of " +
                                            quotedName(w->file) + " at byte " +
                                            std::to_string(w->offset) +
                                            ", which holds one tensor of a name");
            blobs.emplace_back(shard, w->offset);
        }
        m_out.storages.push_back(std::move(st));
        m_resolver->chunks.push_back({tensor, chunk.sizes, chunk.offsets});
        const uint32_t storage = uint32_t(m_out.storages.size() - 1);
        if (c == 0) {
            firstShard = shard;
            firstByte = w->offset;
        }
        // A scalar's one chunk is a plain view of its storage; any other
        // chunk a box (a single chunk holding the whole tensor too).
        if (rank == 0)
            view.storage = storage;
        else // its box filled in once every chunk is checked against it
            view.pieces.push_back({{}, {}, storage, 0});
    }
    if (covered != count)
        failInvalid(m_metaPath, what() + ": its chunks hold " + std::to_string(covered) +
                                    " of its " + std::to_string(count) + " elements (a hole" +
                                    (item.chunks.empty() ? ": no chunk" : "") + ")");
    for (size_t c = 0; c < view.pieces.size(); ++c) {
        view.pieces[c].offsets = std::move(item.chunks[c].offsets);
        view.pieces[c].sizes = std::move(item.chunks[c].sizes);
    }
    TensorEntry e;
    e.name = item.fqn;
    e.shape = item.size;
    e.dtype = item.dtype;
    e.elementCount = shapeElementCount(item.size);
    e.dataLen = item.size.empty() ? 1 : count;
    e.shard = firstShard;
    e.dataOffset = firstByte;
    if (count > 0 || !view.pieces.empty()) {
        m_out.views.push_back(std::move(view));
        e.view = uint32_t(m_out.views.size() - 1);
    }
    m_out.tensors.push_back(std::move(e));
}

// A non-tensor item's value: its archive's object, appended to the tree.
uint32_t Builder::itemValue(const Item& item) {
    const std::string what = "item " + quotedName(item.fqn);
    const auto w = m_where.find(item.fqn);
    if (w == m_where.end() || w->second.size() != 1 || !w->second.begin()->first.empty())
        failInvalid(m_metaPath, what + ": storage_data does not say where it lies");
    const Where& at = w->second.begin()->second;
    ObjectNode n;
    if (at.length > kMaxItemBytes) {
        shardOf(at.file, [&] { return what; });
        n.kind = ObjectKind::String;
        n.text = "(" + std::to_string(at.length) + " bytes in " + at.file + ", not read)";
        return m_out.objects.add(std::move(n));
    }
    uint16_t shard = 0;
    const FormatIndex part = openArchive(at, what, shard);
    if (!part.tensors.empty())
        failInvalid(m_out.shards[shard].source->name(),
                    what + ": a non-tensor item holding tensors, which is not read");
    return appendTree(m_out.objects, part.objects);
}

// Puts a value where planner_data's key path says, making the dicts above it.
void Builder::place(const Item& item, uint32_t value) {
    ObjectTree& t = m_out.objects;
    std::vector<uint32_t> keys;
    if (const auto p = m_paths.find(item.fqn); p != m_paths.end()) {
        for (const PathKey& k : p->second) {
            ObjectNode key;
            key.kind = k.isInt ? ObjectKind::Int : ObjectKind::String;
            key.integer = k.integer;
            key.text = k.isInt ? std::string() : k.text;
            keys.push_back(t.add(std::move(key)));
        }
    } else {
        ObjectNode key;
        key.kind = ObjectKind::String;
        key.text = item.fqn;
        keys.push_back(t.add(std::move(key)));
    }
    uint32_t dict = t.root;
    for (size_t i = 0; i + 1 < keys.size(); ++i) {
        const std::string text = objectKeyText(t, keys[i]);
        auto [it, fresh] = m_child.try_emplace({dict, text}, kNoNode);
        if (fresh) {
            ObjectNode d;
            d.kind = ObjectKind::Dict;
            it->second = t.add(std::move(d));
            t.nodes[dict].items.push_back(keys[i]);
            t.nodes[dict].items.push_back(it->second);
        } else if (t.at(it->second).kind != ObjectKind::Dict) {
            failInvalid(m_metaPath, "planner_data puts " + quotedName(item.fqn) +
                                        " under a value that is not a dict");
        }
        dict = it->second;
    }
    t.nodes[dict].items.push_back(keys.back());
    t.nodes[dict].items.push_back(value);
}

FormatIndex Builder::build() {
    readMetadata();
    // Sized once: a regrown vector of 512 storages touches twice the pages,
    // and a fresh page costs about a microsecond.
    size_t chunks = 0;
    for (const Item& item : m_items)
        chunks += item.chunks.size();
    m_out.storages.reserve(chunks);
    m_resolver->planned.reserve(chunks);
    m_resolver->chunks.reserve(chunks);
    m_out.tensors.reserve(m_items.size());
    m_out.views.reserve(m_items.size());
    ObjectNode root;
    root.kind = ObjectKind::Dict;
    m_out.objects.root = m_out.objects.add(std::move(root));
    std::vector<std::string> parameterOf;
    bool anyParameter = false;
    for (Item& item : m_items) {
        uint32_t value;
        if (item.tensor) {
            addTensor(item);
            ObjectNode n;
            n.kind = ObjectKind::Tensor;
            n.tensor = uint32_t(m_out.tensors.size() - 1);
            value = m_out.objects.add(std::move(n));
            // An optimizer's state by parameter name (get_state_dict's
            // layout): ("optim", "state", NAME, "exp_avg").
            std::string parameter;
            if (const auto p = m_paths.find(item.fqn); p != m_paths.end()) {
                const std::vector<PathKey>& k = p->second;
                if (k.size() >= 4 && k[1].text == "state" &&
                    (k[0].text == "optim" || k[0].text == "optimizer"))
                    parameter = k[2].text;
            }
            anyParameter = anyParameter || !parameter.empty();
            parameterOf.push_back(std::move(parameter));
        } else {
            value = itemValue(item);
        }
        place(item, value);
    }
    if (objectPathBytes(m_out.objects, m_out.objects.root, kMaxPathBytes) > kMaxPathBytes)
        failInvalid(m_metaPath, "the paths to the checkpoint's values take more than " +
                                    std::to_string(kMaxPathBytes >> 20) +
                                    " MiB (long keys shared at many places)");
    if (anyParameter) {
        m_out.traits.resize(m_out.tensors.size());
        for (size_t i = 0; i < parameterOf.size(); ++i)
            m_out.traits[i].parameter = parameterOf[i];
    }
    // The plan's own classes are what DCP pickles; any other global it names
    // is told, as a torch.save file's would be.
    mergeImports(m_metaImports);
    std::vector<PickleImport> others;
    for (const PickleImport& imp : m_metaImports)
        if (imp.risk == ImportRisk::Unsafe ||
            (imp.risk == ImportRisk::Unknown && !imp.name.starts_with("torch.distributed.") &&
             imp.name != "torch.strided"))
            others.push_back(imp);
    for (std::string& w : pytorch::importWarnings(m_meta, others, {}))
        m_out.warnings.push_back({std::string(kMetadataFile) + ": " + w, std::nullopt});
    std::sort(m_out.imports.begin(), m_out.imports.end(),
              [](const PickleImport& a, const PickleImport& b) { return a.name < b.name; });
    for (const auto& check : m_checks)
        check->finish();
    m_checks.clear();
    for (const IndexShard& shard : m_out.shards) {
        m_resolver->files.push_back(shard.source);
        m_resolver->fileNames.push_back(shard.name);
    }
    m_out.resolver = m_resolver;
    m_out.metadata.emplace_back("dcp.files", std::to_string(m_out.shards.size()));
    if (m_out.shards.empty()) // a plan of no item: the .metadata is the model's one file
        m_out.shards.push_back({openByteSource(m_metaPath), kMetadataFile});
    return std::move(m_out);
}

// A conversion writes the model; the optimizer's state (optim.*, as
// get_state_dict names it) only when asked.
std::vector<ConvertedTensor> modelTensors(const FormatIndex& index, const ConvertChoice& choice) {
    std::vector<ConvertedTensor> out;
    for (size_t i = 0; i < index.tensors.size(); ++i) {
        const std::string& name = index.tensors[i].name;
        if (choice.includeOptimizer ||
            !(name.starts_with("optim.") || name.starts_with("optimizer.")))
            out.push_back({uint32_t(i), name});
    }
    return out;
}

} // namespace

bool isDcpFolder(const std::string& folder) {
    return folderHoldsFile(folder, kMetadataFile);
}

FormatIndex openDcp(const std::string& folder) {
    return Builder(folder).build();
}

FormatModule dcpFormat() {
    FormatModule m = folderModule("dcp", "PyTorch distributed checkpoint",
                                  "a folder with .metadata and the ranks' .distcp files");
    m.converted = modelTensors;
    return m;
}

} // namespace ckptscope
