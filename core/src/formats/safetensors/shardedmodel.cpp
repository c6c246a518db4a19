#include "formats/safetensors/shardedmodel.h"

#include "formats/pytorch/pytorchformat.h"
#include "formats/safetensors/toplevelkeys.h"

#include "ckptscope/common/saturating.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/formats/safetensors/safetensorsindex.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/io/folderlisting.h"
#include "ckptscope/io/httpsource.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <future>
#include <map>
#include <unordered_map>

namespace ckptscope {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The probe reads this much: the index's "metadata" comes first and is small.
constexpr size_t kProbeBytes = 64 * 1024;

// What the first bytes say of an index: none, or an index whose shards are
// safetensors files or torch.save files (by the first shard's name:
// pytorch_model-00001-of-00002.bin).
enum class IndexKind { None, Safetensors, Pytorch };

// The first string value inside the top-level "weight_map" object.
class FirstShard final : public nlohmann::json_sax<json> {
public:
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t& s) override {
        if (m_depth == 2 && m_inMap) {
            shard = s;
            return false;
        }
        return true;
    }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return ++m_depth, true; }
    bool end_object() override { return --m_depth, true; }
    bool start_array(std::size_t) override { return ++m_depth, true; }
    bool end_array() override { return --m_depth, true; }
    bool key(string_t& key) override {
        if (m_depth == 1)
            m_inMap = key == "weight_map";
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }
    std::string shard;

private:
    int m_depth = 0;
    bool m_inMap = false;
};

IndexKind indexKind(const ByteSource& source) {
    std::string head(size_t(std::min<uint64_t>(source.size(), kProbeBytes)), '\0');
    source.read(0, head.data(), head.size());
    // "weight_map" among the first top-level keys makes the file an index;
    // "metadata" is passed over (Hugging Face writes it first); any other key
    // (a gradient checkpoint's "graph", "step"…) makes it something else. A
    // parse error (the head ends mid-file, or no JSON) ends the reading.
    bool found = false;
    TopLevelKeys keys([&](const std::string& key) {
        found = key == "weight_map";
        return !found && key == "metadata";
    });
    json::sax_parse(head, &keys, json::input_format_t::json, false);
    if (!found)
        return IndexKind::None;
    FirstShard first;
    json::sax_parse(head, &first, json::input_format_t::json, false);
    for (const char* ext : {".bin", ".pt", ".pth"})
        if (first.shard.ends_with(ext))
            return IndexKind::Pytorch;
    return IndexKind::Safetensors;
}

bool probe(const ByteSource& source) {
    return indexKind(source) == IndexKind::Safetensors;
}

bool probePytorch(const ByteSource& source) {
    return indexKind(source) == IndexKind::Pytorch;
}

// A safetensors shard as an index of its own.
FormatIndex readSafetensorsShard(const ByteSource& source) {
    SafetensorsIndex st = readSafetensorsIndex(source);
    FormatIndex index;
    index.tensors = std::move(st.tensors);
    for (auto& [key, value] : st.metadata)
        index.metadata.push_back({std::move(key), std::move(value), MetadataKind::Text});
    return index;
}

// A torch.save shard, read by the PyTorch module.
FormatIndex readPytorchShard(const ByteSource& source) {
    return openPytorchFile(source);
}

using ShardReader = FormatIndex (*)(const ByteSource&);

[[noreturn]] void fail(const std::string& file, const std::string& message) {
    throw CheckpointError(CheckpointError::Kind::Invalid, file + ": " + message);
}

// The shard file names of a model in order: Hugging Face's names by number,
// other names after them by text.
void sortShardNames(std::vector<std::string>& names) {
    auto key = [](const std::string& n) {
        const auto s = parseShardName(n);
        return std::pair(s ? s->number : UINT64_MAX, n);
    };
    std::sort(names.begin(), names.end(),
              [&](const std::string& a, const std::string& b) { return key(a) < key(b); });
}

// What the index says; shards in sortShardNames order.
struct IndexFile {
    std::unordered_map<std::string, std::string> weightMap; // tensor → shard name
    std::vector<std::string> shards;
    std::vector<MetadataRow> metadata;
    std::optional<uint64_t> totalSize;
};

IndexFile readIndexFile(const ByteSource& source) {
    const std::string& file = source.name();
    // An index lists names only: Hugging Face's for 200 000 tensors is ~15 MB.
    constexpr uint64_t kMaxIndexBytes = uint64_t(1) << 30;
    if (source.size() > kMaxIndexBytes)
        fail(file, "the index is " + std::to_string(source.size()) + " bytes, over the limit of " +
                       std::to_string(kMaxIndexBytes) + " for a list of tensor names");
    json doc;
    try {
        doc = json::parse(readAll(source));
    } catch (const json::exception& e) {
        throw CheckpointError(CheckpointError::Kind::BadMetadata,
                              file + ": not valid JSON: " + std::string(e.what()));
    }
    IndexFile index;
    if (!doc.is_object())
        fail(file, "expected a JSON object with \"weight_map\"");
    const auto map = doc.find("weight_map");
    if (map == doc.end() || !map->is_object())
        fail(file, "\"weight_map\": expected an object of tensor names to shard files");
    for (auto it = map->begin(); it != map->end(); ++it) {
        if (!it->is_string() || it->get_ref<const std::string&>().empty())
            fail(file, "weight_map: tensor " + quotedName(it.key()) +
                           ": expected the name of its shard file");
        if (const std::string why = shardNameProblem(it->get_ref<const std::string&>());
            !why.empty())
            fail(file, "weight_map: tensor " + quotedName(it.key()) + ": shard name " +
                           quotedName(it->get<std::string>()) + " " + why +
                           "; a shard is a relative name inside the index's folder");
        index.weightMap.emplace(it.key(), it->get<std::string>());
        index.shards.push_back(it->get<std::string>());
    }
    sortShardNames(index.shards);
    index.shards.erase(std::unique(index.shards.begin(), index.shards.end()), index.shards.end());
    if (const auto meta = doc.find("metadata"); meta != doc.end() && !meta->is_null()) {
        if (!meta->is_object())
            fail(file, "\"metadata\": expected an object");
        for (auto it = meta->begin(); it != meta->end(); ++it) {
            const bool integer = it->is_number_unsigned();
            index.metadata.push_back({it.key(),
                                      it->is_string() ? it->get<std::string>() : it->dump(),
                                      integer ? MetadataKind::Integer : MetadataKind::Text});
            if (it.key() == "total_size" && integer)
                index.totalSize = it->get<uint64_t>();
            else if (it.key() == "total_size")
                index.metadata.back().kind = MetadataKind::Text;
        }
    }
    return index;
}

// Builds one FormatIndex from the shards, one after another.
class ShardMerger {
public:
    ShardMerger(std::string model, std::string folder, const IndexFile* index, ShardReader read)
        : m_model(std::move(model)), m_folder(std::move(folder)), m_index(index), m_read(read) {}

    // openShard gives the shard's bytes or throws IoError.
    template <typename Open> void add(const std::string& name, Open&& openShard) {
        if (m_result.shards.size() >= kMaxShards)
            fail(m_model, "more than " + std::to_string(kMaxShards) + " shards");
        const auto shard = uint16_t(m_result.shards.size());
        std::shared_ptr<const ByteSource> source;
        try {
            source = openShard();
        } catch (const IoError& e) {
            fail(m_model, firstTensorOf(name) + "shard " + quotedName(name) +
                              " cannot be read: " + e.what());
        }
        const DeferredChangeCheck changes(*source);
        FormatIndex part = m_read(*source);
        changes.finish();
        merge(std::move(part), name, shard);
        m_result.shards.push_back({std::move(source), name});
    }

    FormatIndex finish() {
        if (m_index) {
            checkEveryMappedTensor();
            checkTotalSize();
            m_result.indexMetadata = m_index->metadata;
        }
        mergeMetadata();
        if (!m_result.traits.empty())
            m_result.traits.resize(m_result.tensors.size());
        return std::move(m_result);
    }

private:
    struct Seen {
        std::string value, shard;
    };

    // One shard's index into the model's: its storages and views renumbered,
    // its tensors (and their traits) where the weight_map places them, its
    // imports counted with the others', its warnings naming it.
    void merge(FormatIndex part, const std::string& name, uint16_t shard) {
        const auto storageBase = uint32_t(m_result.storages.size());
        const auto viewBase = uint32_t(m_result.views.size());
        for (TensorStorage& s : part.storages) {
            s.shard = shard;
            m_result.storages.push_back(std::move(s));
        }
        for (TensorView& v : part.views) {
            v.storage += storageBase;
            for (TensorPiece& p : v.pieces)
                p.storage += storageBase;
            m_result.views.push_back(std::move(v));
        }
        const bool traits = !part.traits.empty();
        std::vector<uint32_t> placed(part.tensors.size(), UINT32_MAX);
        for (size_t i = 0; i < part.tensors.size(); ++i) {
            TensorEntry& t = part.tensors[i];
            if (t.view != kNoView)
                t.view += viewBase;
            TensorTraits tt = traits ? part.traits[i] : TensorTraits{};
            if (tt.sameAs != UINT32_MAX)
                tt.sameAs = tt.sameAs < i ? placed[tt.sameAs] : UINT32_MAX;
            if (!addTensor(std::move(t), name, shard))
                continue;
            placed[i] = uint32_t(m_result.tensors.size() - 1);
            if (traits) {
                m_result.traits.resize(m_result.tensors.size() - 1);
                m_result.traits.push_back(std::move(tt));
            }
        }
        for (MetadataRow& row : part.metadata)
            m_metadata[row.key].push_back({row.value, name});
        for (PickleImport& imp : part.imports) {
            imp.calls.clear(); // nodes of the shard's own tree, which is not kept
            const auto it = std::find_if(m_result.imports.begin(), m_result.imports.end(),
                                         [&](const PickleImport& x) { return x.name == imp.name; });
            if (it == m_result.imports.end()) {
                m_result.imports.push_back(std::move(imp));
            } else {
                it->count += imp.count;
                it->risk = std::max(it->risk, imp.risk);
            }
        }
        std::sort(m_result.imports.begin(), m_result.imports.end(),
                  [](const PickleImport& a, const PickleImport& b) { return a.name < b.name; });
        for (IndexWarning& w : part.warnings)
            warn("shard " + quotedName(name) + ": " + w.message);
    }

    // "weight_map: tensor "x" is in shard …" for an error about a shard file.
    std::string firstTensorOf(const std::string& shard) const {
        if (m_index)
            for (const auto& [tensor, file] : m_index->weightMap)
                if (file == shard)
                    return "weight_map: tensor " + quotedName(tensor) + ": ";
        return {};
    }

    // Adds the tensor unless the index places it elsewhere or another shard
    // has it already (false then, with a warning).
    bool addTensor(TensorEntry t, const std::string& shard, uint16_t index) {
        const std::string* mapped = nullptr;
        if (m_index) {
            const auto it = m_index->weightMap.find(t.name);
            mapped = it == m_index->weightMap.end() ? nullptr : &it->second;
            if (!mapped)
                warn("tensor " + quotedName(t.name) + " is in shard " + quotedName(shard) +
                     " but not in the index's weight_map");
            else if (*mapped != shard) {
                warn("tensor " + quotedName(t.name) + " is in shard " + quotedName(shard) +
                     " too, but the weight_map places it in " + quotedName(*mapped) +
                     "; this copy is left out");
                return false;
            }
        }
        if (const auto [it, fresh] = m_where.emplace(t.name, shard); !fresh) {
            warn("tensor " + quotedName(t.name) + " is in shards " + quotedName(it->second) +
                 " and " + quotedName(shard) + "; the second copy is left out");
            return false;
        }
        t.shard = index;
        m_result.tensors.push_back(std::move(t));
        return true;
    }

    void checkEveryMappedTensor() const {
        // In the index's key order would need the ordered parse; report the
        // first by name so the message does not depend on hashing.
        std::vector<std::pair<std::string, std::string>> missing;
        for (const auto& [tensor, shard] : m_index->weightMap)
            if (!m_where.count(tensor))
                missing.emplace_back(tensor, shard);
        if (missing.empty())
            return;
        std::sort(missing.begin(), missing.end());
        const auto& [tensor, shard] = missing.front();
        fail(m_model, "weight_map: tensor " + quotedName(tensor) + " is not in its shard " +
                          quotedName(shard) +
                          (missing.size() > 1
                               ? " (and " + std::to_string(missing.size() - 1) + " more missing)"
                               : std::string()));
    }

    void checkTotalSize() {
        if (!m_index->totalSize)
            return;
        uint64_t bytes = 0;
        for (const TensorEntry& t : m_result.tensors)
            bytes = saturatingAdd(bytes, tensorSizeBytes(t).value_or(UINT64_MAX));
        if (bytes != *m_index->totalSize)
            warn("the index's metadata.total_size is " + std::to_string(*m_index->totalSize) +
                 " bytes, but the tensors hold " + std::to_string(bytes));
    }

    // Equal entries once; a key with different values keeps the first shard's
    // and warns naming the shards.
    void mergeMetadata() {
        for (auto& [key, seen] : m_metadata) {
            m_result.metadata.push_back({key, seen.front().value, MetadataKind::Text});
            for (const Seen& other : seen)
                if (other.value != seen.front().value) {
                    warn("metadata " + quotedName(key) +
                         " differs between shards: " + quotedName(seen.front().value) + " in " +
                         quotedName(seen.front().shard) + ", " + quotedName(other.value) + " in " +
                         quotedName(other.shard) + "; the first is shown");
                    break;
                }
        }
    }

    void warn(std::string message) { m_result.warnings.push_back({std::move(message), {}}); }

    std::string m_model, m_folder;
    const IndexFile* m_index;
    ShardReader m_read;
    FormatIndex m_result;
    std::unordered_map<std::string, std::string> m_where; // tensor → its shard
    std::map<std::string, std::vector<Seen>> m_metadata;  // keys sorted, as one file's are
};

// The shard's path when, symbolic links resolved, it still lies inside the
// index's folder; a link leading out is refused as a "../" name is.
std::string insideFolder(const ByteSource& index, const std::string& path) {
    // An index named without a folder ("model.safetensors.index.json") is
    // in the current one.
    const std::string outside =
        pathLeavingFolder(fs::path(index.name()).parent_path().string(), path);
    if (!outside.empty())
        fail(index.name(), "shard " + quotedName(path) +
                               " leads outside the index's folder (a symbolic link to " +
                               quotedName(outside) + ")");
    return path;
}

FormatIndex openIndex(const ByteSource& source, ShardReader read) {
    const IndexFile index = readIndexFile(source);
    const std::string folder = fs::path(source.name()).parent_path().string();
    ShardMerger merger(source.name(), folder.empty() ? "." : folder, &index, read);
    const auto pathOf = [&](const std::string& shard) {
        return (fs::path(folder.empty() ? "." : folder) / shard).string();
    };
    if (!isUrl(source.name())) {
        for (const std::string& shard : index.shards)
            merger.add(shard, [&] { return openByteSource(insideFolder(source, pathOf(shard))); });
        return merger.finish();
    }
    // On a server each shard's header is a round trip or two: fetch a few
    // at a time, reporting to (and cancelled with) the opening task.
    constexpr size_t kInFlight = 4;
    std::vector<std::future<std::shared_ptr<const ByteSource>>> pending(index.shards.size());
    const auto task = HttpTask::current();
    const auto launch = [&](size_t i) {
        if (i < pending.size())
            pending[i] = std::async(std::launch::async, [task, path = pathOf(index.shards[i])] {
                const HttpTask::Lend lend(task);
                return openByteSource(path);
            });
    };
    for (size_t i = 0; i < kInFlight; ++i)
        launch(i);
    for (size_t i = 0; i < index.shards.size(); ++i)
        merger.add(index.shards[i], [&] {
            launch(i + kInFlight);
            return pending[i].get();
        });
    return merger.finish();
}

FormatIndex open(const ByteSource& source) {
    return openIndex(source, readSafetensorsShard);
}

FormatIndex openPytorch(const ByteSource& source) {
    return openIndex(source, readPytorchShard);
}

std::string probeFailure(const ByteSource&) {
    return "expected a JSON object with \"weight_map\" (tensor names to shard files) among its "
           "first keys";
}

} // namespace

FormatModule shardedSafetensorsFormat() {
    return {Format::Safetensors,
            "safetensors",
            "sharded safetensors model",
            ".safetensors.index.json",
            "a safetensors index (a JSON object with \"weight_map\")",
            probe,
            probeFailure,
            open,
            "*.safetensors.index.json"};
}

FormatModule shardedPytorchFormat() {
    return {Format::Pytorch,
            "pytorch",
            "sharded PyTorch model",
            ".bin.index.json",
            "a PyTorch index (a JSON object with \"weight_map\" naming .bin shards)",
            probePytorch,
            nullptr,
            openPytorch,
            "*.bin.index.json"};
}

FormatIndex openShardSet(const std::string& folder, const ShardSet& set) {
    const bool pytorch = set.extension != ".safetensors";
    ShardMerger merger(folder, folder, nullptr, pytorch ? readPytorchShard : readSafetensorsShard);
    for (const std::string& shard : set.files)
        merger.add(shard, [&] { return openByteSource(pathInFolder(folder, shard)); });
    return merger.finish();
}

std::optional<IndexWarning> loneShardWarning(const std::string& path) {
    const fs::path file(path);
    const auto shard = parseShardName(file.filename().string());
    if (!shard || shard->count < 2)
        return std::nullopt;
    const std::string what = "one of " + std::to_string(shard->count) +
                             " shards of a sharded model; the whole model is ";
    std::error_code ec;
    const fs::path index = file.parent_path() / shardIndexName(shard->stem);
    if (fs::is_regular_file(index, ec))
        return IndexWarning{what + index.filename().string(), {}, index.string()};
    const fs::path folder = file.parent_path().empty() ? fs::path(".") : file.parent_path();
    const ShardedFolder beside = findShardedModelIn(folder.string(), shard->extension);
    if (beside.set && beside.set->stem == shard->stem)
        return IndexWarning{what + "the folder " + folder.string(), {}, folder.string()};
    if (!beside.index.empty())
        return IndexWarning{what + beside.index, {}, (folder / beside.index).string()};
    return IndexWarning{"one of " + std::to_string(shard->count) +
                            " shards of a sharded model (the other shards are not beside it)",
                        {}};
}

} // namespace ckptscope
