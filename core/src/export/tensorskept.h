#pragma once

#include "ckptscope/document/document.h"

#include <string>
#include <vector>

namespace ckptscope {

// The tensors a written format can hold, in order; the others left out and
// named in one warning per reason ("2 tensors left out (safetensors has no
// C128 dtype): a, b"). `leftOutWhy` gives the reason a dtype is left out,
// or null for a dtype the format holds.
std::vector<size_t> tensorsKept(const Document& doc, const char* (*leftOutWhy)(Dtype),
                                std::vector<std::string>& warnings);
// Quantized values are written by no format: they need their scale and zero
// point (a reason for leftOutWhy), null for any other dtype.
const char* quantizedLeftOut(Dtype dtype);

// What a conversion of a pickled checkpoint (PyTorch) cannot carry over, as
// warnings: tensors that share a storage are each written whole (a file of
// tensors holds no shared bytes); the values that are not tensors (the
// epoch, param_groups…) are left out, named by their paths. None for other
// formats.
std::vector<std::string> pickleConversionNotes(const Document& doc);

} // namespace ckptscope
