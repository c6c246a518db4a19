#pragma once

#include "ckptscope/formats/formatmodule.h"

namespace ckptscope {

// GGUF files (FORMATS.md §4): ggml's models, metadata and block-quantized tensors.
FormatModule ggufFormat();

} // namespace ckptscope
