#pragma once

#include "ckptscope/document/document.h"
#include "ckptscope/export/exporterror.h"

#include <ostream>
#include <string>
#include <vector>

namespace ckptscope {

// The shape a tensor is exported with where a scalar is `[]` with one value
// (safetensors, NumPy): OXCK's empty shape with one stored value is that
// scalar, with none it is [0]; a stored count that differs from the shape's
// product gives 1-D [count] and a warning naming the tensor.
std::vector<uint64_t> exportShape(const Document& doc, size_t index,
                                  std::vector<std::string>* warnings);

// Refuses (ExportError naming the file and tensor) a name given twice and,
// when `reserved` is set, a tensor named __metadata__.
void checkExportNames(const Document& doc, bool reserved);

// The document's tensors as safetensors, in their order, each in its dtype;
// metadata into __metadata__; the header padded with spaces so the data
// starts at a multiple of 8. Returns the warnings. Throws ExportError.
std::vector<std::string> writeSafetensors(std::ostream& out, const Document& doc,
                                          const TaskControl& control = {});
// Why safetensors cannot hold a dtype (it has no name for C128; quantized
// values need their scale and zero point), or null when it can: such
// tensors are left out of a conversion, named in a warning.
const char* safetensorsLeavesOut(Dtype dtype);
// Whether tensor `index` is written as F32 (a GGUF block type dequantized,
// a DeepSpeed buffer widened: Document::writtenAsF32), and the bytes its
// values take in the file (what a shard index's total_size counts).
bool safetensorsAsF32(const Document& doc, size_t index);
uint64_t safetensorsBytes(const Document& doc, size_t index);
// The same for the tensors at `tensors` (indexes into doc.tensors(), in that
// order), with the document's metadata: one shard of a sharded model. The
// caller has checked the names (checkExportNames).
std::vector<std::string> writeSafetensors(std::ostream& out, const Document& doc,
                                          const std::vector<size_t>& tensors,
                                          const TaskControl& control = {});

} // namespace ckptscope
