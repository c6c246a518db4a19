#include "ckptscope/formats/oxck/checkpoint.h"

#include "ckptscope/common/saturating.h"
#include "ckptscope/formats/oxck/oxckindex.h"
#include "ckptscope/formats/tensorvalues.h"
#include "ckptscope/io/atomicfile.h"
#include "ckptscope/io/filesource.h"
#include "formats/oxck/oxckencoding.h"

#include <istream>
#include <iterator>
#include <ostream>
#include <sstream>

namespace ckptscope {

namespace {

Checkpoint readCheckpoint(const ByteSource& source) {
    const OxckIndex index = readOxckIndex(source);
    Checkpoint ck;
    ck.version = index.version;
    ck.metadata = index.metadata;
    ck.tensors.reserve(index.tensors.size());
    for (const TensorEntry& e : index.tensors) {
        // dataLen was checked against the file size while indexing.
        std::vector<float> data(size_t(e.dataLen));
        readTensorValues(source, e, 0, e.dataLen, data.data());
        ck.tensors.emplace_back(e.name, e.shape, std::move(data));
    }
    return ck;
}

} // namespace

CheckpointTensor::CheckpointTensor(std::string n, std::vector<uint64_t> s, std::vector<float> d)
    : name(std::move(n)), shape(std::move(s)), data(std::move(d)) {}

std::optional<uint64_t> CheckpointTensor::checkedElementCount() const {
    return shapeElementCount(shape);
}

uint64_t CheckpointTensor::elementCount() const {
    return checkedElementCount().value_or(UINT64_MAX);
}

uint64_t CheckpointTensor::sizeBytes() const {
    return saturatingMul(elementCount(), 4);
}

void Checkpoint::addTensor(CheckpointTensor tensor) {
    tensors.push_back(std::move(tensor));
}

void Checkpoint::setMetadata(std::string key, std::string value) {
    metadata.insert_or_assign(std::move(key), std::move(value));
}

std::optional<std::string> Checkpoint::getMetadata(const std::string& key) const {
    const auto it = metadata.find(key);
    if (it == metadata.end())
        return std::nullopt;
    return it->second;
}

const CheckpointTensor* Checkpoint::getTensor(const std::string& name) const {
    for (const auto& t : tensors)
        if (t.name == name)
            return &t;
    return nullptr;
}

uint64_t Checkpoint::numParams() const {
    uint64_t sum = 0;
    for (const auto& t : tensors) {
        sum = saturatingAdd(sum, t.elementCount());
    }
    return sum;
}

uint64_t Checkpoint::totalBytes() const {
    uint64_t sum = 0;
    for (const auto& t : tensors) {
        sum = saturatingAdd(sum, t.sizeBytes());
    }
    return sum;
}

void Checkpoint::writeTo(std::ostream& out) const {
    for (const auto& t : tensors)
        if (t.name.size() > kMaxNameBytes)
            throw CheckpointError(CheckpointError::Kind::Invalid,
                                  "tensor name of " + std::to_string(t.name.size()) +
                                      " bytes exceeds the 65535-byte limit");
    const std::string meta = serializeMetadata(metadata);
    if (meta.size() > UINT32_MAX)
        throw CheckpointError(CheckpointError::Kind::Invalid, "metadata exceeds 4 GiB");
    oxck::writeHeader(out, version, meta, tensors.size());
    for (const auto& t : tensors) {
        oxck::writeTensorHeader(out, t.name, t.shape, t.data.size());
        oxck::writeValues(out, t.data.data(), t.data.size());
    }
}

std::string Checkpoint::encode() const {
    std::ostringstream out;
    writeTo(out);
    return std::move(out).str();
}

void Checkpoint::save(const std::string& path) const {
    try {
        writeFileAtomically(path, [this](std::ostream& out) { writeTo(out); });
    } catch (const IoError& e) {
        throw CheckpointError(CheckpointError::Kind::Io, e.what());
    }
}

Checkpoint Checkpoint::load(const std::string& path) {
    try {
        const FileSource source(path);
        const DeferredChangeCheck changes(source); // once at the end, not per tensor
        Checkpoint ck = readCheckpoint(source);
        changes.finish();
        return ck;
    } catch (const IoError& e) {
        throw CheckpointError(CheckpointError::Kind::Io, e.what());
    } catch (const SourceChangedError& e) {
        throw CheckpointError(CheckpointError::Kind::Io, e.what());
    }
}

Checkpoint Checkpoint::readFrom(std::istream& in, const std::string& name) {
    // The stream's length is unknown: read what is really there (bounded by
    // the data, never by a count claimed in it), then parse from memory.
    std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in),
                               std::istreambuf_iterator<char>()};
    const MemorySource source(std::move(bytes), name);
    return readCheckpoint(source);
}

} // namespace ckptscope
