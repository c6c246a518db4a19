#include "formats/gguf/ggufformat.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/gguf/ggufreader.h"
#include "ckptscope/formats/safetensors/shardset.h"
#include "ckptscope/io/filesource.h"

#include <filesystem>
#include <unordered_set>

namespace ckptscope {

namespace {

namespace fs = std::filesystem;

bool probe(const ByteSource& source) {
    return gguf::ggufProbeFailure(source).empty();
}

gguf::GgufHeader readHeader(const ByteSource& source) {
    const DeferredChangeCheck changes(source); // one fstat at the end, not one per field
    gguf::GgufHeader header = gguf::readGgufHeader(source);
    changes.finish();
    return header;
}

// `split.count` of a split model's file (llama.cpp's gguf-split), else 0.
uint64_t splitCount(const std::vector<MetadataRow>& metadata) {
    for (const MetadataRow& row : metadata)
        if (row.key == "split.count" && !row.array)
            try {
                return std::stoull(row.value);
            } catch (const std::exception&) {
                return 0;
            }
    return 0;
}

// The splits after the first, read into `index` as shards 1…M−1: each is a
// GGUF of its own whose tensors continue the model (their offsets lie in
// their own file).
void addSplits(FormatIndex& index, const ByteSource& first, const ShardName& name) {
    const fs::path folder = fs::path(first.name()).parent_path();
    std::unordered_set<std::string> names;
    for (const TensorEntry& t : index.tensors)
        names.insert(t.name);
    for (uint64_t k = 2; k <= name.count; ++k) {
        const std::string file = shardFileName(name.stem, k, name.count, name.extension);
        std::shared_ptr<const ByteSource> source;
        try {
            source = openByteSource((folder / file).string());
        } catch (const IoError& e) {
            throw CheckpointError(CheckpointError::Kind::Invalid,
                                  first.name() + ": split " + std::to_string(k) + " of " +
                                      std::to_string(name.count) + " (" + file +
                                      ") cannot be read: " + e.what());
        }
        gguf::GgufHeader split = readHeader(*source);
        if (index.shards.size() >= kMaxShards)
            throw CheckpointError(CheckpointError::Kind::Invalid, first.name() + ": more than " +
                                                                      std::to_string(kMaxShards) +
                                                                      " splits");
        const auto shard = uint16_t(index.shards.size());
        for (TensorEntry& t : split.tensors) {
            if (!names.insert(t.name).second)
                throw CheckpointError(CheckpointError::Kind::Invalid,
                                      source->name() + ": tensor " + quotedName(t.name) +
                                          " is in an earlier split too");
            t.shard = shard;
            index.tensors.push_back(std::move(t));
        }
        index.shards.push_back({std::move(source), file});
    }
}

FormatIndex open(const ByteSource& source) {
    gguf::GgufHeader header = readHeader(source);
    FormatIndex index;
    index.version = header.version;
    index.dataStart = header.dataStart;
    index.alignment = header.alignment;
    index.tensors = std::move(header.tensors);
    index.metadata = std::move(header.metadata);
    const uint64_t splits = splitCount(index.metadata);
    if (splits < 2)
        return index;
    // A split model (NAME-0000N-of-0000M.gguf): its first file opens the
    // whole model, any other says where that first file is.
    const auto name = parseShardName(fs::path(source.name()).filename().string());
    if (!name || name->count != splits || name->number != 1) {
        const bool named = name && name->count == splits;
        const std::string first =
            named ? shardFileName(name->stem, 1, splits, name->extension) : std::string();
        index.warnings.push_back(
            {"one of " + std::to_string(splits) + " splits of a split model" +
                 (named ? "; the whole model opens from " + first : std::string()),
             std::nullopt,
             named ? (fs::path(source.name()).parent_path() / first).string() : std::string()});
        return index;
    }
    std::shared_ptr<const ByteSource> self;
    try {
        self = openByteSource(source.name());
    } catch (const IoError&) {
        // Bytes in memory (no file of that name): only this split is known.
        index.warnings.push_back(
            {"split 1 of " + std::to_string(splits) + ": the other splits are not beside it",
             std::nullopt});
        return index;
    }
    index.shards.push_back({std::move(self), fs::path(source.name()).filename().string()});
    addSplits(index, source, *name);
    return index;
}

std::vector<HeaderField> headerFields(const FormatIndex& index) {
    // llama.cpp's name of general.file_type; null where it names none.
    const std::string_view type = gguf::fileTypeName(index.metadata);
    return {{"version", "version", uint64_t(index.version), std::to_string(index.version)},
            {"alignment", "alignment", uint64_t(index.alignment), std::to_string(index.alignment)},
            {"data_offset", "data from byte", index.dataStart, fmt::grouped(index.dataStart)},
            {"file_type", "File type", type.empty() ? HeaderField{}.value : std::string(type),
             gguf::fileTypeText(index.metadata), true}};
}

std::vector<std::pair<std::string, std::string>> summary(const FormatIndex& index) {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const MetadataRow& r : index.metadata) {
        if (r.key == "general.architecture")
            rows.emplace_back("Architecture", r.value);
        else if (r.key == "general.name")
            rows.emplace_back("Model name", r.value);
    }
    if (std::string type = gguf::fileTypeText(index.metadata); !type.empty())
        rows.emplace_back("File type", std::move(type));
    return rows;
}

} // namespace

FormatModule ggufFormat() {
    FormatModule m{Format::Gguf,           "gguf", "GGUF file", ".gguf", "the GGUF magic", probe,
                   gguf::ggufProbeFailure, open};
    m.patterns = "*.gguf";
    m.mimeType = "application/x-gguf";
    m.magic = "GGUF";
    m.quantized = true;
    m.title = "GGUF";
    m.partWord = "split"; // llama.cpp's gguf-split
    m.partWords = "splits";
    m.typedMetadata = true;
    m.llamaNames = true;
    m.headerFields = headerFields;
    m.summary = summary;
    m.arrayRun = gguf::readGgufArrayRun;
    m.arrayItems = gguf::readGgufArrayItems;
    return m;
}

} // namespace ckptscope
