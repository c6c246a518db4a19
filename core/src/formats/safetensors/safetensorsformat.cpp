#include "formats/safetensors/safetensorsformat.h"

#include "ckptscope/formats/safetensors/safetensorsindex.h"
#include "ckptscope/io/filesource.h"
#include "formats/safetensors/shardedmodel.h"

namespace ckptscope {

namespace {

FormatIndex open(const ByteSource& source) {
    const DeferredChangeCheck changes(source);
    SafetensorsIndex st = readSafetensorsIndex(source);
    changes.finish();
    FormatIndex index;
    index.tensors = std::move(st.tensors);
    for (auto& [key, value] : st.metadata)
        index.metadata.push_back({std::move(key), std::move(value), MetadataKind::Text});
    // A shard opened alone is only part of a model: say where the rest is.
    if (auto lone = loneShardWarning(source.name()))
        index.warnings.push_back(std::move(*lone));
    return index;
}

} // namespace

FormatModule safetensorsFormat() {
    FormatModule m{
        Format::Safetensors,    "safetensors",        "safetensors file",      ".safetensors",
        "a safetensors header", looksLikeSafetensors, safetensorsProbeFailure, open};
    m.patterns = "*.safetensors";
    m.mimeType = "application/x-safetensors"; // no magic: a header length, then '{'
    m.title = "safetensors";
    return m;
}

} // namespace ckptscope
