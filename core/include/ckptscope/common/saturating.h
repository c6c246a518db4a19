#pragma once

#include <cstdint>

namespace ckptscope {

// Counts from a file can be huge: sums stop at UINT64_MAX instead of
// wrapping (FORMATS.md: never wrap silently).
constexpr uint64_t saturatingAdd(uint64_t a, uint64_t b) {
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

constexpr uint64_t saturatingMul(uint64_t a, uint64_t b) {
    return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

} // namespace ckptscope
