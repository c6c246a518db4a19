#pragma once

#include <string>

namespace ckptscope {

// Every format read, named from the format registry (formatModules()), so a
// new module appears in every help text by itself: "OXCK checkpoints,
// safetensors files and gradient checkpoints".
std::string readableFormatsText();

} // namespace ckptscope
