#include "formats/oxck/oxckformat.h"

#include "ckptscope/formats/oxck/oxckindex.h"
#include "ckptscope/io/filesource.h"

namespace ckptscope {

namespace {

bool probe(const ByteSource& source) {
    char magic[4] = {};
    if (source.size() < 4)
        return false;
    source.read(0, magic, 4);
    return std::string_view(magic, 4) == "OXCK";
}

FormatIndex open(const ByteSource& source) {
    const DeferredChangeCheck changes(source); // one fstat at the end, not one per field
    OxckIndex oxck = readOxckIndex(source);
    changes.finish();
    FormatIndex index;
    index.version = oxck.version;
    index.flags = oxck.flags;
    index.tensors = std::move(oxck.tensors);
    index.warnings = std::move(oxck.warnings);
    for (auto& [key, value] : oxck.metadata)
        index.metadata.push_back({key, std::move(value), MetadataKind::Text});
    return index;
}

} // namespace

FormatModule oxckFormat() {
    FormatModule m{Format::Oxck,     "oxck", "OXCK checkpoint", ".oxck",
                   "the OXCK magic", probe,  nullptr,           open};
    m.patterns = "*.oxck";
    m.mimeType = "application/x-oxck-checkpoint";
    m.magic = "OXCK";
    m.title = "OXCK";
    m.f32Only = true;
    m.headerFields = [](const FormatIndex& index) {
        return std::vector<HeaderField>{
            {"version", "version", uint64_t(index.version), std::to_string(index.version)},
            {"flags", "flags", index.flags, std::to_string(index.flags)}};
    };
    return m;
}

} // namespace ckptscope
