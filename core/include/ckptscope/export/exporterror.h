#pragma once

#include "ckptscope/common/taskcontrol.h"

#include <stdexcept>

namespace ckptscope {

// A file that cannot be written in the asked format (a name safetensors
// cannot hold, a value outside f32's range…). The message names the input
// file and the tensor.
class ExportError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace ckptscope
