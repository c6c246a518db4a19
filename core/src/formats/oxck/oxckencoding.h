#pragma once

#include "ckptscope/formats/oxck/metadatacodec.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

// The OXCK byte layout for writers: the whole-checkpoint writer and the
// streaming sample generator share it, so both stay byte-identical to the
// reference writer. Callers check limits (name length, metadata size) first.
namespace ckptscope::oxck {

inline void putU32(std::ostream& out, uint32_t v) {
    char b[4];
    for (int i = 0; i < 4; ++i)
        b[i] = char(v >> (8 * i));
    out.write(b, 4);
}

inline void putU64(std::ostream& out, uint64_t v) {
    char b[8];
    for (int i = 0; i < 8; ++i)
        b[i] = char(v >> (8 * i));
    out.write(b, 8);
}

// Magic, version, flags (0), tensor count, metadata length and text.
inline void writeHeader(std::ostream& out, uint32_t version, const std::string& metadataText,
                        uint64_t tensorCount) {
    out.write("OXCK", 4);
    putU32(out, version);
    putU64(out, 0); // flags: reserved
    putU64(out, tensorCount);
    putU32(out, uint32_t(metadataText.size()));
    out.write(metadataText.data(), std::streamsize(metadataText.size()));
}

// Everything of a tensor before its values.
inline void writeTensorHeader(std::ostream& out, const std::string& name,
                              const std::vector<uint64_t>& shape, uint64_t dataLen) {
    putU32(out, uint32_t(name.size()));
    out.write(name.data(), std::streamsize(name.size()));
    putU32(out, uint32_t(shape.size()));
    for (uint64_t d : shape)
        putU64(out, d);
    putU64(out, dataLen);
}

// Values as f32 little-endian (the host is little-endian: static_assert in
// oxckindex.cpp).
inline void writeValues(std::ostream& out, const float* values, size_t count) {
    out.write(reinterpret_cast<const char*>(values), std::streamsize(count * sizeof(float)));
}

} // namespace ckptscope::oxck
