#pragma once

// The few distinct values (levels) a block of a ggml type takes, and how many
// of its elements take each: statistics count levels instead of decoding
// every value (stats/levelstats.cpp).
#include "formats/gguf/ggmlblocks.h"

#include <bit>
#include <cstdint>
#include <cstring>

namespace ckptscope::gguf::levels {

// Q1_0: f16 d, 128 sign bits; two levels, d (bit set) and -d (bit clear;
// ggml flips the sign bit, so -d of a NaN d is a NaN too).
struct Q1_0 {
    static constexpr uint32_t kBytes = 18, kElements = 128;
    static uint16_t scale(const uint8_t* b) { return blocks::u16At(b); }
    static uint32_t setBits(const uint8_t* b) {
        uint64_t bits[2];
        std::memcpy(bits, b + 2, 16);
        return uint32_t(std::popcount(bits[0]) + std::popcount(bits[1]));
    }
    static float high(uint16_t d) { return halfToFloat(d); }
    static float low(uint16_t d) {
        return std::bit_cast<float>(std::bit_cast<uint32_t>(high(d)) ^ 0x80000000u);
    }
};

} // namespace ckptscope::gguf::levels
