// The synthetic GGUF generator (generate gguf): the file reads back through
// the reader, each tensor dequantizes to what this test computes from the
// bytes written (its own decoders of ggml's block layouts), and the f32 twin
// holds exactly those values under the same names.
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/gguf/syntheticgguf.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

using namespace ckptscope;
using testsupport::str;

namespace {

float half(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return halfToFloat(h);
}

// One block of `type` decoded as ggml-common.h lays it out.
void decodeBlock(Dtype type, const uint8_t* b, float* y) {
    switch (type) {
    case Dtype::Q1_0: // d, 128 sign bits: set is d, clear is -d
        for (int i = 0; i < 128; ++i)
            y[i] = (b[2 + i / 8] >> (i % 8)) & 1 ? half(b) : -half(b);
        return;
    case Dtype::Q4_0: // d, low nibbles then high nibbles, code - 8
        for (int i = 0; i < 16; ++i) {
            y[i] = float((b[2 + i] & 15) - 8) * half(b);
            y[i + 16] = float((b[2 + i] >> 4) - 8) * half(b);
        }
        return;
    case Dtype::Q8_0:
        for (int i = 0; i < 32; ++i)
            y[i] = float(int8_t(b[2 + i])) * half(b);
        return;
    case Dtype::Q4_K: { // d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles
        const uint8_t* s = b + 4;
        for (int j = 0; j < 8; ++j) {
            const int sc = j < 4 ? s[j] & 63 : (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
            const int m = j < 4 ? s[j + 4] & 63 : (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
            const float d1 = half(b) * float(sc), m1 = half(b + 2) * float(m);
            for (int l = 0; l < 32; ++l) {
                const uint8_t q = b[16 + 32 * (j / 2) + l];
                y[32 * j + l] = d1 * float(j % 2 ? q >> 4 : q & 15) - m1;
            }
        }
        return;
    }
    default: // F32
        std::memcpy(y, b, 4);
    }
}

// A 3 MiB model of `type` in dir, with its f32 twin, both opened.
struct WrittenModel {
    gguf::SyntheticGgufSpec spec;
    std::string path;
    std::shared_ptr<const Document> doc, twin;
};
WrittenModel writeModel(const QTemporaryDir& dir, Dtype type) {
    WrittenModel m;
    m.spec.type = type;
    m.spec.totalBytes = 3 << 20;
    m.spec.f32Twin = str(dir.filePath(QStringLiteral("twin.safetensors")));
    m.path = str(dir.filePath(QStringLiteral("model.gguf")));
    gguf::writeSyntheticGguf(m.path, m.spec);
    m.doc = Document::open(m.path);
    m.twin = Document::open(m.spec.f32Twin);
    return m;
}

} // namespace

class TestSyntheticGguf : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readsBackAsWritten_data() {
        QTest::addColumn<int>("type");
        for (Dtype t : {Dtype::Q4_K, Dtype::Q1_0, Dtype::Q8_0, Dtype::Q4_0, Dtype::F32})
            QTest::newRow(dtypeName(t)) << int(t);
    }
    void readsBackAsWritten() {
        QFETCH(int, type);
        QTemporaryDir dir;
        const WrittenModel m = writeModel(dir, Dtype(type));
        const gguf::SyntheticGgufSpec& spec = m.spec;
        const std::string& path = m.path;
        const auto& doc = m.doc;
        const auto& twin = m.twin;
        QCOMPARE(doc->tensors().size(), twin->tensors().size());
        QVERIFY(doc->tensors().size() > 9); // embeddings, a layer, the output
        std::ifstream raw(path, std::ios::binary);
        bool sawType = false;
        for (size_t i = 0; i < doc->tensors().size(); ++i) {
            const TensorEntry& t = doc->tensors()[i];
            QCOMPARE(twin->tensors()[i].name, t.name);
            QCOMPARE(twin->tensors()[i].shape, t.shape);
            QVERIFY(t.dtype == spec.type || t.dtype == Dtype::F32);
            sawType = sawType || t.dtype == spec.type;
            const DtypeBlock block = dtypeBlock(t.dtype);
            std::vector<uint8_t> bytes(size_t(t.dataLen / block.elements * block.bytes));
            raw.seekg(std::streamoff(t.dataOffset));
            raw.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size()));
            QVERIFY(raw.good());
            std::vector<float> expected(size_t(t.dataLen)), read(expected.size()),
                twinValues(expected.size());
            for (size_t b = 0; b < t.dataLen / block.elements; ++b)
                decodeBlock(t.dtype, bytes.data() + b * block.bytes,
                            expected.data() + b * block.elements);
            doc->readValues(i, 0, t.dataLen, read.data());
            twin->readValues(i, 0, t.dataLen, twinValues.data());
            for (size_t k = 0; k < expected.size(); ++k) {
                QVERIFY(std::isfinite(expected[k]));
                if (std::bit_cast<uint32_t>(read[k]) != std::bit_cast<uint32_t>(expected[k]) ||
                    std::bit_cast<uint32_t>(twinValues[k]) != std::bit_cast<uint32_t>(expected[k]))
                    QFAIL(qPrintable(QStringLiteral("%1[%2]: read %3, twin %4, expected %5")
                                         .arg(QString::fromStdString(t.name))
                                         .arg(k)
                                         .arg(double(read[k]))
                                         .arg(double(twinValues[k]))
                                         .arg(double(expected[k]))));
            }
        }
        QVERIFY(sawType);
    }

    // The K-quants (for benchmarks of their statistics): ggml's decoding
    // (the document's) is the oracle here; every value finite and in a
    // trained model's range, the twin the same values.
    void kQuantsDecodeNearZero_data() {
        QTest::addColumn<int>("type");
        for (Dtype t : {Dtype::Q2_K, Dtype::Q3_K, Dtype::Q5_K, Dtype::Q6_K})
            QTest::newRow(dtypeName(t)) << int(t);
    }
    void kQuantsDecodeNearZero() {
        QFETCH(int, type);
        QTemporaryDir dir;
        const WrittenModel m = writeModel(dir, Dtype(type));
        const gguf::SyntheticGgufSpec& spec = m.spec;
        const auto& doc = m.doc;
        const auto& twin = m.twin;
        size_t ofType = 0;
        for (size_t i = 0; i < doc->tensors().size(); ++i) {
            const TensorEntry& t = doc->tensors()[i];
            if (t.dtype != spec.type)
                continue;
            ++ofType;
            std::vector<float> read(size_t(t.dataLen)), twinValues(read.size());
            doc->readValues(i, 0, t.dataLen, read.data());
            twin->readValues(i, 0, t.dataLen, twinValues.data());
            float largest = 0;
            for (size_t k = 0; k < read.size(); ++k) {
                QVERIFY(std::isfinite(read[k]));
                QCOMPARE(std::bit_cast<uint32_t>(twinValues[k]), std::bit_cast<uint32_t>(read[k]));
                largest = std::max(largest, std::fabs(read[k]));
            }
            QVERIFY2(largest > 0.01f && largest < 4.0f,
                     qPrintable(QStringLiteral("%1: max |x| %2")
                                    .arg(QString::fromStdString(t.name))
                                    .arg(double(largest))));
        }
        QVERIFY(ofType > 5);
    }

    void deterministicAndSized() {
        QTemporaryDir dir;
        gguf::SyntheticGgufSpec spec;
        spec.totalBytes = 8 << 20;
        const std::string a = str(dir.filePath(QStringLiteral("a.gguf"))),
                          b = str(dir.filePath(QStringLiteral("b.gguf")));
        gguf::writeSyntheticGguf(a, spec);
        gguf::writeSyntheticGguf(b, spec);
        std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
        const std::string ca((std::istreambuf_iterator<char>(fa)), {}),
            cb((std::istreambuf_iterator<char>(fb)), {});
        QCOMPARE(ca.size(), cb.size());
        QVERIFY(ca == cb);
        QVERIFY(ca.size() > spec.totalBytes / 2 && ca.size() < spec.totalBytes * 3 / 2);
    }

    void refusesOtherTypes() {
        QTemporaryDir dir;
        gguf::SyntheticGgufSpec spec;
        spec.type = Dtype::IQ2_XXS;
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            gguf::writeSyntheticGguf(str(dir.filePath(QStringLiteral("x.gguf"))), spec));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("x.gguf"))));
    }
};

QTEST_GUILESS_MAIN(TestSyntheticGguf)
#include "tst_syntheticgguf.moc"
