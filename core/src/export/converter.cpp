#include "ckptscope/export/converter.h"

#include "ckptscope/export/npzwriter.h"
#include "ckptscope/export/oxckwriter.h"
#include "ckptscope/export/safetensorswriter.h"
#include "ckptscope/formats/safetensors/shardset.h"
#include "ckptscope/io/atomicfile.h"
#include "export/tensorskept.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <unordered_set>

namespace ckptscope {

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
    if (s.size() < suffix.size())
        return false;
    for (size_t i = 0; i < suffix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i])
            return false;
    return true;
}

// Tensors into shards as Hugging Face splits them: in order, a new shard
// when the next tensor would take this one past the limit (a tensor larger
// than the limit gets a shard of its own).
std::vector<std::vector<size_t>>
splitIntoShards(const Document& doc, const std::vector<size_t>& tensors, uint64_t maxShardBytes) {
    std::vector<std::vector<size_t>> shards(1);
    uint64_t bytes = 0;
    for (const size_t i : tensors) {
        const uint64_t size = safetensorsBytes(doc, i);
        if (!shards.back().empty() && (bytes > maxShardBytes || size > maxShardBytes - bytes)) {
            shards.emplace_back();
            bytes = 0;
        }
        shards.back().push_back(i);
        bytes += size;
    }
    return shards;
}

} // namespace

std::string shardIndexPathFor(const std::string& outPath) {
    if (isShardIndexName(std::filesystem::path(outPath).filename().string()))
        return outPath;
    if (endsWith(outPath, ".safetensors"))
        return outPath + ".index.json";
    return {};
}

std::vector<std::string> convertToShards(const Document& whole, const std::string& outPath,
                                         uint64_t maxShardBytes, const TaskControl& control,
                                         const ConvertChoice& choice) {
    namespace fs = std::filesystem;
    std::string leftOut;
    const auto model = whole.convertedModel(leftOut, choice); // a DeepSpeed or DCP folder's model
    const Document& doc = model ? *model : whole;
    const std::string indexPath = shardIndexPathFor(outPath);
    if (!doc.hasTensors() || indexPath.empty() || maxShardBytes == 0)
        throw ExportError(!doc.hasTensors() ? doc.path() + " is a gradient checkpoint; convert "
                                                           "reads OXCK and safetensors files"
                          : indexPath.empty()
                              ? outPath + ": name the sharded output NAME.safetensors or "
                                          "NAME.safetensors.index.json"
                              : std::string("the shard size must be at least 1 byte"));
    checkExportNames(doc, true);
    const fs::path index(indexPath);
    const std::string fileName = index.filename().string();
    const std::string stem = fileName.substr(0, fileName.size() - kShardIndexSuffix.size());
    std::vector<std::string> names, warnings = pickleConversionNotes(doc);
    if (!leftOut.empty())
        warnings.push_back(leftOut);
    const auto shards =
        splitIntoShards(doc, tensorsKept(doc, safetensorsLeavesOut, warnings), maxShardBytes);
    for (size_t k = 0; k < shards.size(); ++k)
        names.push_back(shardFileName(stem, k + 1, shards.size(), ".safetensors"));
    for (const std::string& target : [&] {
             std::vector<std::string> all{indexPath};
             for (const std::string& n : names)
                 all.push_back((index.parent_path() / n).string());
             return all;
         }())
        for (const std::string& input : inputFiles(doc))
            if (sameFile(input, target))
                throw ExportError(target + " is an input file; a conversion never writes over "
                                           "its input");
    nlohmann::ordered_json map = nlohmann::ordered_json::object();
    std::unordered_set<std::string> said;
    for (size_t k = 0; k < shards.size(); ++k) {
        const TaskControl part = control.part(double(k) / shards.size(), 1.0 / shards.size());
        writeFileAtomically((index.parent_path() / names[k]).string(), [&](std::ostream& out) {
            // (each shard carries the metadata: its warnings said once)
            for (std::string& w : writeSafetensors(out, doc, shards[k], part))
                if (said.insert(w).second)
                    warnings.push_back(std::move(w));
        });
        for (size_t i : shards[k])
            map[doc.tensors()[i].name] = names[k];
    }
    // The index last: a reader never finds it naming shards not yet written.
    // The bytes the shards' values take (a shared storage's viewers each
    // whole; a dequantized tensor as F32).
    uint64_t totalSize = 0;
    for (const auto& shard : shards)
        for (size_t i : shard)
            totalSize += safetensorsBytes(doc, i);
    const nlohmann::ordered_json json = {{"metadata", {{"total_size", totalSize}}},
                                         {"weight_map", std::move(map)}};
    writeFileAtomically(indexPath, [&](std::ostream& out) { out << json.dump(2) << "\n"; });
    return warnings;
}

std::vector<std::string> inputFiles(const Document& doc) {
    std::vector<std::string> files{doc.source().name()};
    for (const IndexShard& s : doc.shards())
        files.push_back(s.source->name());
    return files;
}

std::optional<ConvertTarget> convertTargetFor(const std::string& path) {
    if (endsWith(path, ".safetensors"))
        return ConvertTarget::Safetensors;
    if (endsWith(path, ".npz"))
        return ConvertTarget::Npz;
    if (endsWith(path, ".oxck"))
        return ConvertTarget::Oxck;
    return std::nullopt;
}

std::optional<Format> formatOf(ConvertTarget target) {
    switch (target) {
    case ConvertTarget::Oxck:
        return Format::Oxck;
    case ConvertTarget::Safetensors:
        return Format::Safetensors;
    case ConvertTarget::Npz:
        break;
    }
    return std::nullopt;
}

ConvertTarget suggestedTarget(const Document& doc) {
    return doc.format() == formatOf(ConvertTarget::Oxck) ? ConvertTarget::Safetensors
                                                         : ConvertTarget::Oxck;
}

bool sameFile(const std::string& a, const std::string& b) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::equivalent(a, b, ec) && !ec)
        return true;
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

std::string conversionRefusal(const Document& doc, ConvertTarget target,
                              const std::string& outPath) {
    if (!doc.hasTensors())
        return doc.path() + " is a gradient checkpoint; convert reads OXCK and safetensors files";
    // (a sharded model converts into one file of its own format)
    if (doc.format() == formatOf(target) && !doc.isSharded()) {
        const std::string what = doc.formatModule().description; // "OXCK checkpoint"
        const bool vowel = std::string_view("AEIOUaeiou").find(what.front()) != std::string::npos;
        return doc.path() + " is already " + (vowel ? "an " : "a ") + what;
    }
    for (const std::string& input : inputFiles(doc))
        if (sameFile(input, outPath))
            return outPath + " is an input file; a conversion never writes over its input";
    return {};
}

std::vector<std::string> convertDocument(const Document& whole, ConvertTarget target,
                                         const std::string& outPath, const TaskControl& control,
                                         const ConvertChoice& choice) {
    if (const std::string why = conversionRefusal(whole, target, outPath); !why.empty())
        throw ExportError(why);
    std::string leftOut;
    const auto model = whole.convertedModel(leftOut, choice); // a DeepSpeed or DCP folder's model
    const Document& doc = model ? *model : whole;
    std::vector<std::string> warnings = pickleConversionNotes(doc), written;
    if (!leftOut.empty())
        warnings.push_back(leftOut);
    writeFileAtomically(outPath, [&](std::ostream& out) {
        switch (target) {
        case ConvertTarget::Safetensors:
            written = writeSafetensors(out, doc, control);
            break;
        case ConvertTarget::Npz:
            written = writeNpz(out, doc, control);
            break;
        case ConvertTarget::Oxck:
            written = writeOxck(out, doc, control);
            break;
        }
    });
    warnings.insert(warnings.end(), written.begin(), written.end());
    return warnings;
}

} // namespace ckptscope
