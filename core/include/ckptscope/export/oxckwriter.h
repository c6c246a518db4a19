#pragma once

#include "ckptscope/document/document.h"
#include "ckptscope/export/exporterror.h"

#include <ostream>
#include <string>
#include <vector>

namespace ckptscope {

// A document's tensors as an OXCK checkpoint, streamed: metadata as the
// OXCK metadata block, every dtype converted to f32 (with a warning for
// each tensor that was not F32), a scalar `[]` as an empty shape with one
// stored value. A finite F64 value beyond f32's range is an ExportError
// naming the tensor (NaN and ±Inf convert as they are). Returns warnings.
std::vector<std::string> writeOxck(std::ostream& out, const Document& doc,
                                   const TaskControl& control = {});

} // namespace ckptscope
