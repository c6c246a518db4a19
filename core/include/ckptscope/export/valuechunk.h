#pragma once

#include "ckptscope/document/document.h"
#include "ckptscope/formats/dtype.h"

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// A run of one tensor's values, read once as stored: the raw bytes of an
// element dtype, or the decoded f32 of a block type. Each value is spelled
// exactly (the shortest text that reads back to the same float32 — double
// for F64 —, integers in full digits, nan, inf, -inf; a complex value as
// fmt::exactComplex) and read as a double (exact but for 64-bit integers
// beyond 2^53; a complex one only as its pair). A text is made when asked:
// views that show a few cells of a chunk format only those.
class ValueChunk {
public:
    ValueChunk() = default;
    // Values [first, first + count) of tensor `index`; throws as
    // Document::readValues does.
    ValueChunk(const Document& doc, size_t index, uint64_t first, uint64_t count);

    size_t size() const { return m_count; }
    std::string text(size_t i) const;
    // Value i; NaN for a complex one, which is no single number (complexValue).
    double value(size_t i) const;
    bool isComplex() const { return ckptscope::isComplex(m_dtype); }
    // Value i of a complex chunk, exact in double.
    std::complex<double> complexValue(size_t i) const;
    // b[ib] − a[ia] exactly, in decimal ("-1"), when both chunks hold
    // integers (the difference of two 64-bit integers can pass 2^64 and a
    // double's 2^53); none otherwise.
    static std::optional<std::string> integerDifference(const ValueChunk& a, size_t ia,
                                                        const ValueChunk& b, size_t ib);

private:
    Dtype m_dtype = Dtype::F32;
    size_t m_count = 0, m_width = 0; // m_width: bytes a stored element; 0 for a block type
    std::vector<uint8_t> m_raw;
    std::vector<float> m_decoded;
};

} // namespace ckptscope
