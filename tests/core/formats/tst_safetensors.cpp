// The safetensors reader: the conformance corpus (valid files against what
// Hugging Face's reader saw, invalid ones refused), every dtype against
// values computed here, hostile headers, the content probe, values read on
// demand and F64 statistics in double.
#include "countingsource.h"
#include "fuzzchecks.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/dtype.h"
#include "ckptscope/formats/safetensors/safetensorsindex.h"
#include "ckptscope/stats/documentstats.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QTest>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace ckptscope;
using nlohmann::json;
using testsupport::guarded;
using testsupport::leBytes;
using testsupport::qstr;
using testsupport::stFile;
using testsupport::str;
using testsupport::StTensor;

namespace {

QString stDir() {
    return testsupport::conformanceDir() + QStringLiteral("/safetensors");
}

std::shared_ptr<const ByteSource> memory(const std::string& bytes, const std::string& name) {
    return std::make_shared<MemorySource>(std::vector<uint8_t>(bytes.begin(), bytes.end()), name);
}

std::string openError(const std::string& bytes, const std::string& name = "t.safetensors") {
    try {
        Document::open(memory(bytes, name));
    } catch (const OpenError& e) {
        return e.what();
    }
    return {};
}

// Independent decoders: sign × significand × 2^exponent, spelled out.
double expectF16(uint16_t h) {
    const double s = (h & 0x8000) ? -1 : 1;
    const int e = (h >> 10) & 31, m = h & 1023;
    if (e == 31)
        return m ? std::nan("") : s * INFINITY;
    if (e == 0)
        return s * std::ldexp(m, -24);
    return s * std::ldexp(1024 + m, e - 25);
}

double expectBf16(uint16_t b) {
    const double s = (b & 0x8000) ? -1 : 1;
    const int e = (b >> 7) & 255, m = b & 127;
    if (e == 255)
        return m ? std::nan("") : s * INFINITY;
    if (e == 0)
        return s * std::ldexp(m, -133);
    return s * std::ldexp(128 + m, e - 134);
}

double expectE4m3(uint8_t b) {
    const double s = (b & 0x80) ? -1 : 1;
    const int e = (b >> 3) & 15, m = b & 7;
    if (e == 15 && m == 7)
        return std::nan("");
    if (e == 0)
        return s * std::ldexp(m, -9);
    return s * std::ldexp(8 + m, e - 10);
}

double expectE5m2(uint8_t b) {
    const double s = (b & 0x80) ? -1 : 1;
    const int e = (b >> 2) & 31, m = b & 3;
    if (e == 31)
        return m ? std::nan("") : s * INFINITY;
    if (e == 0)
        return s * std::ldexp(m, -16);
    return s * std::ldexp(4 + m, e - 17);
}

// Same value, NaN equal to NaN, -0 apart from +0.
bool same(double a, double b) {
    if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

double expectedValue(const json& v) {
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s == "nan")
            return std::nan("");
        return s == "inf" ? INFINITY : -INFINITY;
    }
    return v.get<double>();
}

} // namespace

class TestSafetensors : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void conformanceValid_data() {
        QTest::addColumn<QString>("name");
        if (testsupport::conformanceDir().isEmpty())
            return;
        for (const QString& f : QDir(stDir() + QStringLiteral("/valid")).entryList(QDir::Files))
            QTest::newRow(qPrintable(f)) << f;
    }

    void conformanceValid() {
        REQUIRE_CONFORMANCE();
        QFETCH(QString, name);
        guarded([&] {
            const json expected = json::parse(testsupport::readFile(
                stDir() + QStringLiteral("/expected/") + name + QStringLiteral(".json")));
            const auto doc = Document::open(str(stDir() + QStringLiteral("/valid/") + name));
            QCOMPARE(qstr(formatName(doc->format())), qstr(expected["format"]));
            QCOMPARE(doc->fileSize(), expected["file_size"].get<uint64_t>());
            std::vector<std::pair<std::string, std::string>> meta;
            for (const auto& [k, v] : expected["metadata"].items())
                meta.emplace_back(k, v.get<std::string>());
            std::sort(meta.begin(), meta.end());
            QVERIFY(doc->metadata() == meta);
            const json& tensors = expected["tensors"];
            QCOMPARE(doc->tensors().size(), tensors.size());
            for (size_t i = 0; i < tensors.size(); ++i) {
                const json& e = tensors[i];
                const TensorEntry& t = doc->tensors()[i];
                QCOMPARE(qstr(t.name), qstr(e["name"]));
                QCOMPARE(qstr(dtypeName(t.dtype)), qstr(e["dtype"]));
                QCOMPARE(t.shape, e["shape"].get<std::vector<uint64_t>>());
                QCOMPARE(t.elementCount.value_or(UINT64_MAX), e["element_count"].get<uint64_t>());
                QCOMPARE(tensorSizeBytes(t).value_or(UINT64_MAX), e["size_bytes"].get<uint64_t>());
                QCOMPARE(t.dataOffset, e["offset"].get<uint64_t>());
                const json& values = e["values"];
                QCOMPARE(t.dataLen, values.size());
                std::vector<double> wide(values.size());
                std::vector<float> narrow(values.size());
                doc->readValues(i, 0, t.dataLen, wide.data());
                doc->readValues(i, 0, t.dataLen, narrow.data());
                std::vector<uint8_t> raw(values.size() * dtypeSize(t.dtype));
                doc->readRawValues(i, 0, t.dataLen, raw.data());
                for (size_t k = 0; k < values.size(); ++k) {
                    const json& v = values[k];
                    if (t.dtype == Dtype::U64 || t.dtype == Dtype::I64) {
                        uint64_t bits;
                        std::memcpy(&bits, raw.data() + k * 8, 8);
                        if (t.dtype == Dtype::U64)
                            QCOMPARE(bits, v.get<uint64_t>());
                        else
                            QCOMPARE(int64_t(bits), v.get<int64_t>());
                        QCOMPARE(narrow[k], t.dtype == Dtype::U64 ? float(v.get<uint64_t>())
                                                                  : float(v.get<int64_t>()));
                        continue;
                    }
                    const double want = expectedValue(v);
                    if (!same(wide[k], want))
                        QFAIL(qPrintable(QStringLiteral("%1 value %2: %3, expected %4")
                                             .arg(qstr(t.name))
                                             .arg(k)
                                             .arg(wide[k], 0, 'g', 17)
                                             .arg(qstr(v.dump()))));
                    QVERIFY(same(narrow[k], double(float(want))));
                }
            }
        });
    }

    void conformanceInvalid_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("expect");
        if (testsupport::conformanceDir().isEmpty())
            return;
        const json expected =
            json::parse(testsupport::readFile(stDir() + QStringLiteral("/invalid/EXPECTED.json")));
        for (const auto& [file, e] : expected.items())
            QTest::newRow(file.c_str()) << qstr(file) << qstr(e["expect"]);
    }

    void conformanceInvalid() {
        REQUIRE_CONFORMANCE();
        QFETCH(QString, name);
        QFETCH(QString, expect);
        const std::string path = str(stDir() + QStringLiteral("/invalid/") + name);
        std::string error;
        try {
            Document::open(path);
        } catch (const OpenError& e) {
            error = e.what();
        }
        if (expect == QStringLiteral("error")) {
            QVERIFY2(!error.empty(), "opened a file the reference refuses");
            QVERIFY2(error.rfind(path + ": ", 0) == 0, error.c_str());
            // Never the generic "not a checkpoint": the message says what is wrong.
            QVERIFY2(error.find("not a checkpoint") == std::string::npos, error.c_str());
        } else {
            QVERIFY2(error.empty(), error.c_str());
        }
    }

    // Every dtype with values decoded here by formula: all bit patterns of
    // the 8- and 16-bit floats, integer extremes, F64 special values.
    void everyDtype() {
        guarded([] {
            std::vector<uint16_t> halves(65536);
            for (size_t i = 0; i < halves.size(); ++i)
                halves[i] = uint16_t(i);
            std::vector<uint8_t> bytes(256);
            for (size_t i = 0; i < bytes.size(); ++i)
                bytes[i] = uint8_t(i);
            const std::vector<uint8_t> bools = {0, 1, 1, 0};
            const std::vector<int8_t> i8 = {-128, -1, 0, 1, 127};
            const std::vector<uint16_t> u16 = {0, 1, 65535};
            const std::vector<int16_t> i16 = {-32768, -1, 0, 32767};
            const std::vector<uint32_t> u32 = {0, 16777217u, 4294967295u};
            const std::vector<int32_t> i32 = {std::numeric_limits<int32_t>::min(), -16777217, 0,
                                              2147483647};
            const std::vector<float> f32 = {1.5f, -0.0f, std::numeric_limits<float>::infinity(),
                                            std::numeric_limits<float>::denorm_min()};
            const std::vector<double> f64 = {0.1, -1e300, std::numeric_limits<double>::quiet_NaN(),
                                             -std::numeric_limits<double>::infinity(), 5e-324};
            const std::vector<uint64_t> u64 = {0, 9007199254740993ull, UINT64_MAX};
            const std::vector<int64_t> i64 = {INT64_MIN, -9007199254740993ll, INT64_MAX};
            const std::vector<StTensor> tensors = {
                {"bool", "BOOL", {4}, leBytes(bools)},
                {"u8", "U8", {256}, leBytes(bytes)},
                {"i8", "I8", {5}, leBytes(i8)},
                {"u16", "U16", {3}, leBytes(u16)},
                {"i16", "I16", {4}, leBytes(i16)},
                {"f16", "F16", {256, 256}, leBytes(halves)},
                {"bf16", "BF16", {65536}, leBytes(halves)},
                {"u32", "U32", {3}, leBytes(u32)},
                {"i32", "I32", {4}, leBytes(i32)},
                {"f32", "F32", {2, 2}, leBytes(f32)},
                {"f64", "F64", {5}, leBytes(f64)},
                {"u64", "U64", {3}, leBytes(u64)},
                {"i64", "I64", {3}, leBytes(i64)},
                {"e4m3", "F8_E4M3", {16, 16}, leBytes(bytes)},
                {"e5m2", "F8_E5M2", {256}, leBytes(bytes)},
            };
            const auto doc = Document::open(memory(stFile(tensors), "all.safetensors"));
            QCOMPARE(doc->format(), Format::Safetensors);
            QCOMPARE(doc->tensors().size(), tensors.size());
            auto values = [&](size_t i) {
                std::vector<double> wide(size_t(doc->tensors()[i].dataLen));
                doc->readValues(i, 0, wide.size(), wide.data());
                std::vector<float> narrow(wide.size());
                doc->readValues(i, 0, narrow.size(), narrow.data());
                return std::make_pair(wide, narrow);
            };
            auto check = [&](size_t i, auto expectedOf, bool exact) {
                const auto [wide, narrow] = values(i);
                const TensorEntry& t = doc->tensors()[i];
                QCOMPARE(qstr(t.name), qstr(tensors[i].name));
                QCOMPARE(qstr(dtypeName(t.dtype)), qstr(tensors[i].dtype));
                QCOMPARE(exactInF32(t.dtype), exact);
                for (size_t k = 0; k < wide.size(); ++k) {
                    const double want = expectedOf(k);
                    if (!same(wide[k], want) || !same(narrow[k], double(float(want))))
                        QFAIL(qPrintable(QStringLiteral("%1[%2]: %3 / %4, expected %5")
                                             .arg(qstr(t.name))
                                             .arg(k)
                                             .arg(wide[k], 0, 'g', 17)
                                             .arg(double(narrow[k]), 0, 'g', 9)
                                             .arg(want, 0, 'g', 17)));
                    if (exact)
                        QVERIFY(same(double(narrow[k]), want));
                }
            };
            check(
                0, [&](size_t k) { return double(bools[k]); }, true);
            check(
                1, [&](size_t k) { return double(k); }, true);
            check(
                2, [&](size_t k) { return double(i8[k]); }, true);
            check(
                3, [&](size_t k) { return double(u16[k]); }, true);
            check(
                4, [&](size_t k) { return double(i16[k]); }, true);
            check(
                5, [&](size_t k) { return expectF16(uint16_t(k)); }, true);
            check(
                6, [&](size_t k) { return expectBf16(uint16_t(k)); }, true);
            check(
                7, [&](size_t k) { return double(u32[k]); }, false);
            check(
                8, [&](size_t k) { return double(i32[k]); }, false);
            check(
                9, [&](size_t k) { return double(f32[k]); }, true);
            check(
                10, [&](size_t k) { return f64[k]; }, false);
            check(
                13, [&](size_t k) { return expectE4m3(uint8_t(k)); }, true);
            check(
                14, [&](size_t k) { return expectE5m2(uint8_t(k)); }, true);
            // 64-bit integers: exact through the raw bytes, rounded once to f32.
            for (size_t i : {size_t(11), size_t(12)}) {
                const auto [wide, narrow] = values(i);
                for (size_t k = 0; k < 3; ++k) {
                    const float want = i == 11 ? float(u64[k]) : float(i64[k]);
                    QCOMPARE(narrow[k], want);
                }
                std::vector<uint8_t> raw(24);
                doc->readRawValues(i, 0, 3, raw.data());
                QCOMPARE(std::memcmp(raw.data(),
                                     i == 11 ? static_cast<const void*>(u64.data())
                                             : static_cast<const void*>(i64.data()),
                                     24),
                         0);
            }
            // E4M3FN's largest finite value and its one NaN pattern.
            QCOMPARE(f8e4m3ToFloat(0x7e), 448.0f);
            QVERIFY(std::isnan(f8e4m3ToFloat(0x7f)) && std::isnan(f8e4m3ToFloat(0xff)));
            // Reading a range in the middle converts only that range.
            float mid[2];
            doc->readValues(5, 0x3c00, 2, mid);
            QCOMPARE(mid[0], 1.0f);
            QCOMPARE(mid[1], float(expectF16(0x3c01)));
            // Sums of sizes follow the dtypes.
            uint64_t bytesTotal = 0, params = 0;
            for (const StTensor& t : tensors) {
                bytesTotal += t.bytes.size();
                uint64_t n = 1;
                for (uint64_t d : t.shape)
                    n *= d;
                params += n;
            }
            QCOMPARE(doc->totalBytes(), bytesTotal);
            QCOMPARE(doc->numParams(), params);
        });
    }

    void hostile_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("needle");
        auto add = [](const char* name, const std::string& bytes, const char* needle) {
            QTest::newRow(name) << QByteArray(bytes.data(), qsizetype(bytes.size()))
                                << QString::fromUtf8(needle);
        };
        const std::string four(4, '\0');
        auto withLength = [](uint64_t n, const std::string& rest) {
            std::string s;
            testsupport::putU64(s, n);
            return s + rest;
        };
        add("length past the file", withLength(1000, "{}"), "past the end of the file");
        add("length over 100 MB", withLength(100'000'001, "{}"), "over the limit");
        add("length below 2", withLength(1, "{"), "below 2");
        add("only the length", withLength(2, ""), "ends after the header length");
        add("no '{'", withLength(2, "[]"), "byte 8: expected '{'");
        add("not JSON", stFile("{\"a\": {", "", false), "line 1, column");
        add("not an object", stFile("{}  ", "", false).replace(8, 1, "["), "expected '{'");
        add("offsets past the data",
            stFile("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", four),
            "past the end of the data");
        add("overlap",
            stFile("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                   "\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[2,6]}}",
                   std::string(6, '\0')),
            "overlap tensor \"x\"");
        add("hole",
            stFile("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                   "\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
                   std::string(12, '\0')),
            "leave a gap after tensor \"x\"");
        add("not at 0",
            stFile("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                   std::string(8, '\0')),
            "the start of the data buffer");
        add("trailing bytes",
            stFile("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
                   std::string(9, '\0')),
            "5 bytes follow the last tensor");
        add("length not shape x size",
            stFile("{\"x\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,4]}}", four),
            "needs 3 × 2 = 6");
        add("reversed offsets",
            stFile("{\"x\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,0]}}", four),
            "end before they begin");
        add("duplicate name",
            stFile("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                   "\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                   std::string(8, '\0')),
            "\"x\" is given twice");
        add("unknown dtype",
            stFile("{\"x\":{\"dtype\":\"Q7\",\"shape\":[1],\"data_offsets\":[0,1]}}", "a"),
            "unknown dtype \"Q7\"");
        add("unsupported dtype",
            stFile("{\"x\":{\"dtype\":\"F4\",\"shape\":[2],\"data_offsets\":[0,1]}}", "a"),
            "dtype \"F4\" is not supported");
        add("shape overflow",
            stFile("{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
                   "\"data_offsets\":[0,4]}}",
                   four),
            "overflows 64 bits");
        add("bytes overflow",
            stFile("{\"x\":{\"dtype\":\"F64\",\"shape\":[4611686018427387904],"
                   "\"data_offsets\":[0,4]}}",
                   four),
            "byte size overflows");
        add("negative dimension",
            stFile("{\"x\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", four),
            "non-negative integers");
        add("metadata not strings", stFile("{\"__metadata__\":{\"a\":1}}", ""),
            "value of \"a\" is number");
        add("entry not an object", stFile("{\"x\":[1,2]}", ""), "expected an object");
        add("missing offsets", stFile("{\"x\":{\"dtype\":\"F32\",\"shape\":[]}}", four),
            "data_offsets");
        add("header not UTF-8", stFile("{\"\xff\":1}", ""), "not UTF-8");
    }

    void hostile() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, needle);
        const std::string error = openError(bytes.toStdString());
        QVERIFY2(!error.empty(), "opened a hostile file");
        QVERIFY2(error.rfind("t.safetensors: ", 0) == 0, error.c_str());
        QVERIFY2(qstr(error).contains(needle), error.c_str());
    }

    // A header length whose low byte is a space and next byte '{' would pass
    // the JSON probe: the safetensors probe runs first.
    void probeBeforeJson() {
        guarded([] {
            const uint64_t n = 0x7b20; // " {" as its first two bytes
            std::string header = "{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
            header.append(n - header.size(), ' ');
            std::string file = stFile(header, "z", false);
            QCOMPARE(file.substr(0, 2), std::string(" {"));
            QCOMPARE(detectFormat(*memory(file, "no-extension")).format, Format::Safetensors);
            const auto doc = Document::open(memory(file, "no-extension"));
            QCOMPARE(doc->tensors().size(), size_t(1));
            float v;
            doc->readValues(0, 0, 1, &v);
            QCOMPARE(v, float('z'));
            // Cut short, it is still safetensors, with a clear error.
            const std::string err = openError(file.substr(0, 100), "cut");
            QVERIFY2(qstr(err).contains(QStringLiteral("past the end of the file")), err.c_str());
        });
    }

    // A header of 200 000 tensors (as shards of large models have) opens
    // whole, in the data's order, with every duplicate still refused. (Its
    // speed, once quadratic in the count, is measured by bench/compare.sh.)
    void headerOfManyTensors() {
        guarded([] {
            constexpr size_t n = 200'000;
            std::vector<testsupport::StTensor> tensors(n);
            for (size_t i = 0; i < n; ++i)
                tensors[i] = {"layers." + std::to_string(n - i) + ".w",
                              "U8",
                              {1},
                              std::string(1, char(i % 251))};
            const std::string file = stFile(tensors);
            const auto doc = Document::open(memory(file, "many.safetensors"));
            QCOMPARE(doc->tensors().size(), n);
            for (size_t i : {size_t(0), n / 2, n - 1}) {
                QCOMPARE(qstr(doc->tensors()[i].name), qstr(tensors[i].name));
                uint8_t v = 0;
                doc->readRawValues(i, 0, 1, &v);
                QCOMPARE(int(v), int(i % 251));
            }
            tensors[n - 1].name = tensors[7].name;
            const std::string error = openError(stFile(tensors), "dup.safetensors");
            QVERIFY2(error.find("\"layers." + std::to_string(n - 7) + ".w\" is given twice") !=
                         std::string::npos,
                     error.c_str());
        });
    }

    // A file named .safetensors that fails the probe says which rule broke;
    // the same bytes under another name are simply not a checkpoint.
    void namedButFailsProbe() {
        std::string bytes;
        testsupport::putU64(bytes, 0);
        bytes += "{}";
        const std::string named = openError(bytes, "m.safetensors");
        QVERIFY2(qstr(named).contains(QStringLiteral("not a safetensors file")) &&
                     qstr(named).contains(QStringLiteral("below 2")),
                 named.c_str());
        const std::string other = openError(bytes, "m.bin");
        QVERIFY2(qstr(other).contains(QStringLiteral("not a checkpoint")), other.c_str());
    }

    void orderedByOffset() {
        guarded([] {
            const std::string header =
                "{\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[1,3]},"
                "\"z\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]},"
                "\"a\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1]}}";
            const auto doc = Document::open(memory(stFile(header, "xyz"), "o.safetensors"));
            QCOMPARE(doc->tensors().size(), size_t(3));
            QCOMPARE(qstr(doc->tensors()[0].name), QStringLiteral("z"));
            QCOMPARE(qstr(doc->tensors()[1].name), QStringLiteral("a"));
            QCOMPARE(qstr(doc->tensors()[2].name), QStringLiteral("b"));
            QCOMPARE(doc->tensors()[1].elementCount.value_or(0), uint64_t(1)); // scalar: 1
        });
    }

    // Headers the fast reader (simdjson) leaves to the checked one (nlohmann)
    // or reads itself where the two could differ: each reads as JSON says.
    void unusualHeaders() {
        guarded([] {
            const auto open = [](const std::string& header, const std::string& data) {
                return Document::open(memory(stFile(header, data), "u.safetensors"));
            };
            // A field given twice: the last one counts, as in every JSON reader.
            auto doc = open("{\"x\":{\"dtype\":\"F16\",\"shape\":[3],\"dtype\":\"U8\","
                            "\"data_offsets\":[0,3]}}",
                            "abc");
            QCOMPARE(doc->tensors()[0].dtype, Dtype::U8);
            // Escaped names are read unescaped.
            doc = open("{\"caf\\u00e9.\\\"w\\\"\\n\":{\"dtype\":\"U8\",\"shape\":[0],"
                       "\"data_offsets\":[0,0]},\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}",
                       "");
            QCOMPARE(doc->tensors()[0].name, std::string("caf\xc3\xa9.\"w\"\n"));
            QCOMPARE(doc->tensors()[0].shape, std::vector<uint64_t>{0});
            QCOMPARE(doc->metadata().size(), size_t(1));
            QCOMPARE(qstr(doc->metadata()[0].second), QStringLiteral("2"));
            // Nested past simdjson's depth limit, in a field no one reads.
            doc = open("{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"deep\":" +
                           std::string(2000, '[') + std::string(2000, ']') + "}}",
                       "z");
            QCOMPARE(doc->tensors().size(), size_t(1));
            // -0 is not a count (Hugging Face's reader takes it as a float);
            // simdjson reads it as 0, so the checked reader decides.
            const std::string minusZero = openError(
                stFile("{\"x\":{\"dtype\":\"U8\",\"shape\":[-0],\"data_offsets\":[0,0]}}", ""));
            QVERIFY2(qstr(minusZero).contains(QStringLiteral("non-negative integers")),
                     minusZero.c_str());
            // An offset beyond 64 bits is a number, but not a count.
            const std::string error =
                openError(stFile("{\"x\":{\"dtype\":\"U8\",\"shape\":[1],"
                                 "\"data_offsets\":[0,18446744073709551616]}}",
                                 "z"));
            QVERIFY2(qstr(error).contains(QStringLiteral("\"data_offsets\" as [BEGIN, END]")),
                     error.c_str());
        });
    }

    // Opening reads the header only, never the data.
    void readsOnDemand() {
        guarded([] {
            const std::string data(16 << 20, '\x01');
            const std::string file =
                stFile({{"big", "U8", {uint64_t(data.size())}, data}}, {{"k", "v"}});
            auto source = std::make_shared<testsupport::CountingSource>(
                std::vector<uint8_t>(file.begin(), file.end()), "big.safetensors");
            const auto doc = Document::open(source);
            QVERIFY2(source->bytesRead < 64 * 1024,
                     qPrintable(QString::number(source->bytesRead.load())));
            QCOMPARE(doc->metadata().size(), size_t(1));
            float v[3];
            doc->readValues(0, 100, 3, v);
            QCOMPARE(v[2], 1.0f);
        });
    }

    // F64 statistics stay in double: values beyond f32's range keep their
    // size and a sum that f32 would round keeps its digits.
    void f64StatsInDouble() {
        guarded([] {
            const std::vector<double> v = {1e300, -1e300, 0.1, 0.2, std::nan("")};
            const auto doc =
                Document::open(memory(stFile({{"d", "F64", {5}, leBytes(v)}}), "d.safetensors"));
            StatsOptions options;
            options.bins = 4;
            const StatsResult r = computeTensorStats(*doc, 0, options);
            QCOMPARE(r.stats.count, uint64_t(5));
            QCOMPARE(r.stats.nan, uint64_t(1));
            QCOMPARE(r.stats.finite, uint64_t(4));
            QCOMPARE(*r.stats.min, -1e300);
            QCOMPARE(*r.stats.max, 1e300);
            QCOMPARE(r.stats.finiteSum, (1e300 + -1e300) + 0.1 + 0.2);
            QCOMPARE(r.histogram.counts.size(), size_t(4));
            QCOMPARE(r.histogram.counts[0] + r.histogram.counts[1] + r.histogram.counts[2] +
                         r.histogram.counts[3],
                     uint64_t(4));
            // Integer tensors go through f32 with the fused pass.
            const std::vector<int32_t> ints = {1, 2, 3, -4};
            const auto idoc = Document::open(
                memory(stFile({{"i", "I32", {2, 2}, leBytes(ints)}}), "i.safetensors"));
            const StatsResult ri = computeTensorStats(*idoc, 0, StatsOptions{});
            QCOMPARE(*ri.stats.min, -4.0);
            QCOMPARE(ri.stats.finiteSum, 2.0);
        });
    }

    // The fuzz target's checks over every corpus file and hostile case: a
    // refusal names the file, an accepted file survives a write-back.
    void fuzzChecksOnCorpus() {
        REQUIRE_CONFORMANCE();
        for (const char* sub : {"/valid", "/invalid"}) {
            const QDir dir(stDir() + QString::fromLatin1(sub));
            for (const QString& f : dir.entryList({QStringLiteral("*.safetensors")}, QDir::Files)) {
                try {
                    fuzzchecks::checkSafetensors(testsupport::readFile(dir.filePath(f)));
                } catch (const std::exception& e) {
                    QFAIL(qPrintable(f + QStringLiteral(": ") + QString::fromUtf8(e.what())));
                }
            }
        }
    }

    // Every damaged prefix of a valid file gives an error, never a crash.
    void everyTruncation() {
        const std::vector<float> f = {1, 2, 3};
        const std::string file =
            stFile({{"a", "F32", {3}, leBytes(f)}, {"b", "I8", {2}, std::string("\x01\x02", 2)}},
                   {{"k", "v"}});
        for (size_t n = 0; n < file.size(); ++n) {
            const std::string err = openError(file.substr(0, n));
            QVERIFY2(!err.empty(), qPrintable(QString::number(n)));
        }
        QVERIFY(openError(file).empty());
    }
};

QTEST_GUILESS_MAIN(TestSafetensors)
#include "tst_safetensors.moc"
