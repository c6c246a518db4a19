#include "ckptscope/formats/tensorvalues.h"

#include "ckptscope/formats/checkpointerror.h"

#include "formats/tensorgather.h"

#include <algorithm>
#include <type_traits>
#include <vector>

namespace ckptscope {

namespace {

// Where a tensor's elements lie contiguously: a file, the byte of element 0
// and the bytes the run may be read on to (prefetching stops there).
struct ContiguousRun {
    const ByteSource& source;
    uint64_t offset;
    uint64_t end;
};

void checkRange(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                uint64_t count) {
    if (first > tensor.dataLen || count > tensor.dataLen - first)
        throw CheckpointError(CheckpointError::Kind::Invalid,
                              source.name() + ": tensor " + quotedName(tensor.name) + ": values " +
                                  std::to_string(first) + "+" + std::to_string(count) +
                                  " are outside its " + std::to_string(tensor.dataLen));
}

void checkDecodable(const ByteSource& source, const TensorEntry& tensor) {
    if (!dtypeDecodable(tensor.dtype))
        throw CheckpointError(
            CheckpointError::Kind::Invalid,
            source.name() + ": tensor " + quotedName(tensor.name) + ": " + dtypeName(tensor.dtype) +
                " values cannot be read (" +
                (isComplex(tensor.dtype)
                     ? std::string("complex: each value is a (real, imaginary) pair, and "
                                   "statistics are not computed for complex values")
                 : isQuantized(tensor.dtype)
                     ? std::string("quantized: stored integers whose scale and zero point are "
                                   "in the pickle; not read as values")
                     : "ggml defines no decoder for " + std::string(dtypeName(tensor.dtype))) +
                ")");
}

template <typename Out> void convert(Dtype dtype, const uint8_t* raw, size_t n, Out* out) {
    if constexpr (std::is_same_v<Out, float>)
        convertToF32(dtype, raw, n, out);
    else
        convertToF64(dtype, raw, n, out);
}

// The run of a tensor that owns its bytes.
ContiguousRun ownRun(const ByteSource& source, const TensorEntry& tensor) {
    const std::optional<uint64_t> bytes = dtypeBytes(tensor.dtype, tensor.dataLen);
    return {source, tensor.dataOffset, bytes ? tensor.dataOffset + *bytes : tensor.dataOffset};
}

// The view as one contiguous little-endian run, when it is one (no strides,
// no pieces, not byte-swapped): read as a tensor that owns its bytes.
std::optional<ContiguousRun> viewRun(const TensorSources& from, const TensorEntry& tensor,
                                     const TensorView& view) {
    if (!view.strides.empty() || !view.pieces.empty() || view.storage >= from.index.storages.size())
        return std::nullopt;
    const TensorStorage& s = storageAt(from.index, view.storage);
    const size_t size = dtypeSize(tensor.dtype);
    if (s.bigEndian && size > 1)
        return std::nullopt;
    const uint64_t held = s.bytes / size;
    if (dtypeBlock(tensor.dtype).elements != 1 || view.elementOffset > held ||
        tensor.dataLen > held - view.elementOffset)
        return std::nullopt; // gatherRaw names the fault
    return ContiguousRun{from.shard(s.shard), s.offset + view.elementOffset * size,
                         s.offset + s.bytes};
}

const TensorView* viewOf(const TensorSources& from, const TensorEntry& tensor) {
    if (tensor.view == kNoView)
        return nullptr;
    if (tensor.view >= from.index.views.size())
        throw CheckpointError(CheckpointError::Kind::Invalid,
                              from.main.name() + ": tensor " + quotedName(tensor.name) + ": view " +
                                  std::to_string(tensor.view) + " is not in the index");
    return &from.index.views[tensor.view];
}

// Reads the blocks that hold [first, first + count) a chunk at a time and
// decodes them; values of a block cut by the range's ends are decoded aside
// and the wanted ones copied.
template <typename Out>
void readDecoded(const ContiguousRun& at, const TensorEntry& tensor, uint64_t first, uint64_t count,
                 Out* out) {
    checkRange(at.source, tensor, first, count);
    checkDecodable(at.source, tensor);
    const DtypeBlock block = dtypeBlock(tensor.dtype);
    const uint64_t perBlock = block.elements;
    const uint64_t chunkBlocks = std::max<uint64_t>(1, (uint64_t(1) << 16) / perBlock);
    std::vector<uint8_t> raw;
    std::vector<Out> partial;
    for (uint64_t done = 0; done < count;) {
        const uint64_t element = first + done;
        const uint64_t skip = element % perBlock;
        const uint64_t blocks =
            std::min(chunkBlocks, (skip + count - done + perBlock - 1) / perBlock);
        const uint64_t take = std::min(blocks * perBlock - skip, count - done);
        raw.resize(size_t(blocks * block.bytes));
        at.source.readAhead(at.offset + element / perBlock * block.bytes, raw.data(), raw.size(),
                            at.end);
        if (skip == 0 && take == blocks * perBlock) {
            convert(tensor.dtype, raw.data(), size_t(take), out + done);
        } else {
            partial.resize(size_t(blocks * perBlock));
            convert(tensor.dtype, raw.data(), partial.size(), partial.data());
            std::copy_n(partial.begin() + ptrdiff_t(skip), size_t(take), out + done);
        }
        done += take;
    }
}

template <typename Out>
void readContiguous(const ContiguousRun& at, const TensorEntry& tensor, uint64_t first,
                    uint64_t count, Out* out) {
    if constexpr (std::is_same_v<Out, float>) {
        if (tensor.dtype == Dtype::F32) {
            // Stored as wanted: read the bytes straight into the floats (the
            // data sits at any offset, so no pointer into the file is cast).
            checkRange(at.source, tensor, first, count);
            at.source.readAhead(at.offset + first * 4, out, size_t(count * 4), at.end);
            return;
        }
    }
    readDecoded(at, tensor, first, count, out);
}

void readContiguousRaw(const ContiguousRun& at, const TensorEntry& tensor, uint64_t first,
                       uint64_t count, void* out) {
    checkRange(at.source, tensor, first, count);
    const DtypeBlock block = dtypeBlock(tensor.dtype);
    if (first % block.elements != 0 || count % block.elements != 0)
        throw CheckpointError(CheckpointError::Kind::Invalid,
                              at.source.name() + ": tensor " + quotedName(tensor.name) +
                                  ": raw values are read in whole blocks of " +
                                  std::to_string(block.elements));
    at.source.readAhead(at.offset + first / block.elements * block.bytes, out,
                        size_t(count / block.elements * block.bytes), at.end);
}

// A gathered view: raw little-endian bytes a chunk at a time, then decoded.
template <typename Out>
void readGathered(const TensorSources& from, const TensorEntry& tensor, const TensorView& view,
                  uint64_t first, uint64_t count, Out* out) {
    checkRange(from.main, tensor, first, count);
    checkDecodable(from.main, tensor);
    const size_t size = dtypeSize(tensor.dtype);
    constexpr uint64_t kChunk = uint64_t(1) << 16;
    // Values stored as the caller wants them (F32 into float, F64 into
    // double) are gathered in place: no copy through a buffer.
    const bool asStored = tensor.dtype == (std::is_same_v<Out, float> ? Dtype::F32 : Dtype::F64);
    std::vector<uint8_t> raw;
    for (uint64_t done = 0; done < count;) {
        const uint64_t n = std::min(kChunk, count - done);
        if (asStored) {
            gatherRaw(from, tensor, view, first + done, n, reinterpret_cast<uint8_t*>(out + done));
        } else {
            raw.resize(size_t(n * size));
            gatherRaw(from, tensor, view, first + done, n, raw.data());
            convert(tensor.dtype, raw.data(), size_t(n), out + done);
        }
        done += n;
    }
}

template <typename Out>
void readAny(const TensorSources& from, const TensorEntry& tensor, uint64_t first, uint64_t count,
             Out* out) {
    const TensorView* view = viewOf(from, tensor);
    if (!view) {
        readContiguous(ownRun(from.shard(tensor.shard), tensor), tensor, first, count, out);
    } else if (const auto run = viewRun(from, tensor, *view)) {
        readContiguous(*run, tensor, first, count, out);
    } else {
        readGathered(from, tensor, *view, first, count, out);
    }
}

// A view whose elements are exactly storage elements [offset, offset + n)
// in another order (a transposed or permuted dense tensor: its strides,
// sorted, are a C-contiguous layout's; dimensions of size 1 left out): that
// run, as a contiguous view. nullopt for any other view.
std::optional<TensorView> denseRun(const TensorEntry& tensor, const TensorView& view) {
    if (!view.pieces.empty() || view.strides.size() != tensor.shape.size())
        return std::nullopt;
    std::vector<std::pair<int64_t, uint64_t>> dims; // stride, size
    for (size_t k = 0; k < tensor.shape.size(); ++k)
        if (tensor.shape[k] != 1)
            dims.emplace_back(view.strides[k], tensor.shape[k]);
    std::sort(dims.begin(), dims.end());
    uint64_t expected = 1;
    for (const auto& [stride, size] : dims) {
        if (stride < 0 || uint64_t(stride) != expected)
            return std::nullopt;
        if (size != 0 && expected > UINT64_MAX / size)
            return std::nullopt;
        expected *= size;
    }
    TensorView run;
    run.storage = view.storage;
    run.elementOffset = view.elementOffset;
    return run;
}

template <typename Out>
void readInStorageOrder(const TensorSources& from, const TensorEntry& tensor, uint64_t first,
                        uint64_t count, Out* out) {
    const TensorView* view = viewOf(from, tensor);
    const std::optional<TensorView> run = view ? denseRun(tensor, *view) : std::nullopt;
    if (!run) {
        readAny(from, tensor, first, count, out);
        return;
    }
    TensorEntry flat = tensor;
    flat.shape = {tensor.dataLen};
    if (const auto contiguous = viewRun(from, flat, *run))
        readContiguous(*contiguous, flat, first, count, out);
    else
        readGathered(from, flat, *run, first, count, out); // swapped, or past its storage
}

void requireOwnBytes(const ByteSource& source, const TensorEntry& tensor) {
    if (tensor.view != kNoView)
        throw CheckpointError(CheckpointError::Kind::Invalid,
                              source.name() + ": tensor " + quotedName(tensor.name) +
                                  " is a view: read it with its index (TensorSources)");
}

} // namespace

void readTensorValues(const TensorSources& from, const TensorEntry& tensor, uint64_t first,
                      uint64_t count, float* out) {
    readAny(from, tensor, first, count, out);
}

void readTensorValues(const TensorSources& from, const TensorEntry& tensor, uint64_t first,
                      uint64_t count, double* out) {
    readAny(from, tensor, first, count, out);
}

void readTensorValuesInStorageOrder(const TensorSources& from, const TensorEntry& tensor,
                                    uint64_t first, uint64_t count, float* out) {
    readInStorageOrder(from, tensor, first, count, out);
}

void readTensorValuesInStorageOrder(const TensorSources& from, const TensorEntry& tensor,
                                    uint64_t first, uint64_t count, double* out) {
    readInStorageOrder(from, tensor, first, count, out);
}

void readRawValues(const TensorSources& from, const TensorEntry& tensor, uint64_t first,
                   uint64_t count, void* out) {
    const TensorView* view = viewOf(from, tensor);
    if (!view) {
        readContiguousRaw(ownRun(from.shard(tensor.shard), tensor), tensor, first, count, out);
    } else if (const auto run = viewRun(from, tensor, *view)) {
        readContiguousRaw(*run, tensor, first, count, out);
    } else {
        checkRange(from.main, tensor, first, count);
        gatherRaw(from, tensor, *view, first, count, static_cast<uint8_t*>(out));
    }
}

void readComplexValues(const TensorSources& from, const TensorEntry& tensor, uint64_t first,
                       uint64_t count, double* out) {
    if (!isComplex(tensor.dtype))
        throw CheckpointError(CheckpointError::Kind::Invalid,
                              from.main.name() + ": tensor " + quotedName(tensor.name) + ": " +
                                  dtypeName(tensor.dtype) + " values are not complex");
    if (tensor.dtype == Dtype::C128) { // stored as the doubles wanted
        readRawValues(from, tensor, first, count, out);
        return;
    }
    constexpr uint64_t kBlock = uint64_t(1) << 15;
    std::vector<float> parts(size_t(std::min(count, kBlock)) * 2);
    for (uint64_t done = 0; done < count;) {
        const uint64_t n = std::min(kBlock, count - done);
        readRawValues(from, tensor, first + done, n, parts.data());
        std::copy(parts.begin(), parts.begin() + ptrdiff_t(2 * n), out + 2 * done);
        done += n;
    }
}

void readTensorValues(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                      uint64_t count, float* out) {
    requireOwnBytes(source, tensor);
    readContiguous(ownRun(source, tensor), tensor, first, count, out);
}

void readTensorValues(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                      uint64_t count, double* out) {
    requireOwnBytes(source, tensor);
    readContiguous(ownRun(source, tensor), tensor, first, count, out);
}

void readRawValues(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                   uint64_t count, void* out) {
    requireOwnBytes(source, tensor);
    readContiguousRaw(ownRun(source, tensor), tensor, first, count, out);
}

std::optional<uint64_t> shapeElementCount(const std::vector<uint64_t>& shape) {
    if (shape.empty())
        return 0; // reference quirk: a scalar stored as [] counts 0
    uint64_t product = 1;
    for (uint64_t d : shape) {
        if (d != 0 && product > UINT64_MAX / d) {
            // A zero dimension later still makes the product 0.
            if (std::find(shape.begin(), shape.end(), 0) != shape.end())
                return 0;
            return std::nullopt;
        }
        product *= d;
    }
    return product;
}

std::optional<uint64_t> tensorSizeBytes(const TensorEntry& tensor) {
    if (!tensor.elementCount)
        return std::nullopt;
    return dtypeBytes(tensor.dtype, *tensor.elementCount);
}

std::optional<double> tensorBitsPerWeight(const TensorEntry& tensor) {
    const auto bytes = tensorSizeBytes(tensor);
    if (!bytes || !tensor.elementCount || *tensor.elementCount == 0)
        return std::nullopt;
    return double(*bytes) * 8 / double(*tensor.elementCount);
}

} // namespace ckptscope
