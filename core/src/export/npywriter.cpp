#include "ckptscope/export/npywriter.h"

#include "ckptscope/export/safetensorswriter.h"
#include "export/valuestream.h"

#include <algorithm>
#include <vector>

namespace ckptscope {

namespace {

// One tensor's values, its progress the share of them written.
void streamOne(std::ostream& out, const Document& doc, size_t index, StreamAs as,
               const TaskControl& control) {
    const uint64_t total = doc.tensors()[index].dataLen;
    uint64_t done = 0;
    streamValues(out, doc, index, as, control,
                 [&](uint64_t n) { control.report(done += n, total); });
    control.report(1, 1);
}

} // namespace

NpyLayout npyLayout(const Document& doc, size_t index) {
    const TensorEntry& t = doc.tensors().at(index);
    NpyLayout l;
    if (const char* d = npyDescr(t.dtype); d && !doc.writtenAsF32(index)) {
        l.descr = d;
    } else {
        l.descr = "<f4";
        l.converted = true;
        // (a type with no decoder, Q8_1, fails at its first read: no note
        // promising values first)
        if (dtypeDecodable(t.dtype) && !doc.writtenAsF32(index))
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
    streamOne(out, doc, index, layout.converted ? StreamAs::F32 : StreamAs::Stored, control);
}

void writeRaw(std::ostream& out, const Document& doc, size_t index, const TaskControl& control) {
    streamOne(out, doc, index, StreamAs::Stored, control);
}

} // namespace ckptscope
