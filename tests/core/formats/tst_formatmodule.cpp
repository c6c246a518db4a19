// The format table (formats/formatmodule.h): each module found by its
// content alone, listed once; the dtype blocks; the one value decoder.
#include "ckptscope/document/document.h"
#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/formats/tensorvalues.h"

#include "safetensorsbuilder.h"
#include "testsupport.h"

#include <QtTest>

#include <bit>
#include <cmath>
#include <set>

using namespace ckptscope;
using testsupport::qstr;

namespace {

std::shared_ptr<const ByteSource> memory(const std::string& bytes, const std::string& name) {
    return std::make_shared<MemorySource>(std::vector<uint8_t>(bytes.begin(), bytes.end()), name);
}

std::string sample(const char* name) {
    return testsupport::readFile(QStringLiteral(CKPTSCOPE_SOURCE_DIR "/resources/samples/") +
                                 QString::fromUtf8(name));
}

// The smallest GGUF file: version 3, one F32 tensor "w" of 2 values, the
// data at the default alignment of 32.
std::string ggufFile() {
    std::string f = "GGUF";
    auto put = [&f](uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i)
            f += char((v >> (8 * i)) & 0xff);
    };
    put(3, 4); // version
    put(1, 8); // tensors
    put(0, 8); // metadata keys
    put(1, 8);
    f += "w";
    put(1, 4); // n_dims
    put(2, 8); // ne[0]
    put(0, 4); // F32
    put(0, 8); // offset
    f.resize(64, '\0');
    const float values[2] = {1.5f, -2.0f};
    f.append(reinterpret_cast<const char*>(values), sizeof values);
    return f;
}

// One small file of each format, keyed by the format it is.
std::map<Format, std::string> oneFileOfEach() {
    using namespace testsupport;
    return {
        {Format::Oxck, sample("model_sample.oxck")},
        {Format::Gradient, sample("gradient_sample.json")},
        {Format::Safetensors, stFile({{"w", "F32", {2}, leBytes<float>({1.5f, -2.0f})}})},
        {Format::Gguf, ggufFile()},
        // A legacy torch.save of an empty dict: five pickles (magic number,
        // protocol 1001, sys_info {}, the object {}, the storage keys []).
        {Format::Pytorch, std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19."
                                      "\x80\x02M\xe9\x03.\x80\x02}.\x80\x02}.\x80\x02].",
                                      33)},
    };
}

} // namespace

class TestFormatModule : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void tableListsEachFormatOnce() {
        // A format may have a second module (a sharded safetensors model is
        // read from its index), listed after the format's own file module.
        std::set<Format> formats;
        std::set<std::string> descriptions;
        for (const FormatModule& m : formatModules()) {
            if (formats.insert(m.format).second)
                QCOMPARE(&formatModule(m.format), &m);
            QVERIFY(descriptions.insert(m.description).second);
            QCOMPARE(qstr(formatName(m.format)), qstr(m.name));
            QVERIFY(m.probe && m.open && m.description && m.looksFor && m.extension);
        }
        QCOMPARE(formats.size(), oneFileOfEach().size());
    }

    // The packaging says what the table says: each MIME type with its glob
    // and magic in the shared-mime-info XML, in the .desktop file's MimeType=
    // and in the metainfo's mediatypes, and no type the table lacks.
    void packagingMatchesTheTable() {
        const QString dir = QStringLiteral(CKPTSCOPE_SOURCE_DIR "/packaging/");
        const QString mime =
            qstr(testsupport::readFile(dir + QStringLiteral("ckptscope-mime.xml")));
        const QString desktop = qstr(
            testsupport::readFile(dir + QStringLiteral("io.github.ckptscope.Ckptscope.desktop")));
        const QString metainfo = qstr(testsupport::readFile(
            dir + QStringLiteral("io.github.ckptscope.Ckptscope.metainfo.xml")));
        QSet<QString> types;
        for (const FormatModule& m : formatModules()) {
            QVERIFY2(m.patterns && *m.patterns, m.name);
            if (!m.mimeType)
                continue;
            const QString type = qstr(m.mimeType);
            types.insert(type);
            const qsizetype at = mime.indexOf(QStringLiteral("<mime-type type=\"%1\">").arg(type));
            QVERIFY2(at >= 0, qPrintable(type + QStringLiteral(" missing in ckptscope-mime.xml")));
            const QString entry =
                mime.mid(at, mime.indexOf(QStringLiteral("</mime-type>"), at) - at);
            for (const QString& p : qstr(m.patterns).split(QLatin1Char(' ')))
                QVERIFY2(entry.contains(QStringLiteral("<glob pattern=\"%1\"/>").arg(p)),
                         qPrintable(type + QStringLiteral(": no glob ") + p));
            if (m.magic)
                QVERIFY2(entry.contains(QStringLiteral("value=\"%1\"").arg(qstr(m.magic))),
                         qPrintable(type + QStringLiteral(": no magic")));
            QVERIFY2(desktop.contains(type + QLatin1Char(';')),
                     qPrintable(type + QStringLiteral(" missing in the .desktop MimeType=")));
            QVERIFY2(metainfo.contains(QStringLiteral("<mediatype>%1</mediatype>").arg(type)),
                     qPrintable(type + QStringLiteral(" missing in the metainfo")));
        }
        const QRegularExpression declared(QStringLiteral("<mime-type type=\"([^\"]+)\">"));
        for (auto it = declared.globalMatch(mime); it.hasNext();)
            QVERIFY2(types.contains(it.next().captured(1)), "a MIME type no format declares");
        const QString line = desktop.mid(desktop.indexOf(QStringLiteral("MimeType=")));
        const QStringList listed = line.mid(9, line.indexOf(QLatin1Char('\n')) - 9)
                                       .split(QLatin1Char(';'), Qt::SkipEmptyParts);
        QCOMPARE(QSet<QString>(listed.begin(), listed.end()), types);
        // The dialogs' filter names every pattern once.
        QCOMPARE(qstr(checkpointDialogFilter()),
                 QStringLiteral(
                     "Checkpoints (*.oxck *.gguf *.safetensors *.pt *.pth *.ckpt *.json);;All "
                     "files (*)"));
    }

    // Each probe accepts its own format's bytes and no other's.
    void probesTellFormatsApart() {
        for (const auto& [format, bytes] : oneFileOfEach()) {
            const auto source = memory(bytes, "file");
            for (const FormatModule& m : formatModules())
                QVERIFY2(
                    m.probe(*source) == (&m == &formatModule(format)),
                    (std::string(m.name) + " probe on a " + formatName(format) + " file").c_str());
            QCOMPARE(detectFormat(*source).format, format);
            const auto doc = Document::open(source);
            QCOMPARE(doc->format(), format);
            QCOMPARE(&doc->formatModule(), &formatModule(format));
        }
    }

    // The name never decides: a gradient checkpoint named .safetensors is a
    // gradient checkpoint, an OXCK file named .json is OXCK.
    void contentDecidesNotTheName() {
        auto files = oneFileOfEach();
        QCOMPARE(Document::open(memory(files[Format::Gradient], "x.safetensors"))->format(),
                 Format::Gradient);
        QCOMPARE(Document::open(memory(files[Format::Oxck], "x.json"))->format(), Format::Oxck);
        QCOMPARE(Document::open(memory(files[Format::Safetensors], "x.oxck"))->format(),
                 Format::Safetensors);
    }

    // Nothing matches: the message lists what each probe looks for.
    void unknownBytesNameWhatWasExpected() {
        try {
            Document::open(memory("\x01zz\xff", "odd.bin"));
            QFAIL("opened");
        } catch (const OpenError& e) {
            const std::string what = e.what();
            for (const FormatModule& m : formatModules())
                QVERIFY2(what.find(m.looksFor) != std::string::npos, what.c_str());
            QVERIFY2(what.find("\\x01zz\\xff") != std::string::npos, what.c_str());
        }
    }

    void dtypeBlocks() {
        for (Dtype d : {Dtype::F32, Dtype::BF16, Dtype::U8, Dtype::F64, Dtype::F8E4M3}) {
            const DtypeBlock b = dtypeBlock(d);
            QCOMPARE(b.elements, 1u);
            QCOMPARE(size_t(b.bytes), dtypeSize(d));
            QCOMPARE(dtypeBytes(d, 10).value_or(0), 10 * dtypeSize(d));
        }
        QVERIFY(!dtypeBytes(Dtype::F64, UINT64_MAX / 4).has_value()); // past 64 bits
        TensorEntry t;
        t.dtype = Dtype::BF16;
        t.elementCount = 3;
        QCOMPARE(tensorSizeBytes(t).value_or(0), uint64_t(6));
        t.elementCount.reset();
        QVERIFY(!tensorSizeBytes(t).has_value());
    }

    // The vectorised converters (a loop per dtype, F16C for F16, tables for
    // F8) give exactly the single-element decoders' values, for every bit
    // pattern of the 8- and 16-bit float types (NaN: any NaN).
    void convertersMatchElementDecoders() {
        auto same = [](float a, float b) {
            return (std::isnan(a) && std::isnan(b)) ||
                   std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
        };
        std::vector<uint16_t> all16(65536);
        for (size_t i = 0; i < all16.size(); ++i)
            all16[i] = uint16_t(i);
        std::vector<float> out(all16.size() + 1); // +1: an odd count leaves a tail
        std::vector<double> outD(all16.size());
        for (auto [dtype, decode] :
             {std::pair{Dtype::F16, &halfToFloat}, std::pair{Dtype::BF16, &bfloat16ToFloat}}) {
            convertToF32(dtype, all16.data() + 1, all16.size() - 1, out.data());
            convertToF64(dtype, all16.data(), all16.size(), outD.data());
            for (size_t i = 1; i < all16.size(); ++i)
                // f32 bit for bit (a NaN's payload too: the vector path and the
                // tail must agree); f64 as a value.
                QVERIFY2(std::bit_cast<uint32_t>(out[i - 1]) ==
                                 std::bit_cast<uint32_t>(decode(uint16_t(i))) &&
                             same(float(outD[i]), decode(uint16_t(i))),
                         qPrintable(QStringLiteral("%1 0x%2")
                                        .arg(QString::fromUtf8(dtypeName(dtype)))
                                        .arg(i, 0, 16)));
        }
        std::vector<uint8_t> all8(256);
        for (size_t i = 0; i < 256; ++i)
            all8[i] = uint8_t(i);
        for (auto [dtype, decode] :
             {std::pair{Dtype::F8E4M3, &f8e4m3ToFloat}, std::pair{Dtype::F8E5M2, &f8e5m2ToFloat}}) {
            convertToF32(dtype, all8.data(), 256, out.data());
            for (size_t i = 0; i < 256; ++i)
                QVERIFY(same(out[i], decode(uint8_t(i))));
        }
        const int32_t ints[] = {INT32_MIN, -1, 0, 1, INT32_MAX};
        convertToF64(Dtype::I32, ints, 5, outD.data());
        for (size_t i = 0; i < 5; ++i)
            QCOMPARE(outD[i], double(ints[i]));
        const uint8_t flags[] = {0, 1, 2, 255};
        convertToF32(Dtype::Bool, flags, 4, out.data());
        QCOMPARE(out[0], 0.0f);
        QCOMPARE(out[2], 1.0f);
        QCOMPARE(out[3], 1.0f);
    }

    // Any slice read through the decoder equals the same slice of a whole
    // read, across its 64 Ki-value chunks, in f32 and f64.
    void slicesMatchWholeReads() {
        const size_t n = 150'000;
        std::vector<uint16_t> bf16(n);
        for (size_t i = 0; i < n; ++i)
            bf16[i] = uint16_t(0x3f80 + (i * 7919) % 0x0400); // values in [1, 2^8)
        const auto doc = Document::open(
            memory(testsupport::stFile({{"b", "BF16", {n}, testsupport::leBytes(bf16)}}),
                   "b.safetensors"));
        std::vector<float> whole(n);
        std::vector<double> wholeD(n);
        doc->readValues(0, 0, n, whole.data());
        doc->readValues(0, 0, n, wholeD.data());
        QCOMPARE(whole[0], 1.0f);
        for (auto [first, count] : {std::pair<size_t, size_t>{0, 1},
                                    {1, 65'536},
                                    {65'535, 2},
                                    {70'000, 80'000},
                                    {n - 1, 1},
                                    {n, 0}}) {
            std::vector<float> part(count);
            std::vector<double> partD(count);
            doc->readValues(0, first, count, part.data());
            doc->readValues(0, first, count, partD.data());
            for (size_t i = 0; i < count; ++i) {
                QCOMPARE(part[i], whole[first + i]);
                QCOMPARE(partD[i], wholeD[first + i]);
            }
        }
        float one = 0;
        QVERIFY_THROWS_EXCEPTION(std::exception, doc->readValues(0, n, 1, &one));
    }
};

QTEST_GUILESS_MAIN(TestFormatModule)
#include "tst_formatmodule.moc"
