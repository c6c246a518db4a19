#include "ckptscope/export/oxckwriter.h"

#include "ckptscope/formats/oxck/checkpoint.h"
#include "export/copiedmetadata.h"
#include "formats/oxck/oxckencoding.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ckptscope {

std::vector<std::string> writeOxck(std::ostream& out, const Document& doc,
                                   const TaskControl& control) {
    std::vector<std::string> warnings;
    Metadata meta;
    for (const auto& [k, v] : copiedMetadata(doc, warnings))
        meta[k] = v;
    const std::string metaText = serializeMetadata(meta);
    if (metaText.size() > UINT32_MAX)
        throw ExportError(doc.path() + ": the metadata take " + std::to_string(metaText.size()) +
                          " bytes; OXCK holds at most 4 GiB of metadata");
    uint64_t total = 0;
    for (const TensorEntry& t : doc.tensors()) {
        if (t.name.size() > Checkpoint::kMaxNameBytes)
            throw ExportError(doc.path() + ": tensor \"" + t.name.substr(0, 80) +
                              "…\": the name has " + std::to_string(t.name.size()) +
                              " bytes; OXCK names hold at most 65 535");
        total += t.dataLen;
    }
    oxck::writeHeader(out, Checkpoint::kVersion, metaText, doc.tensors().size());

    constexpr uint64_t kChunk = 1 << 20;
    std::vector<float> values;
    std::vector<double> wide;
    uint64_t done = 0;
    for (size_t i = 0; i < doc.tensors().size(); ++i) {
        const TensorEntry& t = doc.tensors()[i];
        if (t.dtype != Dtype::F32)
            warnings.push_back("tensor \"" + t.name + "\": " + dtypeName(t.dtype) +
                               " converted to F32" +
                               (exactInF32(t.dtype) ? std::string(" (exactly)")
                                                    : std::string(" (values f32 cannot hold "
                                                                  "are rounded)")));
        oxck::writeTensorHeader(out, t.name, t.shape, t.dataLen);
        values.resize(size_t(std::min(t.dataLen, kChunk)));
        for (uint64_t first = 0; first < t.dataLen;) {
            control.throwIfCancelled();
            const uint64_t n = std::min(kChunk, t.dataLen - first);
            if (t.dtype == Dtype::F64) {
                wide.resize(size_t(n));
                doc.readValues(i, first, n, wide.data());
                for (size_t k = 0; k < wide.size(); ++k) {
                    values[k] = float(wide[k]);
                    if (std::isfinite(wide[k]) && std::isinf(values[k]))
                        throw ExportError(doc.path() + ": tensor \"" + t.name + "\": value " +
                                          std::to_string(first + k) + " (" +
                                          std::to_string(wide[k]) +
                                          ") is beyond the range of f32; OXCK stores f32 only");
                }
            } else {
                doc.readValues(i, first, n, values.data());
            }
            oxck::writeValues(out, values.data(), size_t(n));
            first += n;
            done += n;
            control.report(done, total);
        }
    }
    control.report(1, 1);
    return warnings;
}

} // namespace ckptscope
