// Checks of the GGUF reader for fuzz_gguf and the replay in
// tst_fuzzregressions: a refused input fails with a CheckpointError naming
// the file and an offset inside it; an accepted one has its tensors in order,
// aligned, whole blocks, inside the file; its arrays list their items; and
// values read in two pieces equal the values read at once.
#include "fuzzchecks.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/gguf/ggufreader.h"
#include "ckptscope/formats/tensorvalues.h"
#include "ckptscope/io/bytesource.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace ckptscope;

namespace fuzzchecks {

namespace {

void checkLayout(const gguf::GgufHeader& h, uint64_t size) {
    uint64_t end = h.dataStart;
    for (const TensorEntry& t : h.tensors) {
        const DtypeBlock block = dtypeBlock(t.dtype);
        const auto bytes = dtypeBytes(t.dtype, t.dataLen);
        require(bytes.has_value(), "a tensor of partial blocks");
        require(t.dataOffset >= end, "tensors overlap or are out of order");
        require((t.dataOffset - h.dataStart) % h.alignment == 0, "a tensor is not aligned");
        require(t.dataOffset <= size && *bytes <= size - t.dataOffset,
                "a tensor ends past the file");
        require(t.shape.empty() || t.shape.back() % block.elements == 0, "ne[0] not whole blocks");
        require(t.shape.empty() || t.elementCount == shapeElementCount(t.shape),
                "elementCount != product of shape");
        end = t.dataOffset + *bytes;
    }
}

// The first values of a tensor, at once and in two pieces cut inside a block.
void checkValues(const ByteSource& source, const TensorEntry& t) {
    const uint64_t n = std::min<uint64_t>(t.dataLen, 1024);
    if (n < 2)
        return;
    std::vector<float> whole(static_cast<size_t>(n)), parts(static_cast<size_t>(n));
    try {
        readTensorValues(source, t, 0, n, whole.data());
    } catch (const CheckpointError& e) {
        require(!dtypeDecodable(t.dtype), std::string("values refused: ") + e.what());
        return;
    }
    require(dtypeDecodable(t.dtype), "read values of an undecodable type");
    const uint64_t cut = n / 2 + 1;
    readTensorValues(source, t, 0, cut, parts.data());
    readTensorValues(source, t, cut, n - cut, parts.data() + cut);
    require(std::memcmp(whole.data(), parts.data(), whole.size() * 4) == 0,
            "values read in two pieces differ");
}

} // namespace

void checkGguf(std::string_view bytes) {
    const std::string name = "fuzz.gguf";
    const MemorySource source(std::vector<uint8_t>(bytes.begin(), bytes.end()), name);
    gguf::GgufHeader h;
    try {
        h = gguf::readGgufHeader(source);
    } catch (const CheckpointError& e) {
        require(std::string(e.what()).rfind(name + ": ", 0) == 0,
                std::string("error without the file name: ") + e.what());
        require(!e.offset() || *e.offset() <= bytes.size(), "error offset past the end");
        return;
    } catch (const SourceChangedError& e) {
        // Every length is checked first: a read past the end is a bug.
        throw InvariantViolation(std::string("header read past the end: ") + e.what());
    }
    require(h.version == 2 || h.version == 3, "accepted a version ggml refuses");
    require(h.alignment != 0 && (h.alignment & (h.alignment - 1)) == 0, "alignment not 2^k");
    checkLayout(h, bytes.size());
    for (const MetadataRow& row : h.metadata)
        if (row.array) {
            const auto items = gguf::readGgufArrayItems(source, *row.array, 0, 16);
            require(items.size() == std::min<uint64_t>(row.array->count, 16),
                    "an array lists fewer items than it holds");
        }
    const size_t limit = std::min<size_t>(h.tensors.size(), 64);
    for (size_t i = 0; i < limit; ++i)
        checkValues(source, h.tensors[i]);
}

} // namespace fuzzchecks
