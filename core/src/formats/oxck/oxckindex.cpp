#include "ckptscope/formats/oxck/oxckindex.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/bytecursor.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <unordered_map>

namespace ckptscope {

static_assert(std::endian::native == std::endian::little,
              "OXCK values are little-endian f32; a big-endian port must byte-swap");

namespace {

constexpr uint64_t kMinTensorBytes = 4 + 4 + 8; // name_len, ndim, data_len
// Metadata blocks above this size have their first bytes checked first.
constexpr uint64_t kMetadataPeekAbove = 1 << 20;
constexpr size_t kMetadataPeek = 64 * 1024;

// Re-throws a cursor error with the tensor it happened in.
[[noreturn]] void rethrowInTensor(const CheckpointError& e, const std::string& file, size_t index,
                                  const std::string* name) {
    std::string msg = e.what();
    const std::string prefix = file + ": ";
    if (msg.rfind(prefix, 0) == 0)
        msg.erase(0, prefix.size());
    std::string where = "tensor " + std::to_string(index);
    if (name)
        where += " " + quotedName(*name);
    throw CheckpointError(e.kind(), prefix + where + ": " + msg, e.offset());
}

// The metadata block: a huge one has its first bytes checked before it is
// read (and allocated), so a block backed by real bytes but not an object —
// say 2 GiB of zeros in a sparse file — fails at once.
Metadata readMetadata(ByteCursor& cur, const ByteSource& source, uint32_t metadataLen) {
    const std::string& file = source.name();
    const uint64_t metadataOffset = cur.offset();
    if (metadataLen > kMetadataPeekAbove) {
        cur.require(metadataLen, "the metadata block");
        std::string head(kMetadataPeek, '\0');
        source.read(metadataOffset, head.data(), head.size());
        const size_t first = head.find_first_not_of(" \t\r\n");
        if (first != std::string::npos && head[first] != '{')
            throw CheckpointError(CheckpointError::Kind::BadMetadata,
                                  file + ": metadata at byte " +
                                      std::to_string(metadataOffset + first) +
                                      ": expected '{' to open the metadata object",
                                  metadataOffset + first);
    }
    const std::string metadataText = cur.bytes(metadataLen, "the metadata block");
    return parseMetadata(metadataText, file, metadataOffset);
}

// One tensor record: name, shape, value count; the values are skipped.
TensorEntry readTensorRecord(ByteCursor& cur, const std::string& file, size_t i) {
    TensorEntry t;
    t.headerOffset = cur.offset();
    bool haveName = false;
    try {
        const uint32_t nameLen = cur.u32("the name length (u32)");
        const uint64_t nameOffset = cur.offset();
        t.name = cur.bytes(nameLen, "the name");
        if (!isValidUtf8(t.name))
            throw CheckpointError(CheckpointError::Kind::InvalidUtf8,
                                  file + ": byte " + std::to_string(nameOffset) +
                                      ": expected a UTF-8 name, found invalid bytes",
                                  nameOffset);
        haveName = true;
        const uint32_t ndim = cur.u32("the dimension count (u32)");
        cur.require(uint64_t(ndim) * 8, "the shape");
        t.shape.resize(ndim);
        for (auto& d : t.shape)
            d = cur.u64("a dimension (u64)");
        const uint64_t dataLenOffset = cur.offset();
        t.dataLen = cur.u64("the value count (u64)");
        if (t.dataLen > cur.remaining() / 4)
            throw CheckpointError(
                CheckpointError::Kind::Truncated,
                file + ": byte " + std::to_string(dataLenOffset) +
                    ": truncated: " + std::to_string(t.dataLen) + " values need " +
                    (t.dataLen > UINT64_MAX / 4 ? std::string("more than 2^64")
                                                : std::to_string(t.dataLen * 4)) +
                    " bytes, " + std::to_string(cur.remaining()) + " left in the file",
                dataLenOffset);
        t.dataOffset = cur.offset();
        cur.skip(t.dataLen * 4, "the values");
    } catch (const CheckpointError& e) {
        rethrowInTensor(e, file, i, haveName ? &t.name : nullptr);
    }
    t.elementCount = shapeElementCount(t.shape);
    return t;
}

// Anomalies that do not stop reading: shapes that disagree with the stored
// count, duplicate names, bytes after the last tensor.
void addWarnings(OxckIndex& index) {
    std::unordered_map<std::string_view, size_t> firstByName;
    for (size_t i = 0; i < index.tensors.size(); ++i) {
        const TensorEntry& t = index.tensors[i];
        const std::string where = "tensor " + std::to_string(i) + " " + quotedName(t.name);
        if (!t.elementCount) {
            index.warnings.push_back({where + ": the shape's element count overflows 64 bits", i});
        } else if (*t.elementCount != t.dataLen && !(t.shape.empty() && t.dataLen == 1)) {
            index.warnings.push_back({where + ": shape holds " + std::to_string(*t.elementCount) +
                                          " elements but " + std::to_string(t.dataLen) +
                                          " values are stored",
                                      i});
        }
        auto [it, fresh] = firstByName.try_emplace(t.name, i);
        if (!fresh)
            index.warnings.push_back({where + ": duplicate name (tensor " +
                                          std::to_string(it->second) +
                                          " has it too; lookups by name find that one)",
                                      i});
    }
    if (index.endOffset < index.fileSize)
        index.warnings.push_back({std::to_string(index.fileSize - index.endOffset) +
                                      " bytes follow the last tensor (from byte " +
                                      std::to_string(index.endOffset) + ") and are ignored",
                                  std::nullopt});
}

} // namespace

OxckIndex readOxckIndex(const ByteSource& source) {
    const std::string& file = source.name();
    OxckIndex index;
    index.fileSize = source.size();
    if (source.size() == 0)
        throw CheckpointError(CheckpointError::Kind::Truncated,
                              file + ": the file is empty; expected an OXCK header", 0);

    ByteCursor cur(source);
    const std::string magic = cur.bytes(std::min<uint64_t>(4, source.size()), "magic");
    if (magic != "OXCK")
        throw CheckpointError(CheckpointError::Kind::InvalidMagic,
                              file + ": byte 0: expected the magic \"OXCK\"", 0);
    index.version = cur.u32("the version (u32)");
    if (index.version != 1)
        throw CheckpointError(CheckpointError::Kind::UnsupportedVersion,
                              file + ": byte 4: unsupported checkpoint version " +
                                  std::to_string(index.version) + "; expected 1",
                              4);
    index.flags = cur.u64("the flags (u64)");
    const uint64_t numTensorsOffset = cur.offset();
    const uint64_t numTensors = cur.u64("the tensor count (u64)");
    const uint32_t metadataLen = cur.u32("the metadata length (u32)");
    index.metadata = readMetadata(cur, source, metadataLen);

    // Each tensor takes at least 16 bytes: a count beyond that is hostile.
    if (numTensors > cur.remaining() / kMinTensorBytes)
        throw CheckpointError(CheckpointError::Kind::Truncated,
                              file + ": byte " + std::to_string(numTensorsOffset) +
                                  ": the file claims " + std::to_string(numTensors) +
                                  " tensors, but the " + std::to_string(cur.remaining()) +
                                  " bytes left hold at most " +
                                  std::to_string(cur.remaining() / kMinTensorBytes) +
                                  " (each needs at least 16 bytes)",
                              numTensorsOffset);
    index.tensors.reserve(size_t(numTensors));
    for (uint64_t i = 0; i < numTensors; ++i)
        index.tensors.push_back(readTensorRecord(cur, file, size_t(i)));
    index.endOffset = cur.offset();
    addWarnings(index);
    return index;
}

} // namespace ckptscope
