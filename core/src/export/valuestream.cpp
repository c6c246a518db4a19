#include "export/valuestream.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/export/exporterror.h"
#include "ckptscope/formats/dtype.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ckptscope {

namespace {

constexpr uint64_t kChunkBytes = 4 << 20;

// Values [first, first + n) of an F64 tensor narrowed to f32, each checked
// to fit.
void narrowF64(const Document& doc, size_t index, uint64_t first, uint64_t n, float* out,
               std::vector<double>& wide, const char* why) {
    wide.resize(size_t(n));
    doc.readValues(index, first, n, wide.data());
    for (size_t k = 0; k < wide.size(); ++k) {
        out[k] = float(wide[k]);
        if (std::isfinite(wide[k]) && std::isinf(out[k]))
            throw ExportError(doc.path() + ": tensor \"" + doc.tensors()[index].name +
                              "\": value " + std::to_string(first + k) + " (" +
                              fmt::exact(wide[k]) + ") is beyond the range of f32" + why);
    }
}

} // namespace

void refuseMetaTensor(const Document& doc, size_t index) {
    if (isMetaTensor(doc.index(), index))
        throw ExportError(doc.path() + ": tensor \"" + doc.tensors().at(index).name +
                          "\": " + kMetaTensorNote + " to write");
}

void streamValues(std::ostream& out, const Document& doc, size_t index, StreamAs as,
                  const TaskControl& control, const std::function<void(uint64_t n)>& advanced,
                  const char* why) {
    refuseMetaTensor(doc, index);
    const TensorEntry& t = doc.tensors()[index];
    const bool toF32 = as == StreamAs::F32;
    const DtypeBlock block = toF32 ? DtypeBlock{1, 4} : dtypeBlock(t.dtype);
    const uint64_t chunk = std::max<uint64_t>(1, kChunkBytes / block.bytes) * block.elements;
    std::vector<char> buffer(size_t(std::min(t.dataLen, chunk) / block.elements * block.bytes));
    std::vector<double> wide;
    for (uint64_t done = 0; done < t.dataLen;) {
        control.throwIfCancelled();
        const uint64_t n = std::min(chunk, t.dataLen - done);
        auto* floats = reinterpret_cast<float*>(buffer.data());
        if (toF32 && t.dtype == Dtype::F64)
            narrowF64(doc, index, done, n, floats, wide, why);
        else if (toF32)
            doc.readValues(index, done, n, floats);
        else
            doc.readRawValues(index, done, n, buffer.data());
        out.write(buffer.data(), std::streamsize(n / block.elements * block.bytes));
        done += n;
        advanced(n);
    }
}

} // namespace ckptscope
