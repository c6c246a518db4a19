#include "ckptscope/export/valuechunk.h"

#include "ckptscope/common/numberformat.h"

#include "stats/integerstats.h"

#include <cstring>
#include <limits>

namespace ckptscope {

namespace {

__extension__ typedef __int128 i128; // GCC and Clang; -Wpedantic off
__extension__ typedef unsigned __int128 u128;

// The stored integer at p, whole.
i128 integerAt(Dtype dtype, const uint8_t* p) {
    return stats::withIntegerType(dtype, [p](auto type) {
        decltype(type) v;
        std::memcpy(&v, p, sizeof v);
        return i128(v);
    });
}

// Decimal digits of x, signed.
std::string decimal(i128 x) {
    u128 magnitude = x < 0 ? u128(0) - u128(x) : u128(x);
    std::string digits;
    do {
        digits.insert(digits.begin(), char('0' + int(magnitude % 10)));
        magnitude /= 10;
    } while (magnitude != 0);
    return x < 0 ? "-" + digits : digits;
}

} // namespace

ValueChunk::ValueChunk(const Document& doc, size_t index, uint64_t first, uint64_t count)
    : m_dtype(doc.tensors().at(index).dtype), m_count(size_t(count)) {
    if (dtypeBlock(m_dtype).elements != 1) { // a block type: its values as decoded, in f32
        m_decoded.resize(m_count);
        doc.readValues(index, first, count, m_decoded.data());
        return;
    }
    if (isQuantized(m_dtype) && count > 0) { // refused by name, as every reader refuses them
        float none;
        doc.readValues(index, first, 1, &none);
    }
    m_width = dtypeSize(m_dtype);
    m_raw.resize(m_count * m_width);
    doc.readRawValues(index, first, count, m_raw.data());
}

std::string ValueChunk::text(size_t i) const {
    if (m_width == 0)
        return fmt::exact(m_decoded[i]);
    const uint8_t* p = m_raw.data() + i * m_width;
    switch (m_dtype) {
    case Dtype::U64: {
        uint64_t v;
        std::memcpy(&v, p, 8);
        return std::to_string(v);
    }
    case Dtype::I64: {
        int64_t v;
        std::memcpy(&v, p, 8);
        return std::to_string(v);
    }
    case Dtype::F64: {
        double v;
        std::memcpy(&v, p, 8);
        return fmt::exact(v);
    }
    case Dtype::C64:
    case Dtype::C128: {
        const std::complex<double> z = complexValue(i);
        return fmt::exactComplex(z.real(), z.imag(), m_dtype == Dtype::C64);
    }
    default: {
        double v; // exact for every other dtype
        convertToF64(m_dtype, p, 1, &v);
        return isInteger(m_dtype) ? std::to_string(int64_t(v)) : fmt::exact(float(v));
    }
    }
}

std::optional<std::string> ValueChunk::integerDifference(const ValueChunk& a, size_t ia,
                                                         const ValueChunk& b, size_t ib) {
    if (a.m_width == 0 || b.m_width == 0 || !isInteger(a.m_dtype) || !isInteger(b.m_dtype))
        return std::nullopt;
    return decimal(integerAt(b.m_dtype, b.m_raw.data() + ib * b.m_width) -
                   integerAt(a.m_dtype, a.m_raw.data() + ia * a.m_width));
}

std::complex<double> ValueChunk::complexValue(size_t i) const {
    const uint8_t* p = m_raw.data() + i * m_width;
    if (m_dtype == Dtype::C64) {
        float parts[2];
        std::memcpy(parts, p, 8);
        return {double(parts[0]), double(parts[1])};
    }
    double parts[2];
    std::memcpy(parts, p, 16);
    return {parts[0], parts[1]};
}

double ValueChunk::value(size_t i) const {
    if (m_width == 0)
        return double(m_decoded[i]);
    if (isComplex())
        return std::numeric_limits<double>::quiet_NaN();
    double v;
    convertToF64(m_dtype, m_raw.data() + i * m_width, 1, &v);
    return v;
}

} // namespace ckptscope
