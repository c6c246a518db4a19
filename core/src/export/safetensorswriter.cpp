#include "ckptscope/export/safetensorswriter.h"
#include "export/tensorskept.h"

#include "ckptscope/common/numberformat.h"
#include "export/copiedmetadata.h"
#include "export/valuestream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_set>

namespace ckptscope {

std::vector<uint64_t> exportShape(const Document& doc, size_t index,
                                  std::vector<std::string>* warnings) {
    refuseMetaTensor(doc, index); // (not an empty array: no values at all)
    const TensorEntry& t = doc.tensors().at(index);
    if (t.shape.empty() && t.dataLen <= 1)
        return t.dataLen == 1 ? std::vector<uint64_t>{} : std::vector<uint64_t>{0};
    if (t.elementCount && *t.elementCount == t.dataLen)
        return t.shape;
    if (warnings)
        warnings->push_back("tensor \"" + t.name + "\": shape " + fmt::shape(t.shape) +
                            " does not match the " + std::to_string(t.dataLen) +
                            " stored values; written 1-D");
    return {t.dataLen};
}

namespace {

// Block-quantized types (GGUF's) have no safetensors dtype: their values are
// written dequantized, as F32.
bool dequantized(Dtype dtype) {
    return dtypeBlock(dtype).elements != 1;
}

} // namespace

bool safetensorsAsF32(const Document& doc, size_t index) {
    return dequantized(doc.tensors().at(index).dtype) || doc.writtenAsF32(index);
}

uint64_t safetensorsBytes(const Document& doc, size_t index) {
    // (a view's element count is not bounded by its file: a stride-0 view)
    const TensorEntry& t = doc.tensors().at(index);
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(t.dataLen, safetensorsAsF32(doc, index) ? 4 : dtypeSize(t.dtype),
                               &bytes))
        throw ExportError(doc.path() + ": tensor \"" + t.name + "\": its " +
                          std::to_string(t.dataLen) + " values take more than 2^64 bytes");
    return bytes;
}

const char* safetensorsLeavesOut(Dtype dtype) {
    return dtype == Dtype::C128 ? "safetensors has no C128 dtype" : quantizedLeftOut(dtype);
}

void checkExportNames(const Document& doc, bool reserved) {
    std::unordered_set<std::string_view> seen;
    for (const TensorEntry& t : doc.tensors()) {
        if (reserved && t.name == "__metadata__")
            throw ExportError(doc.path() + ": tensor \"__metadata__\": safetensors reserves this "
                                           "name for metadata; rename the tensor first");
        if (!seen.insert(t.name).second)
            throw ExportError(doc.path() + ": tensor \"" + t.name +
                              "\": the name is given twice; safetensors and npz files hold "
                              "each name once");
    }
}

std::vector<std::string> writeSafetensors(std::ostream& out, const Document& doc,
                                          const TaskControl& control) {
    checkExportNames(doc, true);
    std::vector<std::string> warnings;
    const std::vector<size_t> kept = tensorsKept(doc, safetensorsLeavesOut, warnings);
    for (std::string& w : writeSafetensors(out, doc, kept, control))
        warnings.push_back(std::move(w));
    return warnings;
}

std::vector<std::string> writeSafetensors(std::ostream& out, const Document& doc,
                                          const std::vector<size_t>& tensors,
                                          const TaskControl& control) {
    std::vector<std::string> warnings;
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    const auto copied = copiedMetadata(doc, warnings);
    if (!copied.empty()) {
        nlohmann::ordered_json meta = nlohmann::ordered_json::object();
        for (const auto& [k, v] : copied)
            meta[k] = v;
        header["__metadata__"] = std::move(meta);
    }
    uint64_t offset = 0, total = 0;
    for (const size_t i : tensors) {
        const TensorEntry& t = doc.tensors().at(i);
        if (dequantized(t.dtype))
            warnings.push_back("tensor \"" + t.name + "\": " + dtypeName(t.dtype) +
                               " is not a safetensors dtype; written as F32, dequantized");
        const uint64_t bytes = safetensorsBytes(doc, i);
        header[t.name] = {{"dtype", safetensorsAsF32(doc, i) ? "F32" : dtypeName(t.dtype)},
                          {"shape", exportShape(doc, i, &warnings)},
                          {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
        total += t.dataLen;
    }
    std::string text;
    try {
        text = header.dump(); // strict: names and metadata must be UTF-8
    } catch (const nlohmann::json::exception& e) {
        throw ExportError(doc.path() + ": a tensor name or metadata entry is not UTF-8 text, "
                                       "which a safetensors header must be");
    }
    text.append((8 - (8 + text.size()) % 8) % 8, ' ');
    char len[8];
    for (int k = 0; k < 8; ++k)
        len[k] = char((uint64_t(text.size()) >> (8 * k)) & 0xff);
    out.write(len, 8);
    out.write(text.data(), std::streamsize(text.size()));

    uint64_t done = 0;
    for (const size_t i : tensors)
        streamValues(out, doc, i, safetensorsAsF32(doc, i) ? StreamAs::F32 : StreamAs::Stored,
                     control, [&](uint64_t n) { control.report(done += n, total); });
    control.report(1, 1);
    return warnings;
}

} // namespace ckptscope
