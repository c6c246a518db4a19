#include "ckptscope/document/document.h"

#include "ckptscope/common/saturating.h"
#include "ckptscope/formats/tensorvalues.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/io/httpsource.h"

#include <memory>
#include <new>

namespace ckptscope {

std::shared_ptr<const Document> Document::open(const std::string& path) {
    std::shared_ptr<const ByteSource> source;
    try {
        source = openByteSource(path);
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
        doc->m_module = &detectFormat(src);
        doc->m_index = doc->m_module->open(src);
        for (const MetadataRow& row : doc->m_index.metadata)
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
    readTensorValues(*m_source, m_index.tensors.at(index), first, count, out);
}

void Document::readValues(size_t index, uint64_t first, uint64_t count, double* out) const {
    readTensorValues(*m_source, m_index.tensors.at(index), first, count, out);
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
