// GGUF against ggml's own reading of the conformance corpus
// (../shared/conformance/gguf): every valid file's header, metadata and
// tensors as expected/FILE.json gives them, every tensor's values bit for bit
// as expected/FILE.I.f32, and every damaged file in invalid/ refused with a
// message naming the file and the problem.
#include "ggufbuilder.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/export/npywriter.h"
#include "ckptscope/formats/gguf/ggufreader.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <vector>

using nlohmann::json;
using namespace ckptscope;
using testsupport::AddressSpaceCap;
using testsupport::guarded;
using testsupport::qstr;
using testsupport::str;

namespace {

void validRows() {
    QTest::addColumn<QString>("file");
    const QString dir = testsupport::ggufCorpus();
    if (dir.isEmpty()) {
        QTest::newRow("no-corpus") << QString();
        return;
    }
    const QStringList files = QDir(dir + QStringLiteral("/valid"))
                                  .entryList({QStringLiteral("*.gguf")}, QDir::Files, QDir::Name);
    for (const QString& f : files)
        QTest::newRow(qPrintable(f)) << f;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// Our text of a scalar value against ggml's JSON value.
bool sameScalar(const std::string& type, const std::string& ours, const json& expected) {
    if (type == "str")
        return ours == expected.get<std::string>();
    if (type == "bool")
        return ours == (expected.get<bool>() ? "true" : "false");
    if (type == "f32")
        return std::strtof(ours.c_str(), nullptr) == float(expected.get<double>());
    if (type == "f64")
        return std::strtod(ours.c_str(), nullptr) == expected.get<double>();
    return ours == expected.dump(); // integers: decimal digits
}

void checkMetadata(const Document& doc, const json& expected) {
    const auto& rows = doc.metadataRows();
    QCOMPARE(rows.size(), expected.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        const MetadataRow& row = rows[i];
        const json& e = expected[i];
        const QByteArray where = QByteArray::fromStdString(row.key);
        QCOMPARE(row.key, e["key"].get<std::string>());
        const std::string type = e["type"].get<std::string>();
        if (type != "arr") {
            QCOMPARE(row.type, type);
            QVERIFY2(sameScalar(type, row.value, e["value"]), where + " = " + row.value.c_str());
            continue;
        }
        const std::string of = e["value"]["array_of"].get<std::string>();
        const uint64_t length = e["value"]["length"].get<uint64_t>();
        QCOMPARE(row.type, "arr[" + of + "]");
        QVERIFY2(row.array.has_value(), where);
        QCOMPARE(row.array->count, length);
        QCOMPARE(row.value, "[" + std::to_string(length) + " × " + of + "]");
        const auto items = gguf::readGgufArrayItems(doc.source(), *row.array, 0, length);
        QCOMPARE(uint64_t(items.size()), length);
        // Read on in runs of two, each from the rest the one before left:
        // the same items (the Metadata tab's tree reads arrays so).
        std::vector<std::string> runs;
        MetadataArray rest = *row.array;
        while (rest.count > 0) {
            const MetadataArrayRun run = doc.arrayRun(rest, 2);
            QVERIFY2(!run.items.empty() && run.nested.size() == run.items.size(), where);
            QCOMPARE(run.rest.count, rest.count - run.items.size());
            runs.insert(runs.end(), run.items.begin(), run.items.end());
            rest = run.rest;
        }
        QCOMPARE(runs, items);
        if (e["value"].contains("values")) {
            const json& values = e["value"]["values"];
            for (size_t k = 0; k < values.size(); ++k)
                QVERIFY2(sameScalar(of, items[k], values[k]),
                         where + "[" + QByteArray::number(qulonglong(k)) + "]");
            // Items from the middle, read lazily, are the same items.
            if (length > 2)
                QCOMPARE(gguf::readGgufArrayItems(doc.source(), *row.array, 1, 2),
                         std::vector<std::string>(items.begin() + 1, items.begin() + 3));
        }
    }
}

void checkTensors(const Document& doc, const json& expected) {
    QCOMPARE(doc.tensors().size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        const TensorEntry& t = doc.tensors()[i];
        const json& e = expected[i];
        QCOMPARE(t.name, e["name"].get<std::string>());
        QCOMPARE(lower(dtypeName(t.dtype)), lower(e["type"].get<std::string>()));
        auto ne = e["ne"].get<std::vector<uint64_t>>();
        std::reverse(ne.begin(), ne.end()); // ne[0] innermost: row-major is reversed
        QCOMPARE(t.shape, ne);
        QCOMPARE(t.dataOffset, e["offset"].get<uint64_t>());
        QCOMPARE(tensorSizeBytes(t).value_or(0), e["size"].get<uint64_t>());
    }
}

// A GGUF file built in memory, field by field.
struct Builder : testsupport::GgufBytes {
    // Header with no tensors and `keys` metadata entries to follow.
    static Builder header(uint64_t keys) {
        Builder b;
        b.bytes = {'G', 'G', 'U', 'F'};
        b.u32(3);
        b.u64(0);
        b.u64(keys);
        return b;
    }
    std::shared_ptr<const Document> open() const {
        return Document::open(std::make_shared<MemorySource>(bytes, "built.gguf"));
    }
};

// Arrays nested `depth` deep around three i32.
void nestedArray(Builder& b, int depth) {
    b.u32(uint32_t(gguf::ValueType::Array));
    for (int d = 1; d < depth; ++d) {
        b.u32(uint32_t(gguf::ValueType::Array));
        b.u64(1);
    }
    b.u32(uint32_t(gguf::ValueType::I32));
    b.u64(3);
    for (int v : {7, -8, 9})
        b.u32(uint32_t(v));
}

std::string openError(const Builder& b) {
    try {
        b.open();
    } catch (const OpenError& e) {
        return e.what();
    }
    return "opened";
}

} // namespace

class TestGguf : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void header_data() { validRows(); }
    void header() {
        guarded([&] { headerImpl(); });
    }
    void values_data() { validRows(); }
    void values() {
        guarded([&] { valuesImpl(); });
    }
    void invalid_data();
    void invalid() {
        guarded([&] { invalidImpl(); });
    }
    void blockTypesAreNotSafetensorsNames();
    void q8_1IsListedButNotRead();
    void vocabularyIsOneLazyRow();
    void nestedArraysAreReadToADepth();
    void alignmentMustBeU32();
    void splitModelOpensAsOne();
    void fileTypeNamedAsLlamaCppNamesIt();

private:
    void headerImpl();
    void valuesImpl();
    void invalidImpl();
};

void TestGguf::headerImpl() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    const QString dir = testsupport::ggufCorpus();
    const json exp =
        testsupport::loadJson(dir + QStringLiteral("/expected/") + file + QStringLiteral(".json"));
    const auto doc = Document::open(str(dir + QStringLiteral("/valid/") + file));
    QCOMPARE(std::string(doc->formatModule().name), std::string("gguf"));
    QCOMPARE(doc->version(), exp["version"].get<uint32_t>());
    QCOMPARE(doc->alignment(), exp["alignment"].get<uint32_t>());
    QCOMPARE(doc->dataStart(), exp["data_offset"].get<uint64_t>());
    checkMetadata(*doc, exp["metadata"]);
    checkTensors(*doc, exp["tensors"]);
}

// Each tensor's values as ggml dequantizes them, bit for bit.
void TestGguf::valuesImpl() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    const QString dir = testsupport::ggufCorpus();
    const auto doc = Document::open(str(dir + QStringLiteral("/valid/") + file));
    for (size_t i = 0; i < doc->tensors().size(); ++i) {
        const QString expectedPath =
            dir + QStringLiteral("/expected/%1.%2.f32").arg(file).arg(qulonglong(i));
        QVERIFY2(QFile::exists(expectedPath), qPrintable(expectedPath));
        const std::string bytes = testsupport::readFile(expectedPath);
        const TensorEntry& t = doc->tensors()[i];
        QCOMPARE(uint64_t(bytes.size()), t.dataLen * 4);
        std::vector<float> values(size_t(t.dataLen));
        doc->readValues(i, 0, t.dataLen, values.data());
        const auto mismatch = std::memcmp(values.data(), bytes.data(), bytes.size());
        QVERIFY2(mismatch == 0,
                 qPrintable(QStringLiteral("tensor %1 (%2) differs from ggml's values")
                                .arg(qstr(t.name), qstr(dtypeName(t.dtype)))));
        // A range that starts and ends inside blocks: the same values.
        if (t.dataLen > 3) {
            std::vector<float> part(size_t(t.dataLen - 2));
            doc->readValues(i, 1, t.dataLen - 2, part.data());
            QVERIFY(std::memcmp(part.data(), values.data() + 1, part.size() * 4) == 0);
        }
    }
}

// A word of each message that names the problem (besides the file name).
void TestGguf::invalid_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("word");
    if (testsupport::ggufCorpus().isEmpty()) {
        QTest::newRow("no-corpus") << QString() << QString();
        return;
    }
    const json expected =
        testsupport::loadJson(testsupport::ggufCorpus() + QStringLiteral("/invalid/EXPECTED.json"));
    const std::vector<std::pair<std::string, std::string>> words = {
        {"alignment-not-power-of-two", "not a power of two"},
        {"alignment-zero", "not a power of two"},
        {"bad-magic", "magic \"GGUF\", found \"GGUX\""},
        {"dims-overflow", "2^63 elements"},
        {"duplicate-tensor-name", "two tensors"},
        {"empty", "empty"},
        {"five-dims", "5 dimensions"},
        {"key-length-huge", "string length"},
        {"metadata-count-huge", "metadata count"},
        {"negative-dim", "negative"},
        {"offset-misaligned", "data offset"},
        {"offset-overlapping", "data offset"},
        {"offset-past-end", "data offset"},
        {"removed-tensor-type-q4_2", "ggml type 4"},
        {"row-not-multiple-of-block", "blocks of"},
        {"tensor-count-huge", "tensor count"},
        {"tensor-name-length-huge", "string length"},
        {"truncated-in-counts", "truncated"},
        {"truncated-in-data", "past the end"},
        {"truncated-in-magic", "magic"},
        {"truncated-in-metadata", "truncated"},
        {"truncated-in-tensor-info", "truncated"},
        {"unknown-tensor-type", "unknown ggml type"},
        {"unknown-value-type", "unknown value type"},
        {"version-1", "version 1"},
        {"version-99", "version 99"},
    };
    for (auto it = expected.begin(); it != expected.end(); ++it) {
        std::string word;
        for (const auto& [stem, w] : words)
            if (it.key() == stem + ".gguf")
                word = w;
        QTest::newRow(it.key().c_str()) << qstr(it.key()) << qstr(word);
    }
}

void TestGguf::invalidImpl() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    QFETCH(QString, word);
    QVERIFY2(!word.isEmpty(), "no distinguishing word for this file in the test");
    const QString path = testsupport::ggufCorpus() + QStringLiteral("/invalid/") + file;
    QVERIFY(QFile::exists(path));
    QString error;
    {
        AddressSpaceCap cap(uint64_t(1) << 30); // a count from the file is never allocated
        try {
            Document::open(str(path));
            QFAIL("opened, but ggml refuses it");
        } catch (const OpenError& e) {
            error = qstr(e.what());
        }
    }
    QVERIFY2(error.startsWith(path + QStringLiteral(": ")), qPrintable(error));
    QVERIFY2(error.contains(word), qPrintable(error));
}

void TestGguf::blockTypesAreNotSafetensorsNames() {
    QCOMPARE(std::string(dtypeName(Dtype::Q4_K)), std::string("Q4_K"));
    QCOMPARE(std::string(dtypeName(Dtype::IQ2_XXS)), std::string("IQ2_XXS"));
    QCOMPARE(dtypeBlock(Dtype::Q4_K).elements, 256u);
    QCOMPARE(dtypeBlock(Dtype::Q4_K).bytes, 144u);
    QCOMPARE(dtypeBytes(Dtype::Q1_0, 256).value_or(0), uint64_t(36));
    QVERIFY(!dtypeBytes(Dtype::Q1_0, 100).has_value()); // not whole blocks
    for (Dtype d : {Dtype::Q4_0, Dtype::Q4_K, Dtype::IQ2_XXS, Dtype::Q8_1, Dtype::Q2_0})
        QVERIFY(!parseDtype(dtypeName(d)).has_value());
    QCOMPARE(dtypeFromGgml(12).value_or(Dtype::F32), Dtype::Q4_K);
    QCOMPARE(dtypeFromGgml(24).value_or(Dtype::F32), Dtype::I8);
    QVERIFY(!dtypeFromGgml(4).has_value()); // removed Q4_2
    QVERIFY(!dtypeFromGgml(43).has_value());
}

// A Q8_1 tensor opens (listed with its type and size); reading its values
// fails with a message naming the type.
void TestGguf::q8_1IsListedButNotRead() {
    std::vector<uint8_t> file;
    auto put = [&](uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i)
            file.push_back(uint8_t(v >> (8 * i)));
    };
    file.insert(file.end(), {'G', 'G', 'U', 'F'});
    put(3, 4); // version
    put(1, 8); // tensors
    put(0, 8); // metadata
    put(1, 8);
    file.push_back('w');
    put(1, 4);  // n_dims
    put(32, 8); // ne[0]
    put(9, 4);  // Q8_1
    put(0, 8);  // offset
    file.resize(64 + 36, 0);
    const auto doc = Document::open(std::make_shared<MemorySource>(file, "q81.gguf"));
    QCOMPARE(doc->tensors().size(), size_t(1));
    QCOMPARE(std::string(dtypeName(doc->tensors()[0].dtype)), std::string("Q8_1"));
    QCOMPARE(tensorSizeBytes(doc->tensors()[0]).value_or(0), uint64_t(36));
    QCOMPARE(doc->dataStart(), uint64_t(64));
    float v[32];
    try {
        doc->readValues(0, 0, 32, v);
        QFAIL("read Q8_1 values");
    } catch (const std::exception& e) {
        QVERIFY2(std::string(e.what()).find("Q8_1") != std::string::npos, e.what());
    }
    // An export promises no values it cannot read ("written as float32,
    // exactly" came before the failure).
    QVERIFY(npyLayout(*doc, 0).notes.empty());
}

// 150 000 strings: one metadata row with a summary; items read on demand
// from anywhere in the array are the strings written.
void TestGguf::vocabularyIsOneLazyRow() {
    constexpr uint64_t kTokens = 150000;
    Builder b = Builder::header(2);
    b.str("tokenizer.ggml.tokens");
    b.u32(uint32_t(gguf::ValueType::Array));
    b.u32(uint32_t(gguf::ValueType::Str));
    b.u64(kTokens);
    for (uint64_t i = 0; i < kTokens; ++i)
        b.str("tok" + std::to_string(i));
    b.str("general.name");
    b.u32(uint32_t(gguf::ValueType::Str));
    b.str("after");
    const auto doc = b.open();
    QCOMPARE(doc->metadataRows().size(), size_t(2));
    const MetadataRow& tokens = doc->metadataRows()[0];
    QCOMPARE(tokens.value, "[" + std::to_string(kTokens) + " × str]");
    QCOMPARE(tokens.type, std::string("arr[str]"));
    QCOMPARE(doc->metadataRows()[1].value, std::string("after"));
    const auto items = gguf::readGgufArrayItems(doc->source(), *tokens.array, kTokens - 2, 10);
    QCOMPARE(items, (std::vector<std::string>{"tok149998", "tok149999"}));
    QCOMPARE(gguf::readGgufArrayItems(doc->source(), *tokens.array, 1000, 1),
             std::vector<std::string>{"tok1000"});
}

// ggml refuses arrays of arrays; we read them, eight levels at most.
void TestGguf::nestedArraysAreReadToADepth() {
    Builder ok = Builder::header(1);
    ok.str("nested");
    nestedArray(ok, 2);
    const auto doc = ok.open();
    const MetadataRow& row = doc->metadataRows().at(0);
    QCOMPARE(row.value, std::string("[1 × arr]"));
    QCOMPARE(row.type, std::string("arr[arr]"));
    QCOMPARE(gguf::readGgufArrayItems(doc->source(), *row.array, 0, 1),
             std::vector<std::string>{"[3 × i32]"});
    Builder deep = Builder::header(1);
    deep.str("nested");
    nestedArray(deep, 9);
    const std::string error = openError(deep);
    QVERIFY2(error.find("built.gguf: byte ") == 0 &&
                 error.find("nested more than 8") != std::string::npos,
             error.c_str());
}

void TestGguf::alignmentMustBeU32() {
    Builder b = Builder::header(1);
    b.str("general.alignment");
    b.u32(uint32_t(gguf::ValueType::U64));
    b.u64(64);
    const std::string error = openError(b);
    QVERIFY2(error.find("general.alignment is of type u64; expected u32") != std::string::npos,
             error.c_str());
}

// llama.cpp's gguf-split: NAME-0000N-of-0000M.gguf, split.count in each.
// The first split opens the whole model (tensors of every split, each read
// from its own file); another split alone says where the first one is; a
// missing split is an error naming it.
void TestGguf::splitModelOpensAsOne() {
    QTemporaryDir dir;
    const std::vector<float> a{1.5f, -2.0f, 3.25f}, b{4.0f, 5.5f}, c{-6.0f};
    const auto path = [&](int n) {
        return str(dir.filePath(QStringLiteral("m-0000%1-of-00002.gguf").arg(n)));
    };
    testsupport::writeFile(
        QString::fromStdString(path(1)),
        testsupport::ggufOf({{"split.no", 0}, {"split.count", 2}}, {{"a", a}, {"b", b}}));
    testsupport::writeFile(QString::fromStdString(path(2)),
                           testsupport::ggufOf({{"split.no", 1}, {"split.count", 2}}, {{"c", c}}));
    const auto doc = Document::open(path(1));
    QVERIFY(doc->isSharded());
    QCOMPARE(doc->tensors().size(), size_t(3));
    const std::vector<std::vector<float>> expected{a, b, c};
    for (size_t i = 0; i < 3; ++i) {
        std::vector<float> got(expected[i].size());
        doc->readValues(i, 0, got.size(), got.data());
        QCOMPARE(got, expected[i]);
    }
    QCOMPARE(doc->shardName(2), std::string("m-00002-of-00002.gguf"));

    const auto second = Document::open(path(2));
    QCOMPARE(second->tensors().size(), size_t(1));
    QVERIFY(!second->warnings().empty());
    QVERIFY(second->warnings().front().message.find("opens from m-00001-of-00002.gguf") !=
            std::string::npos);
    QCOMPARE(second->warnings().front().opens, path(1));

    QFile::remove(QString::fromStdString(path(2)));
    try {
        Document::open(path(1));
        QFAIL("a missing split was not noticed");
    } catch (const OpenError& e) {
        QVERIFY2(std::string(e.what()).find("split 2 of 2 (m-00002-of-00002.gguf)") !=
                     std::string::npos,
                 e.what());
    }
}

// general.file_type: llama.cpp's name beside the number stored, and the
// number alone where llama.cpp's versions disagree or it is not a number.
void TestGguf::fileTypeNamedAsLlamaCppNamesIt() {
    const auto text = [](const std::string& type, const std::string& value) {
        MetadataRow row;
        row.key = "general.file_type";
        row.type = type;
        row.value = value;
        return gguf::fileTypeText({row});
    };
    QCOMPARE(text("u32", "15"), std::string("Q4_K_M (general.file_type 15)"));
    QCOMPARE(text("i32", "0"), std::string("ALL_F32 (general.file_type 0)"));
    QCOMPARE(text("u32", "32"), std::string("BF16 (general.file_type 32)"));
    QCOMPARE(text("u64", "39"), std::string("NVFP4 (general.file_type 39)"));
    QCOMPARE(text("u32", "40"),
             std::string("40 (general.file_type, a type llama.cpp does not name for certain)"));
    QCOMPARE(text("i32", "-1"), std::string("-1 (general.file_type)"));
    QCOMPARE(text("str", "15"), std::string("15 (general.file_type)")); // not a number stored
    QCOMPARE(text("f32", "15"), std::string("15 (general.file_type)"));
    QCOMPARE(gguf::fileTypeText({}), std::string());
    // The name alone (info --json's file_type): none where the text has none.
    const auto name = [](const std::string& type, const std::string& value) {
        MetadataRow row;
        row.key = "general.file_type";
        row.type = type;
        row.value = value;
        return std::string(gguf::fileTypeName({row}));
    };
    QCOMPARE(name("u32", "15"), std::string("Q4_K_M"));
    QCOMPARE(name("u32", "40"), std::string());
    QCOMPARE(name("str", "15"), std::string());
    QCOMPARE(std::string(gguf::fileTypeName({})), std::string());
}

QTEST_APPLESS_MAIN(TestGguf)
#include "tst_gguf.moc"
