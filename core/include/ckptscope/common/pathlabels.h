#pragma once

#include <string>
#include <utility>

namespace ckptscope {

// Labels that tell two files apart: the shortest trailing parts of their
// paths that differ ("llama/model.safetensors", "llama-ft/model.safetensors"
// for two model.safetensors; just the names when those differ). The whole
// paths when no trailing part differs (the same file). Separators are '/'
// (and '\' on Windows).
std::pair<std::string, std::string> distinguishingPaths(const std::string& a, const std::string& b);

} // namespace ckptscope
