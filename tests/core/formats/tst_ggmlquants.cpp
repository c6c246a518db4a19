// ggml's tensor types (formats/gguf/ggmltype.h) and their dequantizers
// (formats/gguf/ggmlquants.h): every tensor of every valid GGUF file of the
// conformance corpus decoded bit for bit as ggml decoded it (expected/NAME.I.f32),
// and the AVX2 code bit for bit as the plain decoders on any bytes.
#include "formats/gguf/ggmlblocks.h"
#include "formats/gguf/ggmlquants.h"
#include "formats/gguf/ggmltype.h"

#include "testsupport.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QTest>

#include <bit>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

using nlohmann::json;
using namespace ckptscope;
using testsupport::qstr;

namespace {

// The type ggml's type_name spells `name` ("q4_K"); nullptr when none.
const gguf::GgmlTypeInfo* typeNamed(const std::string& name) {
    for (const gguf::GgmlTypeInfo& t : gguf::ggmlTypes())
        if (QString::fromLatin1(t.name).compare(qstr(name), Qt::CaseInsensitive) == 0)
            return &t;
    return nullptr;
}

uint32_t bitsOf(float f) {
    return std::bit_cast<uint32_t>(f);
}

// Decoded values of `blocks` blocks at src, through dequantizeBlocks.
std::vector<float> decode(const gguf::GgmlTypeInfo& t, const uint8_t* src, size_t blocks) {
    std::vector<float> out(blocks * t.blockElements);
    gguf::dequantizeBlocks(t.id, src, blocks, out.data());
    return out;
}

// Empty when `got` is `want` bit for bit (NaN payloads included); else the
// first difference (got, and want: ggml's value or the plain decoder's) and how many
// elements differ.
QString bitDifference(const std::vector<float>& got, const std::string& want) {
    if (got.size() * sizeof(float) != want.size())
        return QStringLiteral("%1 values decoded, %2 expected")
            .arg(got.size())
            .arg(want.size() / sizeof(float));
    size_t first = got.size(), count = 0;
    uint32_t wantBits = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        uint32_t w;
        std::memcpy(&w, want.data() + i * sizeof w, sizeof w);
        if (bitsOf(got[i]) != w) {
            if (count++ == 0) {
                first = i;
                wantBits = w;
            }
        }
    }
    if (count == 0)
        return {};
    return QStringLiteral("%1 of %2 values differ; first at element %3: got 0x%4 (%5), want 0x%6 "
                          "(%7)")
        .arg(count)
        .arg(got.size())
        .arg(first)
        .arg(bitsOf(got[first]), 8, 16, QLatin1Char('0'))
        .arg(double(got[first]), 0, 'g', 9)
        .arg(wantBits, 8, 16, QLatin1Char('0'))
        .arg(double(std::bit_cast<float>(wantBits)), 0, 'g', 9);
}

} // namespace

class TestGgmlQuants : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void typeTableIsGgmlEnum() {
        // Ids ggml removed (Q4_2, Q4_3, Q4_0_4_4…, IQ4_NL_4_4…) and ids past the last.
        for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 43u, 44u, 255u, 0xFFFFFFFFu})
            QVERIFY2(gguf::ggmlType(id) == nullptr, qPrintable(QString::number(id)));
        uint32_t defined = 0;
        for (uint32_t id = 0; id < 43; ++id) {
            const gguf::GgmlTypeInfo* t = gguf::ggmlType(id);
            if (t == nullptr)
                continue;
            ++defined;
            QCOMPARE(t->id, id);
            QCOMPARE(t->name, gguf::ggmlTypes()[defined - 1].name); // listed in id order
        }
        QCOMPARE(size_t(defined), gguf::ggmlTypes().size());
        QCOMPARE(defined, 43u - 8u);
        std::set<std::string> names;
        for (const gguf::GgmlTypeInfo& t : gguf::ggmlTypes()) {
            QVERIFY2(names.insert(t.name).second, t.name);
            QVERIFY(std::set<uint32_t>({1, 32, 64, 128, 256}).count(t.blockElements));
            QVERIFY(t.blockBytes > 0);
            QCOMPARE(t.dequantizable, std::string(t.name) != "Q8_1");
        }
        // The list of types, each defined and decoded (Q8_1 listed only).
        for (const char* name :
             {"F32",     "F16",    "BF16",  "F64",     "I8",    "I16",    "I32",
              "I64",     "Q4_0",   "Q4_1",  "Q5_0",    "Q5_1",  "Q8_0",   "Q2_K",
              "Q3_K",    "Q4_K",   "Q5_K",  "Q6_K",    "Q8_K",  "IQ1_S",  "IQ1_M",
              "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ4_NL", "IQ4_XS",
              "TQ1_0",   "TQ2_0",  "MXFP4", "NVFP4",   "Q1_0",  "Q2_0",   "Q8_1"})
            QVERIFY2(typeNamed(name) != nullptr && std::string(typeNamed(name)->name) == name,
                     name);
    }

    // Q8_K has no file in the corpus: its value is the f32 scale times the int8 code.
    void q8KIsScaleTimesCode() {
        const gguf::GgmlTypeInfo* t = typeNamed("Q8_K");
        QVERIFY(t && t->blockBytes == 4 + 256 + 32 && t->blockElements == 256);
        std::vector<uint8_t> block(1 + t->blockBytes); // decoded from an odd address
        const float d = 0.0123f;
        std::memcpy(block.data() + 1, &d, 4);
        for (int j = 0; j < 256; ++j)
            block[size_t(1 + 4 + j)] = uint8_t(j - 128);
        const std::vector<float> out = decode(*t, block.data() + 1, 1);
        for (int j = 0; j < 256; ++j)
            QCOMPARE(bitsOf(out[size_t(j)]), bitsOf(d * float(int8_t(uint8_t(j - 128)))));
    }

    // Every tensor of every valid file, against ggml's own decoding.
    void corpusBitForBit() {
        REQUIRE_CONFORMANCE();
        if (!QDir(testsupport::ggufCorpus() + QStringLiteral("/expected")).exists())
            CKPTSCOPE_NO_CORPUS("no gguf/ in the conformance corpus");
        testsupport::guarded([] {
            std::set<std::string> typesSeen;
            size_t tensors = 0;
            testsupport::forEachGgufReading([&](const QString& file, const json& reading,
                                                const QString& expected) {
                if (QTest::currentTestFailed())
                    return;
                const std::string bytes = testsupport::readFile(testsupport::ggufCorpus() +
                                                                QStringLiteral("/valid/") + file);
                size_t index = 0;
                for (const json& tensor : reading.at("tensors")) {
                    const QString where = QStringLiteral("%1 tensor %2 (%3, %4)")
                                              .arg(file)
                                              .arg(index)
                                              .arg(qstr(tensor.at("name").get<std::string>()))
                                              .arg(qstr(tensor.at("type").get<std::string>()));
                    const gguf::GgmlTypeInfo* t = typeNamed(tensor.at("type"));
                    QVERIFY2(t && t->dequantizable, qPrintable(where));
                    typesSeen.insert(t->name);
                    uint64_t elements = 1;
                    for (const json& n : tensor.at("ne"))
                        elements *= n.get<uint64_t>();
                    const uint64_t offset = tensor.at("offset"), size = tensor.at("size");
                    QVERIFY2(tensor.at("ne")[0].get<uint64_t>() % t->blockElements == 0,
                             qPrintable(where));
                    QVERIFY2(size == elements / t->blockElements * t->blockBytes,
                             qPrintable(where + QStringLiteral(": size %1").arg(size)));
                    QVERIFY2(offset + size <= bytes.size(), qPrintable(where));
                    const auto* src = reinterpret_cast<const uint8_t*>(bytes.data()) + offset;
                    const std::vector<float> got = decode(*t, src, elements / t->blockElements);
                    const std::string want =
                        testsupport::readFile(expected + QStringLiteral(".%1.f32").arg(index));
                    const QString diff = bitDifference(got, want);
                    QVERIFY2(diff.isEmpty(), qPrintable(where + QStringLiteral(": ") + diff));
                    ++index;
                    ++tensors;
                }
            });
            QVERIFY(tensors > 0);
            // The corpus holds every decoded type but Q8_K (tested above).
            for (const gguf::GgmlTypeInfo& t : gguf::ggmlTypes())
                if (t.dequantizable && std::string(t.name) != "Q8_K")
                    QVERIFY2(typesSeen.count(t.name), t.name);
        });
    }

    // Any bytes (NaN and infinite scales, every code) decode alike by the AVX2
    // code and the plain decoders; the corpus checks the plain ones against ggml
    // in tst_ggmlquants_scalar.
    void avx2IsPlainBitForBit() {
#ifdef CKPTSCOPE_STATS_AVX2
        if (!simd::useAvx2())
            QSKIP("no AVX2 on this CPU, or CKPTSCOPE_SIMD=0");
        std::mt19937 random(23);
        for (const gguf::GgmlTypeInfo& t : gguf::ggmlTypes()) {
            if (!t.dequantizable)
                continue;
            const size_t blocks = 64;
            std::vector<uint8_t> data(blocks * t.blockBytes);
            for (uint8_t& b : data)
                b = uint8_t(random());
            std::vector<float> plain(blocks * t.blockElements), wide(plain.size());
            gguf::blocks::dequantizeWith(t.id, data.data(), blocks, plain.data(), false);
            gguf::blocks::dequantizeWith(t.id, data.data(), blocks, wide.data(), true);
            std::string plainBytes(plain.size() * sizeof(float), '\0');
            std::memcpy(plainBytes.data(), plain.data(), plainBytes.size());
            const QString diff = bitDifference(wide, plainBytes);
            QVERIFY2(diff.isEmpty(),
                     qPrintable(QString::fromLatin1(t.name) + QStringLiteral(": ") + diff));
        }
#else
        QSKIP("no AVX2 code in this build");
#endif
    }

    // The same blocks decode alike from any address and in any grouping.
    void alignmentAndGroupingDoNotMatter() {
        for (const gguf::GgmlTypeInfo& t : gguf::ggmlTypes()) {
            if (!t.dequantizable)
                continue;
            const size_t blocks = 3, bytes = blocks * t.blockBytes;
            std::vector<uint8_t> data(bytes), shiftedData(bytes + 1);
            uint32_t state = 12345 + t.id; // varied bytes; f16 scales kept finite
            for (uint8_t& b : data) {
                state = state * 1664525u + 1013904223u;
                b = uint8_t((state >> 24) & 0x3F);
            }
            std::memcpy(shiftedData.data() + 1, data.data(), bytes);
            const std::vector<float> all = decode(t, data.data(), blocks);
            const std::vector<float> shifted = decode(t, shiftedData.data() + 1, blocks);
            QVERIFY2(std::memcmp(all.data(), shifted.data(), all.size() * 4) == 0, t.name);
            for (size_t b = 0; b < blocks; ++b) {
                const std::vector<float> one = decode(t, data.data() + b * t.blockBytes, 1);
                QVERIFY2(
                    std::memcmp(one.data(), all.data() + b * t.blockElements, one.size() * 4) == 0,
                    t.name);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestGgmlQuants)
#include "tst_ggmlquants.moc"
