#pragma once

#include "ckptscope/formats/formatmodule.h"

namespace ckptscope {

// OXCK model checkpoints (FORMATS.md §1): magic "OXCK", f32 tensors.
FormatModule oxckFormat();

} // namespace ckptscope
