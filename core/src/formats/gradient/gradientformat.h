#pragma once

#include "ckptscope/formats/formatmodule.h"

namespace ckptscope {

// Gradient checkpoints (FORMATS.md §2): a JSON object holding a graph.
FormatModule gradientFormat();

} // namespace ckptscope
