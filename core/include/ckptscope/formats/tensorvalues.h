#pragma once

#include "ckptscope/formats/formatindex.h"
#include "ckptscope/io/bytesource.h"

#include <cstdint>

namespace ckptscope {

// The one decoder of stored values, for every format and dtype: count values
// of a tensor from element `first`, converted (exact for F32, F16, BF16, F8,
// 8/16-bit integers and BOOL; rounded in f32 for 32/64-bit integers and
// F64). The whole blocks that hold [first, first + count) are read and
// decoded. The range is checked against the tensor's dataLen; the file is
// read with source.read (unaligned-safe, little-endian).
void readTensorValues(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                      uint64_t count, float* out);
// The same in double (exact for every dtype but 64-bit integers past 2^53).
void readTensorValues(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                      uint64_t count, double* out);
// The stored bytes of count elements from `first` (whole blocks: first and
// count must be multiples of the dtype's block).
void readRawValues(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                   uint64_t count, void* out);

} // namespace ckptscope
