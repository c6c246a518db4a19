#pragma once

// The tests' own small safetensors writer, independent of the project's
// (core/safetensorswriter): header JSON spelled out here, offsets and
// padding computed here, hostile variants by editing the parts.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace testsupport {

struct StTensor {
    std::string name;
    std::string dtype;
    std::vector<uint64_t> shape;
    std::string bytes; // the data, little-endian
};

// Raw little-endian bytes of values of T.
template <typename T> std::string leBytes(const std::vector<T>& values) {
    std::string s(values.size() * sizeof(T), '\0');
    if (!values.empty())
        std::memcpy(s.data(), values.data(), s.size());
    return s;
}

inline std::string jsonString(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        if (c == '\t') {
            out += "\\t";
            continue;
        }
        out += c;
    }
    return out + "\"";
}

// The header JSON text for tensors laid out one after another.
inline std::string stHeader(const std::vector<StTensor>& tensors,
                            const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
    std::string h = "{";
    bool first = true;
    if (!metadata.empty()) {
        h += "\"__metadata__\":{";
        for (size_t i = 0; i < metadata.size(); ++i)
            h += (i ? "," : "") + jsonString(metadata[i].first) + ":" +
                 jsonString(metadata[i].second);
        h += "}";
        first = false;
    }
    uint64_t offset = 0;
    for (const StTensor& t : tensors) {
        h += first ? "" : ",";
        first = false;
        h += jsonString(t.name) + ":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
        for (size_t i = 0; i < t.shape.size(); ++i)
            h += (i ? "," : "") + std::to_string(t.shape[i]);
        h += "],\"data_offsets\":[" + std::to_string(offset) + "," +
             std::to_string(offset + t.bytes.size()) + "]}";
        offset += t.bytes.size();
    }
    return h + "}";
}

// Length, header (padded with spaces to a multiple of 8 when asked) and data.
inline std::string stFile(const std::string& header, const std::string& data, bool pad = true) {
    std::string h = header;
    if (pad)
        while ((8 + h.size()) % 8)
            h += ' ';
    std::string out;
    for (int i = 0; i < 8; ++i)
        out += char((uint64_t(h.size()) >> (8 * i)) & 0xff);
    return out + h + data;
}

inline std::string stFile(const std::vector<StTensor>& tensors,
                          const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
    std::string data;
    for (const StTensor& t : tensors)
        data += t.bytes;
    return stFile(stHeader(tensors, metadata), data);
}

// Two files (A, B) at the edges of exact comparison: F64 "x" holds
// [max, -max, 0, 1] in A and [-max, max, 0, 1] in B (two differences pass
// the double range), I32 "ids" [16777217, 5] against [16777216, 5] (one
// difference of 1 above 2^24, which f32 cannot tell).
inline std::pair<std::string, std::string> topOfRangePair() {
    constexpr double mx = std::numeric_limits<double>::max();
    return {stFile({{"x", "F64", {4}, leBytes<double>({mx, -mx, 0, 1})},
                    {"ids", "I32", {2}, leBytes<int32_t>({16777217, 5})}}),
            stFile({{"x", "F64", {4}, leBytes<double>({-mx, mx, 0, 1})},
                    {"ids", "I32", {2}, leBytes<int32_t>({16777216, 5})}})};
}

} // namespace testsupport
