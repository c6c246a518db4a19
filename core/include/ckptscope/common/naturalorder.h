#pragma once

#include <string_view>

namespace ckptscope {

// Orders names the way people count: "checkpoint-200" before
// "checkpoint-1000". Runs of ASCII digits compare by value (leading zeros
// aside), other bytes ASCII-case-insensitively; ties fall back to plain byte
// order so the order is total. The GUI's naturalLess (ui/common) is the same
// rule over Unicode text.
bool naturalLess(std::string_view a, std::string_view b);

} // namespace ckptscope
