// ckptscope::Document: format detection by content, documents over memory,
// lazy value reads (unaligned, bounds-checked, past 4 GiB), warnings and
// files that change under the reader.
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/io/bytesource.h"

#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <map>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace ckptscope;
using testsupport::guarded;
using testsupport::qstr;
using testsupport::str;

using testsupport::putU32;
using testsupport::putU64;

namespace {

void putF32(std::string& out, float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    putU32(out, bits);
}

std::shared_ptr<const ByteSource> memory(const std::string& bytes, const std::string& name) {
    return std::make_shared<MemorySource>(std::vector<uint8_t>(bytes.begin(), bytes.end()), name);
}

// Opens and returns the OpenError message ("" when it opened).
std::string openError(const std::shared_ptr<const ByteSource>& source) {
    try {
        Document::open(source);
    } catch (const OpenError& e) {
        return e.what();
    }
    return {};
}

// "FILE: message", or "FILE:LINE:COLUMN: message" for JSON positions.
bool beginsWithFile(const std::string& msg, const std::string& file) {
    if (msg.rfind(file + ": ", 0) == 0)
        return true;
    static const QRegularExpression position(QStringLiteral("^:\\d+:\\d+: "));
    return msg.rfind(file, 0) == 0 && qstr(msg.substr(file.size())).contains(position);
}

bool sameBits(const float* a, const float* b, size_t n) {
    return std::memcmp(a, b, n * 4) == 0;
}

// The smallest gradient checkpoint the format allows, written by hand.
const std::string kMinimalGradient =
    R"({"graph":{"nodes":{},"edges":[]},"step":3,"loss_cid":null,"optimizer_state":{},"timestamp":5})";

// Values that exercise the bit patterns: NaN, ±Inf, -0, denormals, extremes.
std::vector<float> patternValues(size_t n, float seed) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = seed + float(i) * 0.25f - float(i % 7) * 1.5f;
    if (n > 6) {
        v[1] = std::numeric_limits<float>::quiet_NaN();
        v[2] = std::numeric_limits<float>::infinity();
        v[3] = -std::numeric_limits<float>::infinity();
        v[4] = -0.0f;
        v[5] = std::numeric_limits<float>::denorm_min();
        v[6] = std::numeric_limits<float>::max();
    }
    return v;
}

} // namespace

class TestDocument : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void detectsOxckByMagic();
    void detectsJsonAfterWhitespaceAndBom_data();
    void detectsJsonAfterWhitespaceAndBom();
    void refusesGarbageSayingWhatWasFound_data();
    void refusesGarbageSayingWhatWasFound();
    void refusesEmptyFile();
    void refusesMissingFileAndFolder();
    void openErrorParts();
    void deepJsonNestingFailsCleanly();
    void documentOverMemorySource();
    void readValuesAtUnalignedOffsets();
    void readValuesOutOfRangeThrows();
    void warningsCarryTensorIndex();
    void trailingBytesWarning();
    void cleanFileHasNoWarnings();
    void truncatedAfterOpenIsSourceChanged();
    void readsPast4GiBInSparseFile();
    void metadataRowsSayWhatTheyHold();
    void graphSplitIsComputedOnceAtOpen();

private:
    void detectsOxckByMagicImpl();
    void detectsJsonAfterWhitespaceAndBomImpl();
    void refusesGarbageSayingWhatWasFoundImpl();
    void refusesEmptyFileImpl();
    void refusesMissingFileAndFolderImpl();
    void openErrorPartsImpl();
    void deepJsonNestingFailsCleanlyImpl();
    void documentOverMemorySourceImpl();
    void readValuesAtUnalignedOffsetsImpl();
    void readValuesOutOfRangeThrowsImpl();
    void warningsCarryTensorIndexImpl();
    void trailingBytesWarningImpl();
    void cleanFileHasNoWarningsImpl();
    void truncatedAfterOpenIsSourceChangedImpl();
    void readsPast4GiBInSparseFileImpl();
    void metadataRowsSayWhatTheyHoldImpl();
    void graphSplitIsComputedOnceAtOpenImpl();
};

// ---------------------------------------------------------------- detection

void TestDocument::detectsOxckByMagicImpl() {
    Checkpoint ck;
    ck.addTensor({"w", {2}, {1.0f, 2.0f}});
    const std::string bytes = ck.encode();
    QCOMPARE(detectFormat(*memory(bytes, "m")).format, Format::Oxck);
    // The name does not matter, only the content.
    const auto doc = Document::open(memory(bytes, "looks_like.json"));
    QCOMPARE(doc->format(), Format::Oxck);
    QCOMPARE(qstr(formatName(doc->format())), QStringLiteral("oxck"));
    QCOMPARE(doc->tensors().size(), size_t(1));

    // JSON content in a file named .oxck is a gradient checkpoint.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("really_json.oxck"));
    testsupport::writeFile(path, kMinimalGradient);
    const auto g = Document::open(str(path));
    QCOMPARE(g->format(), Format::Gradient);
    QVERIFY(g->gradient());
}

void TestDocument::detectsJsonAfterWhitespaceAndBom_data() {
    QTest::addColumn<QByteArray>("prefix");
    QTest::newRow("none") << QByteArray();
    QTest::newRow("spaces") << QByteArray("   ");
    QTest::newRow("newlines-tabs-cr") << QByteArray("\r\n\t \n");
    QTest::newRow("bom") << QByteArray("\xEF\xBB\xBF");
    QTest::newRow("bom-then-whitespace") << QByteArray("\xEF\xBB\xBF\n  \t");
}

void TestDocument::detectsJsonAfterWhitespaceAndBomImpl() {
    QFETCH(QByteArray, prefix);
    const std::string bytes = prefix.toStdString() + kMinimalGradient;
    QCOMPARE(detectFormat(*memory(bytes, "g")).format, Format::Gradient);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("grad.bin"));
    testsupport::writeFile(path, bytes);
    std::shared_ptr<const Document> doc;
    try {
        doc = Document::open(str(path));
    } catch (const std::exception& e) {
        QFAIL(e.what());
    }
    QCOMPARE(doc->format(), Format::Gradient);
    QCOMPARE(qstr(formatName(doc->format())), QStringLiteral("gradient"));
    QVERIFY(doc->gradient());
    QCOMPARE(quint64(doc->gradient()->step), quint64(3));
    QCOMPARE(quint64(doc->gradient()->timestamp), quint64(5));
    QVERIFY(!doc->gradient()->lossCid);
    QCOMPARE(doc->fileSize(), quint64(bytes.size()));
    QVERIFY(doc->tensors().empty());
}

void TestDocument::refusesGarbageSayingWhatWasFound_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("shown"); // what the message must quote
    QTest::newRow("text") << QByteArray("hello world") << QStringLiteral("hell");
    QTest::newRow("png") << QByteArray("\x89PNG\r\n\x1a\n", 8) << QStringLiteral("PNG");
    QTest::newRow("gif") << QByteArray("GIF89a....") << QStringLiteral("GIF8");
    QTest::newRow("array") << QByteArray("[1,2,3]") << QStringLiteral("[1,2");
    QTest::newRow("short-magic") << QByteArray("OXC") << QStringLiteral("OXC");
    QTest::newRow("lowercase-magic") << QByteArray("oxck\x01\0\0\0", 8) << QStringLiteral("oxck");
    QTest::newRow("bom-then-garbage") << QByteArray("\xEF\xBB\xBFnope") << QString();
    QTest::newRow("whitespace-only") << QByteArray(" \n\t ") << QString();
}

void TestDocument::refusesGarbageSayingWhatWasFoundImpl() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, shown);
    const auto source = memory(bytes.toStdString(), "mem:garbage");
    QVERIFY_THROWS_EXCEPTION(OpenError, detectFormat(*source));
    const std::string msg = openError(source);
    QVERIFY2(!msg.empty(), "garbage was opened");
    QVERIFY2(msg.rfind("mem:garbage: ", 0) == 0, msg.c_str());
    if (!shown.isEmpty())
        QVERIFY2(qstr(msg).contains(shown), msg.c_str());
}

void TestDocument::refusesEmptyFileImpl() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("empty.oxck"));
    testsupport::writeFile(path, std::string());
    try {
        Document::open(str(path));
        QFAIL("an empty file was opened");
    } catch (const OpenError& e) {
        const QString msg = qstr(e.what());
        QVERIFY2(msg.startsWith(path + QStringLiteral(": ")), e.what());
        QVERIFY2(msg.contains(QStringLiteral("empty")), e.what());
    }
    QVERIFY_THROWS_EXCEPTION(OpenError, Document::open(memory(std::string(), "mem:empty")));
}

void TestDocument::refusesMissingFileAndFolderImpl() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString missing = dir.filePath(QStringLiteral("no_such_file.oxck"));
    try {
        Document::open(str(missing));
        QFAIL("a missing file was opened");
    } catch (const OpenError& e) {
        QVERIFY2(qstr(e.what()).startsWith(missing + QStringLiteral(": ")), e.what());
        QCOMPARE(qstr(e.file()), missing);
    }
    try {
        Document::open(str(dir.path()));
        QFAIL("a folder was opened");
    } catch (const OpenError& e) {
        QVERIFY2(qstr(e.what()).startsWith(dir.path() + QStringLiteral(": ")), e.what());
    }
}

void TestDocument::openErrorPartsImpl() {
    const OpenError plain("a/b.oxck", "something broke");
    QCOMPARE(qstr(plain.what()), QStringLiteral("a/b.oxck: something broke"));
    QCOMPARE(qstr(plain.file()), QStringLiteral("a/b.oxck"));
    QCOMPARE(qstr(plain.detail()), QStringLiteral("something broke"));
    // A message that already names the file is not prefixed twice.
    const OpenError named("a/b.oxck", "a/b.oxck: byte 4: bad");
    QCOMPARE(qstr(named.what()), QStringLiteral("a/b.oxck: byte 4: bad"));
    QCOMPARE(qstr(named.detail()), QStringLiteral("byte 4: bad"));
    // A JSON position right after the file name ("FILE:12:5: …") is kept in
    // what() and spelled out in detail().
    const OpenError json("g.json", "g.json:12:5: expected a value");
    QCOMPARE(qstr(json.what()), QStringLiteral("g.json:12:5: expected a value"));
    const QString detail = qstr(json.detail());
    QVERIFY2(detail.contains(QStringLiteral("12")) && detail.contains(QStringLiteral("5")) &&
                 detail.endsWith(QStringLiteral("expected a value")) &&
                 !detail.startsWith(QLatin1Char(':')) && !detail.startsWith(QLatin1Char(' ')),
             qPrintable(detail));
}

void TestDocument::deepJsonNestingFailsCleanlyImpl() {
    // Nested far deeper than any real file: refused with a message, no stack
    // overflow (the test would crash).
    const size_t depth = 200000;
    const std::string arrays =
        "{\"graph\":" + std::string(depth, '[') + std::string(depth, ']') + "}";
    const std::string objects = "{\"graph\":{\"nodes\":{\"x\":" + std::string(depth, '{');
    for (const std::string& bytes : {arrays, objects}) {
        const std::string msg = openError(memory(bytes, "mem:deep"));
        QVERIFY2(!msg.empty(), "deeply nested JSON was opened");
        QVERIFY2(beginsWithFile(msg, "mem:deep"), msg.c_str());
    }
}

// ---------------------------------------------------------------- values

void TestDocument::documentOverMemorySourceImpl() {
    Checkpoint ck;
    ck.setMetadata("zeta", "last");
    ck.setMetadata("alpha", "first\nline");
    ck.addTensor({"a", {3}, {1.0f, -2.0f, 3.5f}});
    ck.addTensor({"b.weight", {2, 2}, {0.0f, 0.5f, -0.5f, 8.0f}});
    const std::string bytes = ck.encode();
    const auto doc = Document::open(memory(bytes, "memory:ck"));
    QCOMPARE(qstr(doc->path()), QStringLiteral("memory:ck"));
    QCOMPARE(doc->fileSize(), quint64(bytes.size()));
    QCOMPARE(doc->version(), 1u);
    QCOMPARE(quint64(doc->flags()), quint64(0));
    QCOMPARE(doc->metadata().size(), size_t(2));
    QCOMPARE(qstr(doc->metadata()[0].first), QStringLiteral("alpha"));
    QCOMPARE(qstr(doc->metadata()[0].second), QStringLiteral("first\nline"));
    QCOMPARE(qstr(doc->metadata()[1].first), QStringLiteral("zeta"));
    QCOMPARE(quint64(doc->numParams()), quint64(7));
    QCOMPARE(quint64(doc->totalBytes()), quint64(28));
    QCOMPARE(doc->tensors().size(), size_t(2));
    QCOMPARE(qstr(doc->tensors()[1].name), QStringLiteral("b.weight"));
    QVERIFY(doc->tensors()[1].shape == (std::vector<uint64_t>{2, 2}));
    QVERIFY(doc->warnings().empty());
    for (size_t i = 0; i < ck.tensors.size(); ++i) {
        const auto& want = ck.tensors[i].data;
        std::vector<float> got(want.size());
        doc->readValues(i, 0, got.size(), got.data());
        QVERIFY(sameBits(got.data(), want.data(), want.size()));
    }

    // Errors over memory name the source.
    std::string cut = bytes.substr(0, bytes.size() - 3);
    const std::string msg = openError(memory(cut, "memory:cut"));
    QVERIFY2(msg.rfind("memory:cut: ", 0) == 0, msg.c_str());
    QVERIFY2(msg.find("byte ") != std::string::npos, msg.c_str());
}

void TestDocument::readValuesAtUnalignedOffsetsImpl() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("unaligned.oxck"));
    // Names of 1..4 bytes and odd metadata put the values at every offset
    // modulo 4.
    Checkpoint ck;
    ck.setMetadata("k", "odd");
    ck.addTensor({"a", {37}, patternValues(37, 1.0f)});
    ck.addTensor({"bb", {5, 7}, patternValues(35, -3.0f)});
    ck.addTensor({"ccc", {1000}, patternValues(1000, 0.125f)});
    ck.addTensor({"dddd", {3}, patternValues(3, 42.0f)});
    ck.save(str(path));

    const auto doc = Document::open(str(path));
    QCOMPARE(doc->tensors().size(), ck.tensors.size());
    std::vector<bool> residues(4, false);
    const std::string file = testsupport::readFile(path);
    for (size_t i = 0; i < ck.tensors.size(); ++i) {
        const TensorEntry& t = doc->tensors()[i];
        residues[t.dataOffset % 4] = true;
        // The u64 before the values is their count.
        uint64_t stored = 0;
        std::memcpy(&stored, file.data() + t.dataOffset - 8, 8);
        QCOMPARE(quint64(stored), quint64(ck.tensors[i].data.size()));
        QCOMPARE(quint64(t.dataLen), quint64(ck.tensors[i].data.size()));
    }
    int distinct = 0;
    for (bool r : residues)
        distinct += r;
    QVERIFY2(distinct >= 3, "test setup: values should sit at several alignments");

    for (size_t i = 0; i < ck.tensors.size(); ++i) {
        const std::vector<float>& want = ck.tensors[i].data;
        const uint64_t n = want.size();
        std::vector<float> all(n);
        doc->readValues(i, 0, n, all.data());
        QVERIFY2(sameBits(all.data(), want.data(), n), qPrintable(QString::number(i)));
        // Sub-ranges starting at every element offset of a short window.
        for (uint64_t first = 0; first < std::min<uint64_t>(n, 9); ++first) {
            for (uint64_t count : {uint64_t(0), uint64_t(1), uint64_t(2), n - first}) {
                if (count > n - first)
                    continue;
                std::vector<float> part(count + 1, 12345.0f);
                doc->readValues(i, first, count, part.data());
                QVERIFY(sameBits(part.data(), want.data() + first, count));
                QCOMPARE(part[count], 12345.0f); // nothing written past count
            }
        }
        if (n > 0) {
            float last = 0;
            doc->readValues(i, n - 1, 1, &last);
            QVERIFY(sameBits(&last, &want[n - 1], 1));
        }
    }
}

void TestDocument::readValuesOutOfRangeThrowsImpl() {
    Checkpoint ck;
    ck.addTensor({"t", {4}, {1, 2, 3, 4}});
    ck.addTensor({"empty", {0}, {}});
    const auto doc = Document::open(memory(ck.encode(), "mem:range"));
    float buf[8] = {};
    QVERIFY_THROWS_EXCEPTION(CheckpointError, doc->readValues(0, 0, 5, buf));
    QVERIFY_THROWS_EXCEPTION(CheckpointError, doc->readValues(0, 3, 2, buf));
    QVERIFY_THROWS_EXCEPTION(CheckpointError, doc->readValues(0, 5, 0, buf));
    QVERIFY_THROWS_EXCEPTION(CheckpointError, doc->readValues(0, 1, UINT64_MAX, buf));
    QVERIFY_THROWS_EXCEPTION(CheckpointError, doc->readValues(0, UINT64_MAX, 2, buf));
    QVERIFY_THROWS_EXCEPTION(CheckpointError, doc->readValues(1, 0, 1, buf));
    QVERIFY_THROWS_EXCEPTION(std::exception, doc->readValues(2, 0, 1, buf)); // no tensor 2
    // In range, including the empty tail, is fine.
    doc->readValues(0, 4, 0, buf);
    doc->readValues(1, 0, 0, buf);
    doc->readValues(0, 2, 2, buf);
    QCOMPARE(buf[0], 3.0f);
    QCOMPARE(buf[1], 4.0f);
}

// ---------------------------------------------------------------- warnings

void TestDocument::warningsCarryTensorIndexImpl() {
    Checkpoint ck;
    ck.addTensor({"a", {2}, {1, 2}});                                           // 0 fine
    ck.addTensor({"mismatch", {2, 3}, {1, 2, 3, 4}});                           // 1 mismatch
    ck.addTensor({"b", {1}, {5}});                                              // 2 fine
    ck.addTensor({"a", {1}, {9}});                                              // 3 duplicate
    ck.addTensor({"overflow", {uint64_t(1) << 33, uint64_t(1) << 33}, {}});     // 4 overflow
    ck.addTensor({"zero_dim_huge", {UINT64_MAX, UINT64_MAX, 0}, {}});           // 5 fine: 0
    ck.addTensor({"max_ok", {uint64_t(1) << 32, (uint64_t(1) << 32) - 1}, {}}); // 6 mismatch
    const auto doc = Document::open(memory(ck.encode(), "mem:warn"));

    QCOMPARE(doc->tensors().size(), size_t(7));
    QVERIFY(!doc->tensors()[4].elementCount.has_value());
    QVERIFY(doc->tensors()[5].elementCount.has_value());
    QCOMPARE(quint64(*doc->tensors()[5].elementCount), quint64(0));
    QCOMPARE(quint64(*doc->tensors()[6].elementCount),
             quint64((uint64_t(1) << 32) * ((uint64_t(1) << 32) - 1)));
    QCOMPARE(quint64(*doc->tensors()[1].elementCount), quint64(6));
    QCOMPARE(quint64(doc->tensors()[1].dataLen), quint64(4));
    // With an overflowing tensor the total saturates rather than wraps.
    QCOMPARE(quint64(doc->numParams()), quint64(UINT64_MAX));
    QCOMPARE(quint64(doc->totalBytes()), quint64(UINT64_MAX));

    std::map<size_t, int> perTensor;
    for (const IndexWarning& w : doc->warnings()) {
        QVERIFY2(w.tensor.has_value(), w.message.c_str());
        QVERIFY2(!w.message.empty(), "empty warning");
        ++perTensor[*w.tensor];
    }
    const std::map<size_t, int> want{{1, 1}, {3, 1}, {4, 1}, {6, 1}};
    QVERIFY2(perTensor == want,
             qPrintable(QStringLiteral("warnings on %1 tensors").arg(perTensor.size())));
    for (const IndexWarning& w : doc->warnings()) {
        if (*w.tensor == 4)
            QVERIFY2(qstr(w.message).contains(QStringLiteral("overflow")), w.message.c_str());
    }

    // The same without the overflow: the sum is exact.
    Checkpoint small;
    small.addTensor({"x", {2, 3}, {1}});
    small.addTensor({"x", {4}, {1, 2, 3, 4}});
    const auto doc2 = Document::open(memory(small.encode(), "mem:w2"));
    QCOMPARE(quint64(doc2->numParams()), quint64(10));
    QCOMPARE(quint64(doc2->totalBytes()), quint64(40));
    std::map<size_t, int> got2;
    for (const IndexWarning& w : doc2->warnings())
        ++got2[w.tensor.value_or(SIZE_MAX)];
    QVERIFY((got2 == std::map<size_t, int>{{0, 1}, {1, 1}}));
}

void TestDocument::trailingBytesWarningImpl() {
    Checkpoint ck;
    ck.addTensor({"t", {2}, {1, 2}});
    const std::string bytes = ck.encode();
    const auto doc = Document::open(memory(bytes + "1234567", "mem:trail"));
    QCOMPARE(doc->tensors().size(), size_t(1));
    QCOMPARE(doc->warnings().size(), size_t(1));
    const IndexWarning& w = doc->warnings()[0];
    QVERIFY2(!w.tensor.has_value(), "trailing bytes are about the file, not a tensor");
    // Says how many bytes (7) are ignored.
    QVERIFY2(qstr(w.message).contains(QRegularExpression(QStringLiteral("\\b7\\b"))),
             w.message.c_str());
    // The values are still read correctly.
    float v[2];
    doc->readValues(0, 0, 2, v);
    QCOMPARE(v[0], 1.0f);
    QCOMPARE(v[1], 2.0f);
}

void TestDocument::cleanFileHasNoWarningsImpl() {
    Checkpoint ck;
    ck.setMetadata("k", "v");
    ck.addTensor({"w", {2, 2}, {1, 2, 3, 4}});
    ck.addTensor({"b", {2}, {1, 2}});
    ck.addTensor({"none", {0}, {}});
    const auto doc = Document::open(memory(ck.encode(), "mem:clean"));
    QVERIFY(doc->warnings().empty());
}

// ---------------------------------------------------------------- files changing

void TestDocument::truncatedAfterOpenIsSourceChangedImpl() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("shrinks.oxck"));
    Checkpoint ck;
    ck.addTensor({"first", {100}, patternValues(100, 0.5f)});
    ck.addTensor({"second", {20000}, patternValues(20000, 2.0f)});
    ck.save(str(path));

    const auto doc = Document::open(str(path));
    QCOMPARE(doc->tensors().size(), size_t(2));
    const TensorEntry second = doc->tensors()[1];
    // Training jobs rewrite in place: truncate below the second tensor's data.
    QVERIFY(QFile::resize(path, qint64(second.dataOffset + 40)));

    std::vector<float> buf(second.dataLen);
    try {
        doc->readValues(1, 0, second.dataLen, buf.data());
        QFAIL("reading values of a truncated file succeeded");
    } catch (const SourceChangedError& e) {
        QVERIFY2(qstr(e.what()).contains(QStringLiteral("changed on disk")), e.what());
        QVERIFY2(qstr(e.what()).startsWith(path), e.what());
    }
    try {
        doc->readValues(1, 1000, 10, buf.data());
        QFAIL("reading values past the new end succeeded");
    } catch (const SourceChangedError& e) {
        QVERIFY2(qstr(e.what()).contains(QStringLiteral("changed on disk")), e.what());
    }
    // Values before the cut are refused too: after a change, old and new
    // bytes cannot be told apart (FileSource checks size/mtime after reads).
    std::vector<float> head(100);
    QVERIFY_THROWS_EXCEPTION(SourceChangedError, doc->readValues(0, 0, 100, head.data()));

    // Truncated to nothing.
    QVERIFY(QFile::resize(path, 0));
    QVERIFY_THROWS_EXCEPTION(SourceChangedError, doc->readValues(0, 0, 1, head.data()));
}

void TestDocument::readsPast4GiBInSparseFileImpl() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("huge_sparse.oxck"));

    // Header and a 4.5 GiB tensor of zeros that is never written (a hole),
    // then a small tensor whose values sit past 2^32. Written by hand.
    const uint64_t bigCount = (uint64_t(9) << 30) / 2 / 4; // 4.5 GiB of f32
    std::string head = "OXCK";
    putU32(head, 1);
    putU64(head, 0);
    putU64(head, 2);
    putU32(head, 2);
    head += "{}";
    putU32(head, 3);
    head += "big";
    putU32(head, 1);
    putU64(head, bigCount);
    putU64(head, bigCount);
    const uint64_t bigOffset = head.size();
    const uint64_t tailOffset = bigOffset + bigCount * 4;
    const std::vector<float> smallValues{1.5f, -2.25f, 3.0e30f, -0.0f,
                                         std::numeric_limits<float>::quiet_NaN()};
    std::string tail;
    putU32(tail, 5);
    tail += "small";
    putU32(tail, 1);
    putU64(tail, smallValues.size());
    putU64(tail, smallValues.size());
    const uint64_t smallOffset = tailOffset + tail.size();
    for (float f : smallValues)
        putF32(tail, f);
    const uint64_t total = tailOffset + tail.size();
    QVERIFY(smallOffset > (uint64_t(1) << 32));

    const int fd = ::open(qPrintable(path), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    QVERIFY2(fd >= 0, std::strerror(errno));
    bool sparse = ::ftruncate(fd, off_t(total)) == 0;
    struct stat st {};
    if (sparse)
        sparse = ::fstat(fd, &st) == 0 && uint64_t(st.st_blocks) * 512 < (uint64_t(64) << 20);
    if (sparse)
        sparse = ::pwrite(fd, head.data(), head.size(), 0) == ssize_t(head.size()) &&
                 ::pwrite(fd, tail.data(), tail.size(), off_t(tailOffset)) == ssize_t(tail.size());
    if (sparse)
        sparse = ::fstat(fd, &st) == 0 && uint64_t(st.st_blocks) * 512 < (uint64_t(64) << 20);
    ::close(fd);
    if (!sparse) {
        QFile::remove(path);
        QSKIP("the filesystem does not keep a 4.5 GiB sparse file sparse");
    }

    const auto doc = Document::open(str(path));
    QCOMPARE(doc->fileSize(), quint64(total));
    QCOMPARE(doc->tensors().size(), size_t(2));
    QVERIFY(doc->warnings().empty());
    const TensorEntry& big = doc->tensors()[0];
    const TensorEntry& small = doc->tensors()[1];
    QCOMPARE(quint64(big.dataLen), quint64(bigCount));
    QCOMPARE(quint64(big.dataOffset), quint64(bigOffset));
    QCOMPARE(qstr(small.name), QStringLiteral("small"));
    QCOMPARE(quint64(small.headerOffset), quint64(tailOffset));
    QCOMPARE(quint64(small.dataOffset), quint64(smallOffset));
    QCOMPARE(quint64(small.dataLen), quint64(smallValues.size()));
    QCOMPARE(quint64(doc->numParams()), quint64(bigCount + smallValues.size()));

    std::vector<float> got(smallValues.size());
    doc->readValues(1, 0, got.size(), got.data());
    QVERIFY(sameBits(got.data(), smallValues.data(), got.size()));
    float two[2] = {};
    doc->readValues(1, 2, 2, two);
    QVERIFY(sameBits(two, smallValues.data() + 2, 2));

    // Inside the hole, on both sides of 2^32 bytes: zeros.
    const uint64_t across4GiB = ((uint64_t(1) << 32) - bigOffset) / 4 - 2;
    float zeros[4] = {1, 1, 1, 1};
    doc->readValues(0, across4GiB, 4, zeros);
    for (float z : zeros)
        QCOMPARE(z, 0.0f);
    float lastBig[3] = {1, 1, 1};
    doc->readValues(0, bigCount - 3, 3, lastBig);
    for (float z : lastBig)
        QCOMPARE(z, 0.0f);
    QVERIFY_THROWS_EXCEPTION(CheckpointError, doc->readValues(0, bigCount - 1, 2, lastBig));
}

// Slots: the checks, guarded against stray exceptions.
void TestDocument::detectsOxckByMagic() {
    guarded([this] { detectsOxckByMagicImpl(); });
}
void TestDocument::detectsJsonAfterWhitespaceAndBom() {
    guarded([this] { detectsJsonAfterWhitespaceAndBomImpl(); });
}
void TestDocument::refusesGarbageSayingWhatWasFound() {
    guarded([this] { refusesGarbageSayingWhatWasFoundImpl(); });
}
void TestDocument::refusesEmptyFile() {
    guarded([this] { refusesEmptyFileImpl(); });
}
void TestDocument::refusesMissingFileAndFolder() {
    guarded([this] { refusesMissingFileAndFolderImpl(); });
}
void TestDocument::openErrorParts() {
    guarded([this] { openErrorPartsImpl(); });
}
void TestDocument::deepJsonNestingFailsCleanly() {
    guarded([this] { deepJsonNestingFailsCleanlyImpl(); });
}
void TestDocument::documentOverMemorySource() {
    guarded([this] { documentOverMemorySourceImpl(); });
}
void TestDocument::readValuesAtUnalignedOffsets() {
    guarded([this] { readValuesAtUnalignedOffsetsImpl(); });
}
void TestDocument::readValuesOutOfRangeThrows() {
    guarded([this] { readValuesOutOfRangeThrowsImpl(); });
}
void TestDocument::warningsCarryTensorIndex() {
    guarded([this] { warningsCarryTensorIndexImpl(); });
}
void TestDocument::trailingBytesWarning() {
    guarded([this] { trailingBytesWarningImpl(); });
}
void TestDocument::cleanFileHasNoWarnings() {
    guarded([this] { cleanFileHasNoWarningsImpl(); });
}
void TestDocument::truncatedAfterOpenIsSourceChanged() {
    guarded([this] { truncatedAfterOpenIsSourceChangedImpl(); });
}
void TestDocument::readsPast4GiBInSparseFile() {
    guarded([this] { readsPast4GiBInSparseFileImpl(); });
}

void TestDocument::metadataRowsSayWhatTheyHold() {
    guarded([this] { metadataRowsSayWhatTheyHoldImpl(); });
}

// ---------------------------------------------------------------- metadata kinds

void TestDocument::metadataRowsSayWhatTheyHoldImpl() {
    // Gradient summary: the timestamp is Unix seconds, counts are integers.
    const auto g = Document::open(memory(kMinimalGradient, "memory:g.json"));
    const auto& rows = g->metadataRows();
    QCOMPARE(rows.size(), g->metadata().size());
    std::map<std::string, MetadataKind> kinds;
    for (size_t i = 0; i < rows.size(); ++i) {
        QCOMPARE(qstr(rows[i].key), qstr(g->metadata()[i].first));
        QCOMPARE(qstr(rows[i].value), qstr(g->metadata()[i].second));
        kinds[rows[i].key] = rows[i].kind;
    }
    QCOMPARE(int(kinds.at("timestamp")), int(MetadataKind::Timestamp));
    QCOMPARE(int(kinds.at("step")), int(MetadataKind::Integer));
    QCOMPARE(int(kinds.at("node_count")), int(MetadataKind::Integer));
    QCOMPARE(int(kinds.at("loss_cid")), int(MetadataKind::Text));
    QCOMPARE(qstr(g->metadataRows()[2].value), QStringLiteral("5"));

    // OXCK metadata is text, whatever its key: a "timestamp" there is the
    // writer's own string, not a number we may reformat.
    Checkpoint ck;
    ck.setMetadata("timestamp", "yesterday");
    ck.addTensor({"w", {1}, {1.0f}});
    const auto o = Document::open(memory(ck.encode(), "memory:o"));
    QCOMPARE(o->metadataRows().size(), size_t(1));
    QCOMPARE(int(o->metadataRows()[0].kind), int(MetadataKind::Text));
    QCOMPARE(qstr(o->metadataRows()[0].value), QStringLiteral("yesterday"));
}

void TestDocument::graphSplitIsComputedOnceAtOpen() {
    guarded([this] { graphSplitIsComputedOnceAtOpenImpl(); });
}

void TestDocument::graphSplitIsComputedOnceAtOpenImpl() {
    // a -> b -> c in order; d <-> e a cycle, f behind it.
    GradientCheckpoint g;
    for (const char* id : {"a", "b", "c", "d", "e", "f"})
        g.graph.insertNode(ComputationNode(id, "op", {}));
    g.graph.addEdge("a", "b");
    g.graph.addEdge("b", "c");
    g.graph.addEdge("d", "e");
    g.graph.addEdge("e", "d");
    g.graph.addEdge("e", "f");
    const auto doc = Document::open(memory(g.toJson(), "memory:cycle.json"));
    const auto& split = doc->graphSplit();
    const auto direct = doc->gradient()->graph.topologicalSplit();
    QCOMPARE(split.order, direct.order);
    QCOMPARE(split.cycle, direct.cycle);
    QCOMPARE(split.order, (std::vector<std::string>{"a", "b", "c"}));
    QCOMPARE(split.cycle, (std::vector<std::string>{"d", "e", "f"}));
    // The cycle warning counts the same nodes.
    bool warned = false;
    for (const auto& w : doc->warnings())
        warned = warned || w.message.rfind("3 nodes are on or behind a cycle", 0) == 0;
    QVERIFY(warned);

    // A tensor file has no graph.
    Checkpoint ck;
    ck.addTensor({"w", {1}, {1.0f}});
    const auto o = Document::open(memory(ck.encode(), "memory:o"));
    QVERIFY(o->graphSplit().order.empty());
    QVERIFY(o->graphSplit().cycle.empty());
}

QTEST_GUILESS_MAIN(TestDocument)
#include "tst_document.moc"
