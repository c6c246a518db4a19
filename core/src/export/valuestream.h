#pragma once

#include "ckptscope/common/taskcontrol.h"
#include "ckptscope/document/document.h"

#include <cstdint>
#include <functional>
#include <ostream>

namespace ckptscope {

// How a writer wants a tensor's values: as stored (a block type's whole
// blocks), or as f32.
enum class StreamAs { Stored, F32 };

// The one loop of every writer (OXCK, safetensors, npy, raw): tensor
// `index`'s values to `out` in C order, about 4 MiB at a time, checking for
// cancellation before each chunk and calling `advanced(n)` after it. As f32,
// an F64 value beyond f32's range is refused — an ExportError naming the
// file, the tensor and the value, `why` saying what holds f32 only — never
// written as an infinity.
void streamValues(std::ostream& out, const Document& doc, size_t index, StreamAs as,
                  const TaskControl& control, const std::function<void(uint64_t n)>& advanced,
                  const char* why = "");

// Throws ExportError naming the file and the tensor when tensor `index` is a
// meta tensor (TensorTraits::meta): it has no values to write, and an empty
// array would pass for them.
void refuseMetaTensor(const Document& doc, size_t index);

} // namespace ckptscope
