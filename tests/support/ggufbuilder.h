#pragma once

// The tests' own small GGUF writer, independent of the project's reader:
// little-endian fields appended one by one (hostile variants are built the
// same way), and ggufOf for a valid file as ggml lays it out.
#include <bit>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace testsupport {

struct GgufBytes {
    std::vector<uint8_t> bytes;
    void u32(uint32_t v) { put(v, 4); }
    void u64(uint64_t v) { put(v, 8); }
    void put(uint64_t v, int n) {
        for (int i = 0; i < n; ++i)
            bytes.push_back(uint8_t(v >> (8 * i)));
    }
    void str(const std::string& s) {
        u64(s.size());
        bytes.insert(bytes.end(), s.begin(), s.end());
    }
    void pad32() {
        while (bytes.size() % 32)
            bytes.push_back(0);
    }
};

// A GGUF v3 file of F32 tensors (1-D) and u16 metadata (split.no,
// split.count…), laid out as ggml lays it out (alignment 32).
inline std::string ggufOf(const std::vector<std::pair<std::string, uint16_t>>& u16s,
                          const std::vector<std::pair<std::string, std::vector<float>>>& tensors) {
    constexpr uint32_t kU16 = 2, kF32 = 0; // gguf_type GGUF_TYPE_UINT16, ggml_type GGML_TYPE_F32
    GgufBytes b;
    b.bytes = {'G', 'G', 'U', 'F'};
    b.u32(3);
    b.u64(tensors.size());
    b.u64(u16s.size());
    for (const auto& [key, value] : u16s) {
        b.str(key);
        b.u32(kU16);
        b.put(value, 2);
    }
    uint64_t offset = 0;
    for (const auto& [name, values] : tensors) {
        b.str(name);
        b.u32(1);
        b.u64(values.size());
        b.u32(kF32);
        b.u64(offset);
        offset += (values.size() * 4 + 31) / 32 * 32;
    }
    b.pad32();
    for (const auto& [name, values] : tensors) {
        for (float v : values)
            b.u32(std::bit_cast<uint32_t>(v));
        b.pad32();
    }
    return std::string(b.bytes.begin(), b.bytes.end());
}

} // namespace testsupport
