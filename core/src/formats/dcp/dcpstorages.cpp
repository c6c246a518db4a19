#include "formats/dcp/dcpstorages.h"

#include "ckptscope/formats/safetensors/safetensorsindex.h"

#include "formats/pytorch/pytorchformat.h"
#include "formats/tensorgather.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_map>

namespace ckptscope::dcp {

namespace {

// A rank file's bytes from `from` on: the safetensors blob
// SerializationFormat.SAFETENSORS writes after the non-tensor items, read
// as a file of its own (its header's offsets count from its start).
class TailSource final : public ByteSource {
public:
    TailSource(const ByteSource& file, uint64_t from) : m_file(file), m_from(from) {}
    uint64_t size() const override { return m_file.size() - m_from; }
    void read(uint64_t offset, void* dst, size_t n) const override {
        if (offset > size() || n > size() - offset) // the reader checks first: never
            throw CheckpointError(CheckpointError::Kind::Truncated,
                                  m_file.name() + ": a read past the end of the file");
        m_file.read(m_from + offset, dst, n);
    }
    const std::string& name() const override { return m_file.name(); }

private:
    const ByteSource& m_file;
    uint64_t m_from;
};

} // namespace

struct DcpStorages::Blob {
    SafetensorsIndex index;
    std::unordered_map<std::string, size_t> byName; // into index.tensors
    // DCP_SHARDING_INFO: the chunk's offsets each name was saved with.
    std::unordered_map<std::string, std::vector<uint64_t>> savedOffsets;
    std::string error; // why the bytes there are no safetensors data ("" when they are)
};

const DcpStorages::Blob* DcpStorages::blobAt(uint32_t shard, uint64_t offset) const {
    const auto key = std::make_pair(shard, offset);
    if (const auto it = m_blobs.find(key); it != m_blobs.end())
        return it->second.get();
    const ByteSource& file = *files.at(shard);
    auto blob = std::make_shared<Blob>();
    // Kept, failed or not: a damaged blob is not parsed again for each chunk.
    const TailSource tail(file, std::min(offset, file.size()));
    if (offset > file.size() || file.size() - offset < 9 || !looksLikeSafetensors(tail)) {
        blob->error = "no safetensors data there";
    } else {
        try {
            blob->index = readSafetensorsIndex(tail);
        } catch (const CheckpointError& e) {
            // Its byte numbers count from the blob's first byte.
            blob->error =
                "its safetensors data, counted from there: " + after(e.what(), file.name());
        }
    }
    for (size_t i = 0; i < blob->index.tensors.size(); ++i)
        blob->byName.emplace(blob->index.tensors[i].name, i);
    for (const auto& [key2, value] : blob->index.metadata)
        if (key2 == "DCP_SHARDING_INFO") {
            const auto info = nlohmann::json::parse(value, nullptr, false);
            if (!info.is_object())
                continue;
            for (const auto& [name, entry] : info.items()) {
                const auto saved = entry.find("saved_offsets");
                if (!entry.is_object() || saved == entry.end() || !saved->is_array())
                    continue;
                std::vector<uint64_t> offsets;
                for (const auto& o : *saved)
                    if (o.is_number_unsigned())
                        offsets.push_back(o.get<uint64_t>());
                if (offsets.size() == saved->size())
                    blob->savedOffsets.emplace(name, std::move(offsets));
            }
        }
    return m_blobs.emplace(key, std::move(blob)).first->second.get();
}

TensorStorage DcpStorages::find(uint32_t storage) const {
    const TensorStorage& p = planned.at(storage);
    const Chunk& c = chunks.at(storage);
    const ByteSource& file = *files.at(p.shard);
    const std::string& name = tensors.at(c.tensor);
    const std::string where = file.name() + ": tensor " + quotedName(name) + " chunk at " +
                              sizesText(c.offsets) + ", saved at byte " + std::to_string(p.offset);
    // What either layout holds for the chunk: the plan's dtype and sizes.
    const auto checkHeld = [&](const TensorEntry& t) {
        if (t.dtype != p.dtype)
            failInvalid(where, std::string("it holds ") + dtypeName(t.dtype) + ", the plan says " +
                                   dtypeName(p.dtype));
        if (t.shape != c.sizes)
            failInvalid(where, "it holds a tensor of sizes " + sizesText(t.shape) +
                                   ", the plan says " + sizesText(c.sizes));
    };
    const bool safetensors = isSafetensorsChunk(p);
    const std::string key = chunkKey(fileNames.at(p.shard), p.offset, name, safetensors);
    if (safetensors) {
        const Blob* blob = blobAt(p.shard, p.offset);
        if (!blob->error.empty())
            failInvalid(where, blob->error + " (its length is that of its values: a chunk of "
                                             "SerializationFormat.SAFETENSORS)");
        const auto at = blob->byName.find(name);
        if (at == blob->byName.end())
            failInvalid(where, "the safetensors data there holds no tensor of that name");
        // One chunk of a name per file: the one the file says it saved.
        if (const auto saved = blob->savedOffsets.find(name);
            saved != blob->savedOffsets.end() && saved->second != c.offsets)
            failInvalid(where, "the safetensors data there holds the chunk at " +
                                   sizesText(saved->second) + " (DCP_SHARDING_INFO)");
        const TensorEntry& t = blob->index.tensors[at->second];
        checkHeld(t);
        TensorStorage s = p;
        s.deferred = false;
        s.offset = p.offset + t.dataOffset; // the header's offsets count from the blob
        s.bytes = t.dataLen * dtypeSize(t.dtype);
        s.key = key;
        return s;
    }
    FormatIndex part;
    try {
        part = openPytorchArchive(file, p.offset, p.offset + p.containerBytes);
    } catch (const CheckpointError& e) {
        failInvalid(where, after(e.what(), file.name()));
    }
    if (part.tensors.size() != 1 || part.objects.empty() ||
        part.objects.at(part.objects.root).kind != ObjectKind::Tensor)
        failInvalid(where, "not a torch.save of one tensor");
    const TensorEntry& t = part.tensors[0];
    checkHeld(t);
    if (t.view == kNoView) // a meta tensor: a dtype and a shape, no bytes
        failInvalid(where, "it holds a meta tensor, which has no values");
    const TensorView& saved = part.views.at(t.view);
    TensorStorage s = part.storages.at(saved.storage);
    const size_t size = dtypeSize(p.dtype);
    // torch clones a chunk that views part of a larger storage, but not a
    // permuted view of a whole one (a transposed weight): that chunk keeps
    // its strides, and is read through them.
    bool contiguous = true;
    uint64_t stride = 1;
    for (size_t k = t.shape.size(); k-- > 0 && !saved.strides.empty();) {
        contiguous = contiguous && (t.shape[k] <= 1 || uint64_t(saved.strides[k]) == stride);
        stride *= t.shape[k];
    }
    uint64_t reach = p.bytes / size; // elements from the view's first one
    if (!contiguous && reach > 0) {
        const std::optional<uint64_t> last =
            lastStorageElement(t.shape, TensorView{0, 0, saved.strides, {}});
        if (!last)
            failInvalid(where, "its strides reach past 2^64 elements");
        reach = *last + 1;
        s.boxStrides = saved.strides;
    }
    if (saved.elementOffset > s.bytes / size || reach > s.bytes / size - saved.elementOffset)
        failInvalid(where, "its storage holds fewer elements than the chunk" +
                               std::string(s.boxStrides.empty() ? "" : "'s strides reach"));
    s.offset += saved.elementOffset * size;
    s.bytes = reach * size;
    s.key = key;
    s.shard = p.shard;
    return s;
}

} // namespace ckptscope::dcp
