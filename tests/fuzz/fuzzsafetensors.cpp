// Checks of the safetensors reader for fuzz_safetensors and the replay in
// tst_safetensors: a refused input fails with a CheckpointError naming the
// file; an accepted one tiles its data buffer, every value read matches the
// file's bytes, and writing it back as safetensors and reading that again
// gives the same tensors and metadata.
#include "fuzzchecks.h"

#include "ckptscope/document/document.h"
#include "ckptscope/export/exporterror.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/safetensors/safetensorsindex.h"
#include "ckptscope/export/safetensorswriter.h"
#include "ckptscope/io/bytesource.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

using namespace ckptscope;

namespace fuzzchecks {

namespace {

constexpr uint64_t kMaxValues = 1 << 16; // per tensor, to keep runs fast

} // namespace

void checkSafetensors(std::string_view bytes) {
    const std::string name = "fuzz.safetensors";
    auto source =
        std::make_shared<MemorySource>(std::vector<uint8_t>(bytes.begin(), bytes.end()), name);
    SafetensorsIndex index;
    try {
        index = readSafetensorsIndex(*source);
    } catch (const CheckpointError& e) {
        require(std::string(e.what()).rfind(name + ": ", 0) == 0,
                std::string("error without the file name: ") + e.what());
        return;
    }
    uint64_t expected = index.dataStart;
    for (const TensorEntry& t : index.tensors) {
        require(t.dataOffset == expected, "tensors do not tile the data buffer");
        expected += t.dataLen * dtypeSize(t.dtype);
        require(expected <= source->size(), "a tensor runs past the file");
    }
    require(expected == source->size(), "bytes after the last tensor were accepted");

    std::shared_ptr<const Document> doc;
    try {
        doc = Document::open(source);
    } catch (const OpenError& e) {
        throw InvariantViolation(std::string("index accepted, Document refused: ") + e.what());
    }
    require(doc->format() == Format::Safetensors, "not detected as safetensors");
    for (size_t i = 0; i < doc->tensors().size(); ++i) {
        const TensorEntry& t = doc->tensors()[i];
        const uint64_t n = std::min(t.dataLen, kMaxValues);
        if (n == 0)
            continue;
        const size_t size = dtypeSize(t.dtype);
        std::vector<uint8_t> raw(size_t(n) * size);
        doc->readRawValues(i, 0, n, raw.data());
        require(std::memcmp(raw.data(), bytes.data() + t.dataOffset, raw.size()) == 0,
                "raw values differ from the file's bytes");
        std::vector<float> f(static_cast<size_t>(n));
        std::vector<double> d(static_cast<size_t>(n));
        doc->readValues(i, 0, n, f.data());
        doc->readValues(i, 0, n, d.data());
        for (size_t k = 0; k < f.size(); ++k) {
            // 64-bit integers round once, straight to f32 (through double
            // they could round twice); everything else is exact in double.
            float want = float(d[k]);
            if (t.dtype == Dtype::U64 || t.dtype == Dtype::I64) {
                uint64_t bits;
                std::memcpy(&bits, raw.data() + k * 8, 8);
                want = t.dtype == Dtype::U64 ? float(bits) : float(int64_t(bits));
            }
            require((std::isnan(f[k]) && std::isnan(d[k])) || f[k] == want,
                    std::string("f32 and f64 conversions disagree for ") + dtypeName(t.dtype));
        }
    }
    // Written back, the file reads as the same tensors.
    std::ostringstream out;
    try {
        writeSafetensors(out, *doc);
    } catch (const ExportError&) {
        return; // a name the writer refuses (e.g. not UTF-8 text)
    }
    const std::string again = out.str();
    const auto back = Document::open(std::make_shared<MemorySource>(
        std::vector<uint8_t>(again.begin(), again.end()), "again.safetensors"));
    require(back->metadata() == doc->metadata(), "metadata changed in a round trip");
    require(back->tensors().size() == doc->tensors().size(),
            "tensor count changed in a round trip");
    for (size_t i = 0; i < doc->tensors().size(); ++i) {
        const TensorEntry& a = doc->tensors()[i];
        const TensorEntry& b = back->tensors()[i];
        require(a.name == b.name && a.shape == b.shape && a.dtype == b.dtype &&
                    a.dataLen == b.dataLen,
                "a tensor changed in a round trip");
        require(std::memcmp(again.data() + b.dataOffset, bytes.data() + a.dataOffset,
                            size_t(a.dataLen * dtypeSize(a.dtype))) == 0,
                "values changed in a round trip");
    }
}

} // namespace fuzzchecks
