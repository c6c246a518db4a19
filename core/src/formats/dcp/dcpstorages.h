#pragma once

// A DCP folder's chunk storages, each a torch.save archive inside a rank's
// file or a tensor of its safetensors blob, found when a read first needs
// one (dcpfolder.cpp plans them).

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/formatindex.h"
#include "ckptscope/io/bytesource.h"
#include "formats/invalidfile.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope::dcp {

// An error of a file's reader, without the file's name it starts with
// (the caller's message names it already).
inline std::string after(const std::string& message, const std::string& file) {
    return message.starts_with(file + ": ") ? message.substr(file.size() + 2) : message;
}

inline std::string sizesText(const std::vector<uint64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

// A chunk written with SerializationFormat.SAFETENSORS: its place's length
// is that of its values (a torch.save archive around them is longer).
inline bool isSafetensorsChunk(const TensorStorage& planned) {
    return planned.containerBytes == planned.bytes;
}

// A chunk's storage key, as the index names it: its file and byte, and for
// a SAFETENSORS chunk — at its blob's first byte with the rank's others —
// its tensor.
inline std::string chunkKey(const std::string& file, uint64_t offset, const std::string& tensor,
                            bool safetensors) {
    return file + " @" + std::to_string(offset) + (safetensors ? " " + tensor : std::string());
}

// The chunks' storages, found on first read: each chunk's torch.save
// archive must hold one tensor of the planned dtype and sizes, contiguous or
// a permuted view of its whole storage (its strides kept: boxStrides). A
// rank file written with SerializationFormat.SAFETENSORS holds its chunks
// in one safetensors blob after its non-tensor items, each chunk under its
// tensor's name, every chunk's place the blob's first byte: its header is
// read once and the chunk found by name.
class DcpStorages final : public StorageResolver {
public:
    struct Chunk {
        uint32_t tensor; // in `tensors`
        std::vector<uint64_t> sizes, offsets;
    };
    std::vector<std::string> tensors;                     // the logical tensors' names
    std::vector<Chunk> chunks;                            // per storage of the index
    std::vector<TensorStorage> planned;                   // the index's storages, without keys
    std::vector<std::shared_ptr<const ByteSource>> files; // the index's shards
    std::vector<std::string> fileNames;                   // their names in the plan

    const TensorStorage& resolve(uint32_t storage) const override {
        const std::lock_guard lock(m_mutex);
        if (m_found.size() != planned.size())
            m_found.resize(planned.size());
        if (!m_found.at(storage))
            m_found[storage] = find(storage);
        return *m_found[storage];
    }

private:
    TensorStorage find(uint32_t storage) const;
    struct Blob;
    // The safetensors blob at `offset` of shard `shard`, read once (its
    // `error` says why the bytes there are not one).
    const Blob* blobAt(uint32_t shard, uint64_t offset) const;

    mutable std::mutex m_mutex;
    mutable std::vector<std::optional<TensorStorage>> m_found;
    mutable std::map<std::pair<uint32_t, uint64_t>, std::shared_ptr<const Blob>> m_blobs;
};

} // namespace ckptscope::dcp
