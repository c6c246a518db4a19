#include "ckptscope/export/npywriter.h"

#include "ckptscope/export/safetensorswriter.h"

#include <algorithm>
#include <vector>

namespace ckptscope {

namespace {

constexpr uint64_t kChunkBytes = 4 << 20;

// Streams the values of tensor `index`, converted to f32 or as stored (a
// block type's whole blocks).
void streamValues(std::ostream& out, const Document& doc, size_t index, bool toF32,
                  const TaskControl& control) {
    const TensorEntry& t = doc.tensors()[index];
    const DtypeBlock block = toF32 ? DtypeBlock{1, 4} : dtypeBlock(t.dtype);
    const uint64_t chunk = std::max<uint64_t>(1, kChunkBytes / block.bytes) * block.elements;
    std::vector<char> buffer(size_t(std::min(t.dataLen, chunk) / block.elements * block.bytes));
    for (uint64_t done = 0; done < t.dataLen;) {
        control.throwIfCancelled();
        const uint64_t n = std::min(chunk, t.dataLen - done);
        if (toF32)
            doc.readValues(index, done, n, reinterpret_cast<float*>(buffer.data()));
        else
            doc.readRawValues(index, done, n, buffer.data());
        out.write(buffer.data(), std::streamsize(n / block.elements * block.bytes));
        done += n;
        control.report(done, t.dataLen);
    }
    control.report(1, 1);
}

} // namespace

NpyLayout npyLayout(const Document& doc, size_t index) {
    const TensorEntry& t = doc.tensors().at(index);
    NpyLayout l;
    if (const char* d = npyDescr(t.dtype)) {
        l.descr = d;
    } else {
        l.descr = "<f4";
        l.converted = true;
        // (a type with no decoder, Q8_1, fails at its first read: no note
        // promising values first)
        if (dtypeDecodable(t.dtype))
            l.notes.push_back("tensor \"" + t.name + "\": " + dtypeName(t.dtype) +
                              " has no NumPy type; written as float32 ('<f4'), exactly");
    }
    l.shape = exportShape(doc, index, &l.notes);
    return l;
}

std::string npyHeader(const std::string& descr, const std::vector<uint64_t>& shape) {
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
    for (size_t i = 0; i < shape.size(); ++i)
        dict += std::to_string(shape[i]) + (shape.size() == 1      ? ","
                                            : i + 1 < shape.size() ? ", "
                                                                   : "");
    dict += "), }";
    const bool v2 = dict.size() + 1 + 10 + 64 > 65535;
    const size_t prefix = v2 ? 12 : 10;
    const size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
    dict.append(total - prefix - dict.size() - 1, ' ');
    dict += '\n';
    std::string out = "\x93NUMPY";
    out += char(v2 ? 2 : 1);
    out += char(0);
    const uint64_t len = dict.size();
    for (size_t i = 0; i < (v2 ? 4u : 2u); ++i)
        out += char((len >> (8 * i)) & 0xff);
    return out + dict;
}

void writeNpy(std::ostream& out, const Document& doc, size_t index, const NpyLayout& layout,
              const TaskControl& control) {
    const std::string header = npyHeader(layout.descr, layout.shape);
    out.write(header.data(), std::streamsize(header.size()));
    streamValues(out, doc, index, layout.converted, control);
}

void writeRaw(std::ostream& out, const Document& doc, size_t index, const TaskControl& control) {
    streamValues(out, doc, index, false, control);
}

} // namespace ckptscope
