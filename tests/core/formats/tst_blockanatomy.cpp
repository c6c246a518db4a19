// The Block panel's decoding (formats/gguf/blockanatomy.h) against ggml's
// reading of the conformance corpus: for a sample of elements of every
// block-quantized tensor, the value rebuilt from the reported fields (the
// scale from d and the sub-block's scale, the level from the quant code, the
// offset from the minimums) is ggml's (expected/FILE.I.f32) bit for bit, and
// the block lies where ggml's tensor offset says.
#include "formats/gguf/ggmltables.h"

#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/gguf/blockanatomy.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QTest>

#include <bit>
#include <cstring>
#include <set>
#include <stdexcept>
#include <vector>

using nlohmann::json;
using namespace ckptscope;
using gguf::BlockAnatomy;
using testsupport::qstr;

namespace {

uint32_t bitsOf(float f) {
    return std::bit_cast<uint32_t>(f);
}

// The scale the decoder multiplies by, rebuilt from d and the sub-block scale
// as ggml's dequantize_row_* forms it.
float scaleFromFields(const BlockAnatomy& a) {
    const float d = a.d;
    switch (a.dtype) {
    case Dtype::Q2_K:
    case Dtype::Q3_K:
    case Dtype::Q4_K:
    case Dtype::Q5_K:
    case Dtype::Q6_K:
        return d * float(a.subScale.value());
    case Dtype::IQ4_XS: // subScale is ls − 32
        return d * float(a.subScale.value());
    case Dtype::IQ2_XXS:
    case Dtype::IQ2_XS:
    case Dtype::IQ2_S:
        return d * (0.5f + float(a.subScale.value())) * 0.25f;
    case Dtype::IQ3_XXS:
        return d * (0.5f + float(a.subScale.value())) * 0.5f;
    case Dtype::IQ3_S:
    case Dtype::IQ1_S:
    case Dtype::IQ1_M:
        return d * float(1 + 2 * a.subScale.value());
    default:
        return d; // one scale per block (NVFP4: per sub-block, in d)
    }
}

// What the quant code stands for, from the code (and the grid entry and sign
// the anatomy reports for the codebook types).
float levelFromCode(const BlockAnatomy& a) {
    const int q = int(a.code);
    switch (a.dtype) {
    case Dtype::Q4_0:
        return float(q - 8);
    case Dtype::Q5_0:
        return float(q - 16);
    case Dtype::Q6_K:
        return float(q - 32);
    case Dtype::Q3_K: // bit 2 is the high bit: clear subtracts 4
        return float((q & 3) - (q & 4 ? 0 : 4));
    case Dtype::Q8_0:
    case Dtype::Q8_K:
        return float(int8_t(uint8_t(q)));
    case Dtype::Q1_0:
        return float(2 * q - 1);
    case Dtype::Q2_0:
    case Dtype::TQ1_0:
    case Dtype::TQ2_0:
        return float(q - 1);
    case Dtype::MXFP4:
    case Dtype::NVFP4:
        return float(gguf::kValuesFp4[q]);
    case Dtype::IQ4_NL:
    case Dtype::IQ4_XS:
        return float(gguf::kValuesIq4nl[q]);
    case Dtype::IQ1_S:
    case Dtype::IQ1_M:
        return a.level; // grid ± delta: checked against the grid in checkIq1
    case Dtype::IQ2_XXS:
    case Dtype::IQ2_XS:
    case Dtype::IQ2_S:
    case Dtype::IQ3_XXS:
    case Dtype::IQ3_S:
        return float(a.signBit.value() ? -a.gridValue.value() : a.gridValue.value());
    default:
        return float(q); // Q4_1, Q5_1, Q2_K, Q4_K, Q5_K
    }
}

float offsetFromFields(const BlockAnatomy& a) {
    switch (a.dtype) {
    case Dtype::Q4_1:
    case Dtype::Q5_1:
        return -a.dmin.value();
    case Dtype::Q2_K:
    case Dtype::Q4_K:
    case Dtype::Q5_K:
        return a.dmin.value() * float(a.subMin.value());
    default:
        return 0.0f;
    }
}

// Elements checked in a tensor of n: all of a small one, else ~3000 spread
// over it (a stride prime to every block size), the first and the last.
std::vector<uint64_t> sample(uint64_t n) {
    std::vector<uint64_t> out;
    const uint64_t stride = n <= 4096 ? 1 : (n / 3000) | 1;
    for (uint64_t e = 0; e < n; e += stride)
        out.push_back(e);
    if (n && out.back() != n - 1)
        out.push_back(n - 1);
    return out;
}

} // namespace

class TestBlockAnatomy : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void valueFromFieldsIsGgmls() {
        REQUIRE_CONFORMANCE();
        if (!QDir(testsupport::ggufCorpus() + QStringLiteral("/expected")).exists())
            CKPTSCOPE_NO_CORPUS("no gguf/ in the conformance corpus");
        testsupport::guarded([] {
            std::set<Dtype> seen;
            size_t checked = 0;
            testsupport::forEachGgufReading([&](const QString& file, const json& reading,
                                                const QString& expected) {
                if (QTest::currentTestFailed())
                    return;
                const auto doc = Document::open(
                    testsupport::str(testsupport::ggufCorpus() + QStringLiteral("/valid/") + file));
                QCOMPARE(doc->tensors().size(), reading.at("tensors").size());
                for (size_t ti = 0; ti < doc->tensors().size(); ++ti) {
                    const TensorEntry& t = doc->tensors()[ti];
                    if (dtypeBlock(t.dtype).elements <= 1)
                        continue;
                    seen.insert(t.dtype);
                    const uint64_t tensorOffset = reading.at("tensors")[ti].at("offset");
                    const std::string want =
                        testsupport::readFile(expected + QStringLiteral(".%1.f32").arg(ti));
                    QCOMPARE(uint64_t(want.size()), t.dataLen * sizeof(float));
                    for (const uint64_t e : sample(t.dataLen)) {
                        const QString where = QStringLiteral("%1 tensor %2 (%3) element %4")
                                                  .arg(file)
                                                  .arg(ti)
                                                  .arg(qstr(dtypeName(t.dtype)))
                                                  .arg(e);
                        checkElement(*doc, ti, e, tensorOffset, want, where);
                        if (QTest::currentTestFailed())
                            return;
                        ++checked;
                    }
                }
            });
            QVERIFY(checked > 0);
            // Every decodable block type but Q8_K (no ggml writer) is in the corpus.
            QCOMPARE(seen.size(), size_t(25));
        });
    }

    void q8KFromBytes() {
        // Q8_K has no file in the corpus: an f32 d of 0.5 and codes −128…127.
        std::vector<uint8_t> block(292, 0);
        const float d = 0.5f;
        std::memcpy(block.data(), &d, 4);
        for (int i = 0; i < 256; ++i)
            block[size_t(4 + i)] = uint8_t(i - 128);
        for (uint32_t i = 0; i < 256; i += 37) {
            const BlockAnatomy a = gguf::blockAnatomy(Dtype::Q8_K, block, i);
            QCOMPARE(a.d, d);
            QCOMPARE(levelFromCode(a), float(int(i) - 128));
            QCOMPARE(a.value, d * float(int(i) - 128));
        }
    }

    void refusesWhatIsNotOneBlock() {
        const std::vector<uint8_t> bytes(144, 0);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 gguf::blockAnatomy(Dtype::Q4_K, {bytes.data(), 143}, 0));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 gguf::blockAnatomy(Dtype::Q4_K, bytes, 256));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, gguf::blockAnatomy(Dtype::F32, bytes, 0));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, gguf::blockAnatomy(Dtype::Q8_1, bytes, 0));
        TensorEntry f32;
        f32.dtype = Dtype::F32;
        f32.dataLen = 10;
        QVERIFY(!gguf::locateBlock(f32, 3));
        TensorEntry q4;
        q4.dtype = Dtype::Q4_K;
        q4.dataLen = 512;
        q4.dataOffset = 1000;
        QVERIFY(!gguf::locateBlock(q4, 512));
        const auto loc = gguf::locateBlock(q4, 300);
        QVERIFY(loc);
        QCOMPARE(loc->block, uint64_t(1));
        QCOMPARE(loc->firstElement, uint64_t(256));
        QCOMPARE(loc->fileOffset, uint64_t(1000 + 144));
    }

private:
    static void checkElement(const Document& doc, size_t ti, uint64_t e, uint64_t tensorOffset,
                             const std::string& want, const QString& where) {
        const TensorEntry& t = doc.tensors()[ti];
        const auto loc = gguf::locateBlock(t, e);
        QVERIFY2(loc, qPrintable(where));
        QVERIFY2(loc->firstElement <= e && e < loc->firstElement + loc->elements,
                 qPrintable(where));
        QCOMPARE(loc->fileOffset, tensorOffset + e / loc->elements * loc->bytes);
        std::vector<uint8_t> bytes(loc->bytes);
        doc.readRawValues(ti, loc->firstElement, loc->elements, bytes.data());
        const BlockAnatomy a = gguf::blockAnatomy(t.dtype, bytes, uint32_t(e - loc->firstElement));
        uint32_t wantBits;
        std::memcpy(&wantBits, want.data() + e * sizeof wantBits, sizeof wantBits);
        QVERIFY2(a.codeBits > 0 && a.code < (uint64_t(1) << a.codeBits), qPrintable(where));
        // The decoder's operands, each rebuilt from the stored fields.
        QVERIFY2(bitsOf(a.scale) == bitsOf(scaleFromFields(a)),
                 qPrintable(where + QStringLiteral(" scale")));
        QVERIFY2(bitsOf(a.level) == bitsOf(levelFromCode(a)),
                 qPrintable(where + QStringLiteral(" level")));
        QVERIFY2(bitsOf(a.offset) == bitsOf(offsetFromFields(a)),
                 qPrintable(where + QStringLiteral(" offset")));
        if (a.dtype == Dtype::IQ1_S || a.dtype == Dtype::IQ1_M) {
            const int g = a.gridValue.value();
            QVERIFY2(g >= -1 && g <= 1, qPrintable(where));
            QVERIFY2(a.level == float(g) + 0.125f || a.level == float(g) - 0.125f,
                     qPrintable(where));
        }
        // value = scale · level − offset, ggml's bit for bit, and the panel's
        // value is the Values page's.
        const float rebuilt = a.scale * a.level - a.offset;
        QVERIFY2(bitsOf(rebuilt) == wantBits,
                 qPrintable(where + QStringLiteral(": rebuilt %1, ggml %2")
                                        .arg(double(rebuilt))
                                        .arg(double(std::bit_cast<float>(wantBits)))));
        QVERIFY2(bitsOf(a.value) == wantBits, qPrintable(where + QStringLiteral(" value")));
        float page = 0;
        doc.readValues(ti, e, 1, &page);
        QVERIFY2(bitsOf(page) == bitsOf(a.value),
                 qPrintable(where + QStringLiteral(" Values page")));
    }
};

QTEST_GUILESS_MAIN(TestBlockAnatomy)
#include "tst_blockanatomy.moc"
