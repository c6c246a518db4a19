#include "ckptscope/export/valuechunk.h"

#include "ckptscope/common/numberformat.h"

#include <cstring>

namespace ckptscope {

ValueChunk::ValueChunk(const Document& doc, size_t index, uint64_t first, uint64_t count)
    : m_dtype(doc.tensors().at(index).dtype), m_count(size_t(count)) {
    if (dtypeBlock(m_dtype).elements != 1) { // a block type: its values as decoded, in f32
        m_decoded.resize(m_count);
        doc.readValues(index, first, count, m_decoded.data());
        return;
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
    default: {
        double v; // exact for every other dtype
        convertToF64(m_dtype, p, 1, &v);
        return isInteger(m_dtype) ? std::to_string(int64_t(v)) : fmt::exact(float(v));
    }
    }
}

double ValueChunk::value(size_t i) const {
    if (m_width == 0)
        return double(m_decoded[i]);
    double v;
    convertToF64(m_dtype, m_raw.data() + i * m_width, 1, &v);
    return v;
}

} // namespace ckptscope
