#pragma once

#include "ckptscope/formats/tensorvalues.h"

#include <cstdint>

namespace ckptscope {

// Elements [first, first + count) of a tensor that views a storage with
// strides, or is made of pieces, as little-endian bytes in C order
// (count × the dtype's size at out). Throws CheckpointError naming the
// tensor when the view reaches past its storage or a piece is missing.
void gatherRaw(const TensorSources& from, const TensorEntry& tensor, const TensorView& view,
               uint64_t first, uint64_t count, uint8_t* out);

// The element (of the storage) where a view's last element lies: the view's
// extent, checked against the storage once per read; nullopt past 64 bits.
std::optional<uint64_t> lastStorageElement(const std::vector<uint64_t>& shape,
                                           const TensorView& view);

// Swaps each element of n (size bytes each) in place: big-endian storages.
void swapElements(uint8_t* bytes, uint64_t n, size_t size);

} // namespace ckptscope
