#pragma once

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/oxck/metadatacodec.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// A named f32 tensor, as in the reference library.
struct CheckpointTensor {
    std::string name;
    std::vector<uint64_t> shape;
    std::vector<float> data;

    CheckpointTensor() = default;
    CheckpointTensor(std::string name, std::vector<uint64_t> shape, std::vector<float> data);

    // Product of shape; 0 for an empty shape (reference quirk: a scalar stored
    // as shape [] counts as 0). Saturates at UINT64_MAX on overflow instead of
    // wrapping — use checkedElementCount() to tell.
    uint64_t elementCount() const;
    std::optional<uint64_t> checkedElementCount() const;
    uint64_t sizeBytes() const; // 4 × elementCount, saturating
};

// An OXCK model checkpoint held fully in memory (the reference API). For
// browsing large files use readOxckIndex/Document, which read lazily.
class Checkpoint {
public:
    static constexpr uint32_t kVersion = 1;
    static constexpr size_t kMaxNameBytes = 65535;

    Checkpoint() = default;

    uint32_t version = kVersion;
    Metadata metadata;
    std::vector<CheckpointTensor> tensors;

    void addTensor(CheckpointTensor tensor);
    void setMetadata(std::string key, std::string value);
    std::optional<std::string> getMetadata(const std::string& key) const;
    // First tensor with that name, or nullptr.
    const CheckpointTensor* getTensor(const std::string& name) const;
    uint64_t totalBytes() const; // saturating sums
    uint64_t numParams() const;

    // Writes via a temporary file + rename (safer than the reference, which
    // truncates in place). Throws CheckpointError.
    void save(const std::string& path) const;
    static Checkpoint load(const std::string& path);
    // Writes the encoding; does not flush (as the reference).
    void writeTo(std::ostream& out) const;
    static Checkpoint readFrom(std::istream& in, const std::string& name = "<stream>");
    // The encoding as bytes (what writeTo writes).
    std::string encode() const;
};

} // namespace ckptscope
