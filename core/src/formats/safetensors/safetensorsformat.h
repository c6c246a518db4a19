#pragma once

#include "ckptscope/formats/formatmodule.h"

namespace ckptscope {

// safetensors (FORMATS.md §3): a u64 header length, a JSON header, the data.
FormatModule safetensorsFormat();

} // namespace ckptscope
