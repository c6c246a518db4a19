#include "ckptscope/document/document.h"

#include "ckptscope/common/saturating.h"
#include "ckptscope/formats/oxck/checkpointerror.h"
#include "ckptscope/formats/safetensors/safetensorsindex.h"
#include "ckptscope/io/filesource.h"

#include <algorithm>
#include <memory>
#include <new>
#include <string_view>

namespace ckptscope {

OpenError::OpenError(std::string file, std::string message)
    : m_file(std::move(file)), m_message(std::move(message)) {
    if (m_message.rfind(m_file + ":", 0) != 0)
        m_message = m_file + ": " + m_message;
}

std::string OpenError::detail() const {
    std::string rest = m_message.substr(m_file.size() + 1);
    // "FILE:12:5: msg" (JSON position) reads better as "line 12, column 5: msg".
    const size_t colon1 = rest.find(':');
    const size_t colon2 = colon1 == std::string::npos ? colon1 : rest.find(':', colon1 + 1);
    auto digits = [&](size_t from, size_t to) {
        return to > from && rest.find_first_not_of("0123456789", from) >= to;
    };
    if (colon2 != std::string::npos && digits(0, colon1) && digits(colon1 + 1, colon2))
        return "line " + rest.substr(0, colon1) + ", column " +
               rest.substr(colon1 + 1, colon2 - colon1 - 1) + rest.substr(colon2);
    return rest.size() > 0 && rest[0] == ' ' ? rest.substr(1) : rest;
}

const char* formatName(Format format) {
    switch (format) {
    case Format::Oxck:
        return "oxck";
    case Format::Gradient:
        return "gradient";
    case Format::Safetensors:
        return "safetensors";
    }
    return "?";
}

Format detectFormat(const ByteSource& source) {
    const std::string& file = source.name();
    if (source.size() == 0)
        throw OpenError(file, "the file is empty; expected an OXCK checkpoint, a safetensors "
                              "file or a JSON gradient checkpoint");
    std::string magic(size_t(std::min<uint64_t>(source.size(), 4)), '\0');
    source.read(0, magic.data(), magic.size());
    if (magic == "OXCK")
        return Format::Oxck;
    // Before the JSON probe: a header length's low byte can be a space.
    if (looksLikeSafetensors(source))
        return Format::Safetensors;
    const std::string suffix = ".safetensors";
    if (file.size() >= suffix.size() &&
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0)
        throw OpenError(file, "not a safetensors file: " + safetensorsProbeFailure(source));
    // The JSON probe looks further (whitespace may precede the '{').
    std::string head(size_t(std::min<uint64_t>(source.size(), 64 * 1024)), '\0');
    source.read(0, head.data(), head.size());
    size_t i = head.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0; // UTF-8 byte-order mark
    while (i < head.size() &&
           (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
        ++i;
    if (i < head.size() && head[i] == '{')
        return Format::Gradient;
    std::string found;
    for (size_t k = 0; k < std::min<size_t>(head.size(), 4); ++k) {
        const auto c = uint8_t(head[k]);
        found += (c >= 0x20 && c < 0x7f) ? std::string(1, char(c)) : "\\x" + [c] {
            static const char* hex = "0123456789abcdef";
            return std::string{hex[c >> 4], hex[c & 15]};
        }();
    }
    throw OpenError(file, "byte 0: not a checkpoint: expected the OXCK magic, a safetensors "
                          "header or a JSON object, found \"" +
                              found + "\"");
}

std::shared_ptr<const Document> Document::open(const std::string& path) {
    std::shared_ptr<const ByteSource> source;
    try {
        source = std::make_shared<FileSource>(path);
    } catch (const IoError& e) {
        throw OpenError(path, e.what());
    }
    return open(std::move(source));
}

std::shared_ptr<const Document> Document::open(std::shared_ptr<const ByteSource> source) {
    std::shared_ptr<Document> doc(new Document);
    doc->m_source = std::move(source);
    const ByteSource& src = *doc->m_source;
    try {
        doc->m_format = detectFormat(src);
        if (doc->m_format == Format::Oxck) {
            const DeferredChangeCheck changes(src); // one fstat at the end, not one per field
            doc->m_index = readOxckIndex(src);
            changes.finish();
            for (const auto& [k, v] : doc->m_index.metadata)
                doc->m_metadataRows.push_back({k, v, MetadataKind::Text});
        } else if (doc->m_format == Format::Safetensors) {
            const DeferredChangeCheck changes(src);
            SafetensorsIndex index = readSafetensorsIndex(src);
            changes.finish();
            doc->m_index.version = 0;
            doc->m_index.fileSize = src.size();
            doc->m_index.endOffset = src.size();
            doc->m_index.tensors = std::move(index.tensors);
            for (auto& [k, v] : index.metadata) {
                doc->m_index.metadata[k] = v;
                doc->m_metadataRows.push_back({std::move(k), std::move(v), MetadataKind::Text});
            }
        } else {
            // The text without zero-filling it first: it is as large as the
            // file, and the read overwrites every byte.
            const auto size = size_t(src.size());
            const auto text = std::make_unique_for_overwrite<char[]>(size);
            src.read(0, text.get(), size);
            doc->m_gradient =
                GradientCheckpoint::fromJson(std::string_view(text.get(), size), src.name());
            const GradientCheckpoint& g = *doc->m_gradient;
            doc->m_index.version = 0;
            doc->m_index.fileSize = src.size();
            doc->m_metadataRows = {
                {"step", std::to_string(g.step), MetadataKind::Integer},
                {"loss_cid", g.lossCid.value_or("(none)"), MetadataKind::Text},
                {"timestamp", std::to_string(g.timestamp), MetadataKind::Timestamp},
                {"node_count", std::to_string(g.graph.nodeCount()), MetadataKind::Integer},
                {"edge_count", std::to_string(g.graph.edgeCount()), MetadataKind::Integer},
            };
            for (std::string& w : g.graph.validate())
                doc->m_index.warnings.push_back({std::move(w), std::nullopt});
            doc->m_graphSplit = g.graph.topologicalSplit();
            const auto& cycle = doc->m_graphSplit.cycle;
            if (!cycle.empty())
                doc->m_index.warnings.push_back(
                    {std::to_string(cycle.size()) +
                         " nodes are on or behind a cycle and have no place in the topological "
                         "order",
                     std::nullopt});
        }
        for (const MetadataRow& row : doc->m_metadataRows)
            doc->m_metadata.emplace_back(row.key, row.value);
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

uint64_t Document::numParams() const {
    uint64_t sum = 0;
    for (const auto& t : m_index.tensors) {
        sum = saturatingAdd(sum, t.elementCount.value_or(UINT64_MAX));
    }
    return sum;
}

uint64_t Document::totalBytes() const {
    uint64_t sum = 0;
    for (const auto& t : m_index.tensors)
        sum = saturatingAdd(sum, tensorSizeBytes(t).value_or(UINT64_MAX));
    return sum;
}

void Document::readValues(size_t index, uint64_t first, uint64_t count, float* out) const {
    const TensorEntry& t = m_index.tensors.at(index);
    if (t.dtype == Dtype::F32)
        readTensorValues(*m_source, t, first, count, out);
    else
        readConvertedValues(*m_source, t, first, count, out);
}

void Document::readValues(size_t index, uint64_t first, uint64_t count, double* out) const {
    readConvertedValues(*m_source, m_index.tensors.at(index), first, count, out);
}

std::optional<MappedValues> Document::mappedValues(size_t index, ScanUse use) const {
    const TensorEntry& t = m_index.tensors.at(index);
    if (t.dtype != Dtype::F32)
        return std::nullopt;
    return mapForScan(*m_source, t.dataOffset, t.dataLen, use);
}

void Document::readRawValues(size_t index, uint64_t first, uint64_t count, void* out) const {
    ckptscope::readRawValues(*m_source, m_index.tensors.at(index), first, count, out);
}

} // namespace ckptscope
