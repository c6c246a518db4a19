#include "ckptscope/export/oxckwriter.h"

#include "ckptscope/formats/oxck/checkpoint.h"
#include "export/copiedmetadata.h"
#include "export/tensorskept.h"
#include "export/valuestream.h"
#include "formats/oxck/oxckencoding.h"

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
    const std::vector<size_t> kept = tensorsKept(
        doc,
        [](Dtype d) {
            return isComplex(d) ? "OXCK stores one f32 per element; complex values are pairs"
                                : quantizedLeftOut(d);
        },
        warnings);
    uint64_t total = 0;
    for (const size_t i : kept) {
        const TensorEntry& t = doc.tensors()[i];
        if (t.name.size() > Checkpoint::kMaxNameBytes)
            throw ExportError(doc.path() + ": tensor \"" + t.name.substr(0, 80) +
                              "…\": the name has " + std::to_string(t.name.size()) +
                              " bytes; OXCK names hold at most 65 535");
        total += t.dataLen;
    }
    oxck::writeHeader(out, Checkpoint::kVersion, metaText, kept.size());

    uint64_t done = 0;
    for (const size_t i : kept) {
        const TensorEntry& t = doc.tensors()[i];
        if (t.dtype != Dtype::F32)
            warnings.push_back("tensor \"" + t.name + "\": " + dtypeName(t.dtype) +
                               " converted to F32" +
                               (exactInF32(t.dtype) ? std::string(" (exactly)")
                                                    : std::string(" (values f32 cannot hold "
                                                                  "are rounded)")));
        oxck::writeTensorHeader(out, t.name, t.shape, t.dataLen);
        streamValues(
            out, doc, i, StreamAs::F32, control,
            [&](uint64_t n) { control.report(done += n, total); }, "; OXCK stores f32 only");
    }
    control.report(1, 1);
    return warnings;
}

} // namespace ckptscope
