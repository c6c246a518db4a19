#pragma once

#include "ckptscope/formats/formatindex.h"
#include "ckptscope/io/bytesource.h"

#include <cstdint>

namespace ckptscope {

// Where an index's tensors find their bytes: the file opened, and the index
// with its shards, storages and views.
class StorageCache;

struct TensorSources {
    const ByteSource& main;
    const FormatIndex& index;
    // Where storages read whole are kept for views read out of order (a
    // transposed matrix); none: each read takes its runs from the file.
    StorageCache* cache = nullptr;
    // The file of shard `shard` (the file opened when the index has none).
    const ByteSource& shard(uint32_t shard) const {
        return index.shards.empty() ? main : *index.shards.at(shard).source;
    }
};

// The one reader of stored values, for every format, dtype and layout:
// count values of a tensor from element `first` in C order, converted (exact
// for F32, F16, BF16, F8, 8/16-bit integers and BOOL; rounded in f32 for
// 32/64-bit integers and F64). A tensor that owns its bytes is read as
// stored, whole blocks at a time; a strided view over a storage is gathered
// (the elements a chunk needs read in sorted runs); a tensor made of pieces
// takes each run from the piece that holds it. The range is checked against
// the tensor's dataLen, a view against its storage; big-endian storages are
// swapped.
void readTensorValues(const TensorSources& from, const TensorEntry& tensor, uint64_t first,
                      uint64_t count, float* out);
// The same in double (exact for every dtype but 64-bit integers past 2^53).
void readTensorValues(const TensorSources& from, const TensorEntry& tensor, uint64_t first,
                      uint64_t count, double* out);
// The same values in the order their storage holds them, where a view's
// elements are one run of its storage in another order (a transposed or
// permuted tensor), else in C order: for figures that need no order
// (statistics, histograms). A transposed matrix read in C order a window at
// a time wants a few elements of every column per window; in storage order
// each window is one contiguous read.
void readTensorValuesInStorageOrder(const TensorSources& from, const TensorEntry& tensor,
                                    uint64_t first, uint64_t count, float* out);
void readTensorValuesInStorageOrder(const TensorSources& from, const TensorEntry& tensor,
                                    uint64_t first, uint64_t count, double* out);
// The little-endian stored bytes of count elements from `first`, in C order
// (whole blocks: first and count must be multiples of the dtype's block).
void readRawValues(const TensorSources& from, const TensorEntry& tensor, uint64_t first,
                   uint64_t count, void* out);
// count values of a complex tensor (C64, C128) from `first` as their
// (real, imaginary) parts in double, exactly: 2 count doubles.
void readComplexValues(const TensorSources& from, const TensorEntry& tensor, uint64_t first,
                       uint64_t count, double* out);

// The same for a tensor that owns its bytes in `source` (no view): a single
// file's index, fuzzers.
void readTensorValues(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                      uint64_t count, float* out);
void readTensorValues(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                      uint64_t count, double* out);
void readRawValues(const ByteSource& source, const TensorEntry& tensor, uint64_t first,
                   uint64_t count, void* out);

} // namespace ckptscope
