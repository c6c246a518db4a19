#include "ckptscope/formats/tensorvalues.h"

#include "ckptscope/formats/checkpointerror.h"

#include <algorithm>
#include <type_traits>
#include <vector>

namespace ckptscope {

namespace {

void checkRange(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                uint64_t count) {
    if (first > tensor.dataLen || count > tensor.dataLen - first)
        throw CheckpointError(CheckpointError::Kind::Invalid,
                              source.name() + ": tensor " + quotedName(tensor.name) + ": values " +
                                  std::to_string(first) + "+" + std::to_string(count) +
                                  " are outside its " + std::to_string(tensor.dataLen));
}

template <typename Out> void convert(Dtype dtype, const uint8_t* raw, size_t n, Out* out) {
    if constexpr (std::is_same_v<Out, float>)
        convertToF32(dtype, raw, n, out);
    else
        convertToF64(dtype, raw, n, out);
}

// Where the tensor's bytes end: reads within it may fetch on up to there.
uint64_t dataEnd(const TensorEntry& tensor) {
    const std::optional<uint64_t> bytes = dtypeBytes(tensor.dtype, tensor.dataLen);
    return bytes ? tensor.dataOffset + *bytes : tensor.dataOffset;
}

// Reads the blocks that hold [first, first + count) a chunk at a time and
// decodes them; values of a block cut by the range's ends are decoded aside
// and the wanted ones copied.
template <typename Out>
void readDecoded(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                 uint64_t count, Out* out) {
    checkRange(source, tensor, first, count);
    if (!dtypeDecodable(tensor.dtype))
        throw CheckpointError(CheckpointError::Kind::Invalid,
                              source.name() + ": tensor " + quotedName(tensor.name) + ": " +
                                  dtypeName(tensor.dtype) +
                                  " values cannot be read (ggml defines no decoder for " +
                                  dtypeName(tensor.dtype) + ")");
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
        source.readAhead(tensor.dataOffset + element / perBlock * block.bytes, raw.data(),
                         raw.size(), dataEnd(tensor));
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

} // namespace

void readTensorValues(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                      uint64_t count, float* out) {
    if (tensor.dtype == Dtype::F32) {
        // Stored as wanted: read the bytes straight into the floats (the data
        // sits at any offset, so no pointer into the file is cast).
        checkRange(source, tensor, first, count);
        source.readAhead(tensor.dataOffset + first * 4, out, size_t(count * 4), dataEnd(tensor));
        return;
    }
    readDecoded(source, tensor, first, count, out);
}

void readTensorValues(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                      uint64_t count, double* out) {
    readDecoded(source, tensor, first, count, out);
}

void readRawValues(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                   uint64_t count, void* out) {
    checkRange(source, tensor, first, count);
    const DtypeBlock block = dtypeBlock(tensor.dtype);
    if (first % block.elements != 0 || count % block.elements != 0)
        throw CheckpointError(CheckpointError::Kind::Invalid,
                              source.name() + ": tensor " + quotedName(tensor.name) +
                                  ": raw values are read in whole blocks of " +
                                  std::to_string(block.elements));
    source.readAhead(tensor.dataOffset + first / block.elements * block.bytes, out,
                     size_t(count / block.elements * block.bytes), dataEnd(tensor));
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
