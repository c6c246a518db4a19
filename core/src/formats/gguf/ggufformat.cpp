#include "formats/gguf/ggufformat.h"

#include "ckptscope/formats/gguf/ggufreader.h"
#include "ckptscope/io/filesource.h"

namespace ckptscope {

namespace {

bool probe(const ByteSource& source) {
    return gguf::ggufProbeFailure(source).empty();
}

FormatIndex open(const ByteSource& source) {
    const DeferredChangeCheck changes(source); // one fstat at the end, not one per field
    gguf::GgufHeader header = gguf::readGgufHeader(source);
    changes.finish();
    FormatIndex index;
    index.version = header.version;
    index.dataStart = header.dataStart;
    index.alignment = header.alignment;
    index.tensors = std::move(header.tensors);
    index.metadata = std::move(header.metadata);
    return index;
}

} // namespace

FormatModule ggufFormat() {
    return {Format::Gguf,           "gguf", "GGUF file", ".gguf", "the GGUF magic", probe,
            gguf::ggufProbeFailure, open};
}

} // namespace ckptscope
