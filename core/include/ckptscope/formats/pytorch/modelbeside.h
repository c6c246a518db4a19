#pragma once

#include <string>

namespace ckptscope {

// The model file of a Trainer checkpoint folder (the one its optimizer.pt
// belongs to), in the order transformers' loader prefers: model.safetensors,
// its index, pytorch_model.bin, its index; "" when none is there.
std::string modelFileIn(const std::string& folder);

} // namespace ckptscope
