// The core writers behind export and convert: .npy headers and bits, CSV
// text that reads back to the same float32 bits, the statistics CSV,
// OXCK → safetensors → OXCK byte for byte, the shape rules of conversion,
// refusals (duplicate and reserved names, F64 beyond f32) and cancellation.
#include "ggufbuilder.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/export/converter.h"
#include "ckptscope/export/csvwriter.h"
#include "ckptscope/export/npywriter.h"
#include "ckptscope/export/oxckwriter.h"
#include "ckptscope/export/safetensorswriter.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/stats/tensorstats.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace ckptscope;
using testsupport::guarded;
using testsupport::leBytes;
using testsupport::qstr;
using testsupport::stFile;
using testsupport::str;

namespace {

std::shared_ptr<const Document> openBytes(const std::string& bytes, const std::string& name) {
    return Document::open(
        std::make_shared<MemorySource>(std::vector<uint8_t>(bytes.begin(), bytes.end()), name));
}

// Values with every kind of bit pattern f32 has.
std::vector<float> trickyValues(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<float> v(n);
    for (float& f : v) {
        uint32_t bits = rng();
        std::memcpy(&f, &bits, 4);
    }
    const float special[] = {0.1f,
                             -0.0f,
                             std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::denorm_min(),
                             std::numeric_limits<float>::max(),
                             std::numeric_limits<float>::lowest(),
                             std::numeric_limits<float>::min(),
                             1.0f / 3.0f,
                             16777217.0f};
    for (size_t i = 0; i < std::size(special) && i < n; ++i)
        v[i] = special[i];
    return v;
}

Checkpoint sampleCheckpoint() {
    Checkpoint c;
    c.setMetadata("model", "tiny");
    c.setMetadata("note", "quote \" backslash \\ newline\n tab\t ünï");
    c.setMetadata("", "empty key");
    c.addTensor({"layers.0.weight", {3, 4}, trickyValues(12, 1)});
    c.addTensor({"layers.0.bias", {4}, trickyValues(4, 2)});
    c.addTensor({"scalar", {}, {2.5f}});
    c.addTensor({"zero", {0}, {}});
    c.addTensor({"zero_dim", {2, 0, 3}, {}});
    c.addTensor({"名前/with space", {1, 1, 2, 1}, trickyValues(2, 3)});
    c.addTensor({"rank3", {2, 2, 3}, trickyValues(12, 4)});
    return c;
}

} // namespace

class TestExportWriters : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void npyHeaderLayout_data() {
        QTest::addColumn<QString>("descr");
        QTest::addColumn<QList<qulonglong>>("shape");
        QTest::addColumn<QString>("tuple");
        QTest::newRow("scalar") << "<f4" << QList<qulonglong>{} << "()";
        QTest::newRow("1-D") << "<i8" << QList<qulonglong>{5} << "(5,)";
        QTest::newRow("2-D") << "|b1" << QList<qulonglong>{2, 3} << "(2, 3)";
        QTest::newRow("4-D") << "<f2" << QList<qulonglong>{1, 2, 3, 4} << "(1, 2, 3, 4)";
    }

    void npyHeaderLayout() {
        QFETCH(QString, descr);
        QFETCH(QList<qulonglong>, shape);
        QFETCH(QString, tuple);
        const std::string h =
            npyHeader(str(descr), std::vector<uint64_t>(shape.begin(), shape.end()));
        QCOMPARE(h.size() % 64, size_t(0));
        QCOMPARE(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
        const size_t len = uint8_t(h[8]) | size_t(uint8_t(h[9])) << 8;
        QCOMPARE(len + 10, h.size());
        QCOMPARE(h.back(), '\n');
        const std::string dict = "{'descr': '" + str(descr) +
                                 "', 'fortran_order': False, 'shape': " + str(tuple) + ", }";
        QCOMPARE(qstr(h.substr(10, dict.size())), qstr(dict));
        QVERIFY(h.find_first_not_of(' ', 10 + dict.size()) == h.size() - 1);
    }

    // The tensor's own dtype where NumPy has one, f32 with a note where not;
    // OXCK scalars as (), mismatches 1-D with a note.
    void npyLayoutRules() {
        guarded([] {
            Checkpoint c;
            c.addTensor({"scalar", {}, {1.0f}});
            c.addTensor({"none", {}, {}});
            c.addTensor({"mismatch", {2, 2}, {1, 2, 3}});
            c.addTensor({"ok", {3, 1}, {1, 2, 3}});
            const auto doc = openBytes(c.encode(), "c.oxck");
            NpyLayout l = npyLayout(*doc, 0);
            QCOMPARE(qstr(l.descr), QStringLiteral("<f4"));
            QVERIFY(l.shape.empty() && l.notes.empty() && !l.converted);
            l = npyLayout(*doc, 1);
            QCOMPARE(l.shape, std::vector<uint64_t>{0});
            QVERIFY(l.notes.empty());
            l = npyLayout(*doc, 2);
            QCOMPARE(l.shape, std::vector<uint64_t>{3});
            QCOMPARE(l.notes.size(), size_t(1));
            QVERIFY(qstr(l.notes[0]).contains(QStringLiteral("\"mismatch\"")));
            QCOMPARE(npyLayout(*doc, 3).shape, (std::vector<uint64_t>{3, 1}));

            const std::vector<uint16_t> half = {0x3f80, 0xc000}; // 1 and -2 in BF16
            const auto st = openBytes(stFile({{"b", "BF16", {2}, leBytes(half)},
                                              {"i", "I64", {1}, leBytes(std::vector<int64_t>{-5})},
                                              {"e", "F8_E5M2", {1}, "\x3c"}}),
                                      "s.safetensors");
            l = npyLayout(*st, 0);
            QCOMPARE(qstr(l.descr), QStringLiteral("<f4"));
            QVERIFY(l.converted);
            QCOMPARE(l.notes.size(), size_t(1));
            QCOMPARE(qstr(npyLayout(*st, 1).descr), QStringLiteral("<i8"));
            QVERIFY(npyLayout(*st, 2).converted);
            // A converted .npy holds the exact f32 values.
            std::ostringstream out;
            writeNpy(out, *st, 0, npyLayout(*st, 0));
            const std::string bytes = out.str();
            float v[2];
            std::memcpy(v, bytes.data() + bytes.size() - 8, 8);
            QCOMPARE(v[0], 1.0f);
            QCOMPARE(v[1], -2.0f);
        });
    }

    void npyBits() {
        guarded([] {
            Checkpoint c;
            const std::vector<float> values = trickyValues(1000, 7);
            c.addTensor({"w", {10, 100}, values});
            const auto doc = openBytes(c.encode(), "c.oxck");
            std::ostringstream out;
            writeNpy(out, *doc, 0, npyLayout(*doc, 0));
            const std::string npy = out.str();
            const std::string header = npyHeader("<f4", {10, 100});
            QCOMPARE(npy.substr(0, header.size()), header);
            QCOMPARE(npy.size(), header.size() + 4000);
            QCOMPARE(std::memcmp(npy.data() + header.size(), values.data(), 4000), 0);
            std::ostringstream raw;
            writeRaw(raw, *doc, 0);
            QCOMPARE(raw.str(), npy.substr(header.size()));
        });
    }

    void csvQuoting() {
        QCOMPARE(qstr(csvField("plain")), QStringLiteral("plain"));
        QCOMPARE(qstr(csvField("a,b")), QStringLiteral("\"a,b\""));
        QCOMPARE(qstr(csvField("say \"hi\"")), QStringLiteral("\"say \"\"hi\"\"\""));
        QCOMPARE(qstr(csvField("two\nlines")), QStringLiteral("\"two\nlines\""));
        QCOMPARE(qstr(csvLine({"a", "", "c,d"})), QStringLiteral("a,,\"c,d\"\r\n"));
    }

    // Rows × columns by the rule; every value reads back (strtof)
    // to the same bits, NaN as nan.
    void csvValuesRoundTrip() {
        guarded([] {
            Checkpoint c;
            const std::vector<float> values = trickyValues(24, 9);
            c.addTensor({"nd", {2, 3, 4}, values});
            c.addTensor({"one", {24}, values});
            c.addTensor({"mismatch", {5, 5}, values});
            c.addTensor({"scalar", {}, {0.1f}});
            const auto doc = openBytes(c.encode(), "c.oxck");
            QCOMPARE(csvGrid(doc->tensors()[0]).rows, uint64_t(6));
            QCOMPARE(csvGrid(doc->tensors()[0]).columns, uint64_t(4));
            QCOMPARE(csvGrid(doc->tensors()[1]).columns, uint64_t(1));
            QCOMPARE(csvGrid(doc->tensors()[2]).rows, uint64_t(24));
            QCOMPARE(csvGrid(doc->tensors()[2]).columns, uint64_t(1));
            QCOMPARE(csvGrid(doc->tensors()[3]).rows, uint64_t(1));
            std::ostringstream out;
            writeTensorCsv(out, *doc, 0);
            const QStringList lines = qstr(out.str()).split(QStringLiteral("\r\n"));
            QCOMPARE(lines.size(), 7); // 6 rows and the empty rest after the last CRLF
            QVERIFY(lines.last().isEmpty());
            size_t k = 0;
            for (int r = 0; r < 6; ++r) {
                const QStringList cells = lines[r].split(QLatin1Char(','));
                QCOMPARE(cells.size(), 4);
                for (const QString& cell : cells) {
                    const float back = std::strtof(cell.toLatin1().constData(), nullptr);
                    const float want = values[k++];
                    if (std::isnan(want)) {
                        QCOMPARE(cell, QStringLiteral("nan"));
                        continue;
                    }
                    QVERIFY2(std::memcmp(&back, &want, 4) == 0, qPrintable(cell));
                }
            }
            // Integers exactly, however large.
            const auto st = openBytes(
                stFile({{"u", "U64", {2}, leBytes(std::vector<uint64_t>{UINT64_MAX, 3})}}),
                "s.safetensors");
            std::ostringstream ints;
            writeTensorCsv(ints, *st, 0);
            QCOMPARE(qstr(ints.str()), QStringLiteral("18446744073709551615\r\n3\r\n"));
        });
    }

    void statsCsvCells() {
        const StatsResult empty = computeStats(nullptr, 0);
        const std::vector<std::string> row = statsCsvRow("a,b", empty);
        QCOMPARE(row.size(), statsCsvHeader().size());
        QCOMPARE(qstr(row[0]), QStringLiteral("a,b"));
        QCOMPARE(qstr(row[8]), QString()); // min: null → empty cell
        const float v[] = {1.0f, 0.1f, std::nanf("")};
        const std::vector<std::string> full = statsCsvRow("x", computeStats(v, 3));
        QCOMPARE(qstr(full[1]), QStringLiteral("3"));
        QCOMPARE(qstr(full[3]), QStringLiteral("1"));
        QCOMPARE(std::strtod(full[9].c_str(), nullptr), 1.0);
        QCOMPARE(std::strtod(full[8].c_str(), nullptr), double(0.1f));
        // An L2 and a sum past the double range: empty cells, as --json's nulls.
        StatsResult beyond = empty;
        beyond.stats.l2 = std::numeric_limits<double>::infinity();
        beyond.stats.finiteSum = -std::numeric_limits<double>::infinity();
        const std::vector<std::string> cells = statsCsvRow("big", beyond);
        QCOMPARE(qstr(cells[12]), QString());
        QCOMPARE(qstr(cells[13]), QString());
        QCOMPARE(statsCsvHeader()[12], std::string("l2"));
    }

    // OXCK → safetensors → OXCK gives back the same bytes the reference
    // layout has (names, shapes, values bit for bit, metadata).
    void roundTripOxck() {
        guarded([] {
            Checkpoint c = sampleCheckpoint();
            const std::string original = c.encode();
            const auto doc = openBytes(original, "c.oxck");
            std::ostringstream st;
            const auto warnings = writeSafetensors(st, *doc);
            QVERIFY(warnings.empty());
            const std::string stBytes = st.str();
            uint64_t n = 0;
            std::memcpy(&n, stBytes.data(), 8);
            QCOMPARE((8 + n) % 8, uint64_t(0));
            const auto stDoc = openBytes(stBytes, "c.safetensors");
            QCOMPARE(stDoc->format(), Format::Safetensors);
            QCOMPARE(stDoc->tensors().size(), c.tensors.size());
            QCOMPARE(stDoc->tensors()[2].shape, std::vector<uint64_t>{}); // the scalar
            QCOMPARE(stDoc->tensors()[2].dataLen, uint64_t(1));
            QVERIFY(stDoc->metadata() == doc->metadata());
            std::ostringstream back;
            const auto backWarnings = writeOxck(back, *stDoc);
            QVERIFY(backWarnings.empty());
            QVERIFY(back.str() == original);
        });
    }

    void conversionShapes() {
        guarded([] {
            Checkpoint c;
            c.addTensor({"none", {}, {}});
            c.addTensor({"mismatch", {2, 2}, {1, 2, 3}});
            const auto doc = openBytes(c.encode(), "c.oxck");
            std::ostringstream st;
            const auto warnings = writeSafetensors(st, *doc);
            QCOMPARE(warnings.size(), size_t(1));
            QVERIFY(qstr(warnings[0]).contains(QStringLiteral("\"mismatch\"")));
            const auto stDoc = openBytes(st.str(), "c.safetensors");
            QCOMPARE(stDoc->tensors()[0].shape, std::vector<uint64_t>{0});
            QCOMPARE(stDoc->tensors()[1].shape, std::vector<uint64_t>{3});
        });
    }

    void refusals_data() {
        QTest::addColumn<QString>("first");
        QTest::addColumn<QString>("second");
        QTest::addColumn<QString>("needle");
        QTest::newRow("duplicate") << "x"
                                   << "x"
                                   << "\"x\": the name is given twice";
        QTest::newRow("reserved") << "__metadata__"
                                  << "y"
                                  << "\"__metadata__\"";
    }

    void refusals() {
        QFETCH(QString, first);
        QFETCH(QString, second);
        QFETCH(QString, needle);
        Checkpoint c;
        c.addTensor({str(first), {1}, {1}});
        c.addTensor({str(second), {1}, {2}});
        const auto doc = openBytes(c.encode(), "c.oxck");
        std::ostringstream out;
        try {
            writeSafetensors(out, *doc);
            QFAIL("wrote a name safetensors cannot hold");
        } catch (const ExportError& e) {
            QVERIFY2(qstr(e.what()).startsWith(QStringLiteral("c.oxck: ")), e.what());
            QVERIFY2(qstr(e.what()).contains(needle), e.what());
        }
        QVERIFY(out.str().empty()); // refused before writing anything
    }

    // A conversion into the format a file already has is refused in the
    // words of that format's module; the other way is suggested.
    void sameFormatRefusedByItsModule() {
        guarded([] {
            Checkpoint c;
            c.addTensor({"w", {2}, {1, 2}});
            const auto oxck = openBytes(c.encode(), "c.oxck");
            std::ostringstream st;
            writeSafetensors(st, *oxck);
            const std::string bytes = st.str();
            const auto safetensors = openBytes(bytes, "c.safetensors");
            QCOMPARE(conversionRefusal(*oxck, ConvertTarget::Oxck, "out.oxck"),
                     std::string("c.oxck is already an OXCK checkpoint"));
            QCOMPARE(conversionRefusal(*safetensors, ConvertTarget::Safetensors, "o.safetensors"),
                     std::string("c.safetensors is already a safetensors file"));
            QCOMPARE(conversionRefusal(*oxck, ConvertTarget::Safetensors, "o.safetensors"),
                     std::string());
            QCOMPARE(conversionRefusal(*safetensors, ConvertTarget::Oxck, "out.oxck"),
                     std::string());
            QVERIFY(suggestedTarget(*oxck) == ConvertTarget::Safetensors);
            QVERIFY(suggestedTarget(*safetensors) == ConvertTarget::Oxck);
            QVERIFY(formatOf(ConvertTarget::Npz) == std::nullopt);
        });
    }

    // safetensors → OXCK: non-F32 converted with a warning; a finite F64
    // beyond f32 is an error naming the tensor; NaN and ±Inf pass.
    void toOxckConversions() {
        guarded([] {
            const std::vector<double> ok = {1.5, std::nan(""), -INFINITY, 1e-300};
            const auto doc = openBytes(
                stFile({{"d", "F64", {4}, leBytes(ok)}, {"i", "I8", {}, std::string("\xfe", 1)}},
                       {{"k", "v"}}),
                "s.safetensors");
            std::ostringstream out;
            const auto warnings = writeOxck(out, *doc);
            QCOMPARE(warnings.size(), size_t(2));
            QVERIFY(qstr(warnings[0]).contains(QStringLiteral("\"d\": F64 converted")));
            std::istringstream in(out.str());
            const Checkpoint back = Checkpoint::readFrom(in);
            QCOMPARE(back.tensors.size(), size_t(2));
            QCOMPARE(back.tensors[0].data[0], 1.5f);
            QVERIFY(std::isnan(back.tensors[0].data[1]));
            QCOMPARE(back.tensors[0].data[2], -std::numeric_limits<float>::infinity());
            QCOMPARE(back.tensors[0].data[3], 0.0f);
            QVERIFY(back.tensors[1].shape.empty()); // scalar: empty shape, one value
            QCOMPARE(back.tensors[1].data, std::vector<float>{-2.0f});
            QCOMPARE(back.getMetadata("k").value_or(""), std::string("v"));

            // The value beyond f32 named as the shortest text that reads
            // back (it was 316 digits for DBL_MAX), its index and the file.
            for (const auto& [value, text] :
                 {std::pair{-1e39, "-1e+39"},
                  {std::numeric_limits<double>::max(), "1.7976931348623157e+308"}}) {
                const auto bad = openBytes(
                    stFile({{"huge", "F64", {2}, leBytes(std::vector<double>{1.0, value})}}),
                    "b.safetensors");
                std::ostringstream sink;
                try {
                    writeOxck(sink, *bad);
                    QFAIL("converted a value beyond f32");
                } catch (const ExportError& e) {
                    QCOMPARE(
                        qstr(e.what()),
                        QStringLiteral("b.safetensors: tensor \"huge\": value 1 (%1) is beyond "
                                       "the range of f32; OXCK stores f32 only")
                            .arg(QString::fromUtf8(text)));
                }
            }
        });
    }

    // A GGUF's metadata arrays (a tokenizer's) have only a summary for text:
    // a conversion leaves them out, each named in a warning, and carries the
    // rest.
    void metadataArraysLeftOutSaid() {
        guarded([] {
            constexpr uint32_t kStr = 8, kArr = 9, kF32 = 0;
            testsupport::GgufBytes g;
            g.bytes = {'G', 'G', 'U', 'F'};
            g.u32(3);
            g.u64(1);
            g.u64(2);
            g.str("general.name");
            g.u32(kStr);
            g.str("tiny");
            g.str("tokenizer.ggml.tokens");
            g.u32(kArr);
            g.u32(kStr);
            g.u64(2);
            g.str("a");
            g.str("b");
            g.str("w");
            g.u32(1);
            g.u64(2);
            g.u32(kF32);
            g.u64(0);
            g.pad32();
            g.u32(std::bit_cast<uint32_t>(1.5f));
            g.u32(std::bit_cast<uint32_t>(-2.0f));
            g.pad32();
            const auto doc = openBytes(std::string(g.bytes.begin(), g.bytes.end()), "t.gguf");
            const QString said = QStringLiteral(
                "metadata \"tokenizer.ggml.tokens\" ([2 × str]) is an array; not carried over");
            std::ostringstream oxck;
            const auto toOxck = writeOxck(oxck, *doc);
            QCOMPARE(toOxck.size(), size_t(1));
            QVERIFY2(qstr(toOxck[0]).startsWith(said), toOxck[0].c_str());
            std::istringstream in(oxck.str());
            const Checkpoint back = Checkpoint::readFrom(in);
            QCOMPARE(back.getMetadata("general.name").value_or(""), std::string("tiny"));
            QVERIFY(!back.getMetadata("tokenizer.ggml.tokens"));
            std::ostringstream st;
            const auto toSt = writeSafetensors(st, *doc);
            QCOMPARE(toSt.size(), size_t(1));
            QVERIFY2(qstr(toSt[0]).startsWith(said), toSt[0].c_str());
            const auto reread = openBytes(st.str(), "t.safetensors");
            QCOMPARE(reread->metadata(),
                     (std::vector<std::pair<std::string, std::string>>{{"general.name", "tiny"}}));
        });
    }

    // Atomic conversion files: nothing left after a cancel or a refusal,
    // never over the input.
    void convertAtomically() {
        guarded([] {
            QTemporaryDir dir;
            const std::string in = str(dir.filePath(QStringLiteral("in.oxck")));
            sampleCheckpoint().save(in);
            const auto doc = Document::open(in);
            const std::string out = str(dir.filePath(QStringLiteral("out.safetensors")));
            std::atomic<bool> cancel{true};
            TaskControl control;
            control.cancel = &cancel;
            bool cancelled = false;
            try {
                convertDocument(*doc, ConvertTarget::Safetensors, out, control);
            } catch (const Cancelled&) {
                cancelled = true;
            }
            QVERIFY(cancelled);
            QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
            QVERIFY(!conversionRefusal(*doc, ConvertTarget::Npz, in).empty());
            QVERIFY(!conversionRefusal(*doc, ConvertTarget::Oxck, out).empty());
            double last = -1;
            control.cancel = nullptr;
            control.progress = [&](double p) {
                QVERIFY(p >= last);
                last = p;
            };
            QVERIFY(convertDocument(*doc, ConvertTarget::Safetensors, out, control).empty());
            QCOMPARE(last, 1.0);
            QCOMPARE(Document::open(out)->tensors().size(), doc->tensors().size());
        });
    }
};

QTEST_GUILESS_MAIN(TestExportWriters)
#include "tst_exportwriters.moc"
