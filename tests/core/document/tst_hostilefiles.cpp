// Hostile files: deep nesting, huge length claims and overflowing shapes,
// read in a child process whose address space may grow by 1 GiB at most, so
// an allocation sized by what a file merely claims fails the test.
#include "clirunner.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/stats/tensorstats.h"

#include <QTemporaryDir>

#include <QTest>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

using namespace ckptscope;
using namespace testsupport;

namespace {

// The smallest gradient checkpoint; `extra` is spliced in as further fields.
std::string minimalGradient(const std::string& extra = {}, const std::string& nodes = {}) {
    return "{\"graph\":{\"nodes\":{" + nodes + "},\"edges\":[]" +
           "},\"step\":3,\"loss_cid\":null,\"optimizer_state\":{},\"timestamp\":5" + extra + "}";
}

// Opens the file as a Document and reads a little of every tensor; returns
// "ok: N tensors" or "error: MESSAGE".
std::string openAndRead(const std::string& path) {
    try {
        const auto doc = Document::open(path);
        float v[16];
        for (size_t i = 0; i < doc->tensors().size(); ++i)
            doc->readValues(i, 0, std::min<uint64_t>(doc->tensors()[i].dataLen, 16), v);
        return "ok: " + std::to_string(doc->tensors().size()) + " tensors";
    } catch (const OpenError& e) {
        return std::string("error: ") + e.what();
    }
}

} // namespace

class TestHostileFiles : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void memoryCapIsEnforced();
    void deepNestingInUnknownField_data();
    void deepNestingInUnknownField();
    void moderateNestingInUnknownFieldIsIgnored();
    void hugeMetadataLengthClaim_data();
    void hugeMetadataLengthClaim();
    void hugeMetadataBlockOfZerosInSparseFile();
    void nameLengthPastTheEnd_data();
    void nameLengthPastTheEnd();
    void shapeProductOverflows();
    void specialFilesAreRefusedAtOnce_data();
    void specialFilesAreRefusedAtOnce();
};

void TestHostileFiles::memoryCapIsEnforced() {
    // The cap the hostile-file checks rely on: a 2 GiB allocation fails in
    // the child (bad_alloc, or an abort under AddressSanitizer).
    const ChildResult r = withMemoryCap([] {
        std::vector<char> big(size_t(2) << 30, 1);
        return "allocated " + std::to_string(big.size());
    });
    bool sanitizer = false; // AddressSanitizer reports out-of-memory and exits 1
#if defined(CKPTSCOPE_SANITIZED)
    sanitizer = true;
#endif
    const bool failed = r.signalled ||
                        (r.code == 3 && qstr(r.text).contains(QStringLiteral("bad_alloc"))) ||
                        (sanitizer && r.code == 1 && r.text.empty());
    QVERIFY2(failed, qPrintable(r.describe()));
}

void TestHostileFiles::deepNestingInUnknownField_data() {
    QTest::addColumn<QString>("where");
    QTest::newRow("top-level field, arrays") << QStringLiteral("top-arrays");
    QTest::newRow("top-level field, objects") << QStringLiteral("top-objects");
    QTest::newRow("graph field") << QStringLiteral("graph");
    QTest::newRow("node field") << QStringLiteral("node");
}

void TestHostileFiles::deepNestingInUnknownField() {
    // 100 000 levels in a field the reader ignores: refused with the file,
    // line and column, without a stack overflow or memory sized by depth.
    QFETCH(QString, where);
    const size_t depth = 100000;
    std::string deep;
    if (where == QStringLiteral("top-objects")) {
        for (size_t i = 0; i < depth; ++i)
            deep += "{\"a\":";
        deep += "0" + std::string(depth, '}');
    } else {
        deep = std::string(depth, '[') + std::string(depth, ']');
    }
    std::string json;
    if (where.startsWith(QStringLiteral("top")))
        json = minimalGradient(",\"extra\":" + deep);
    else if (where == QStringLiteral("graph"))
        json = "{\"graph\":{\"extra\":" + deep +
               ",\"nodes\":{},\"edges\":[]},\"step\":3,\"loss_cid\":null,"
               "\"optimizer_state\":{},\"timestamp\":5}";
    else
        json = minimalGradient({}, "\"n1\":{\"id\":\"n1\",\"op\":\"add\",\"input_cids\":[],"
                                   "\"output_cid\":null,\"gradient_cid\":null,\"metadata\":{},"
                                   "\"extra\":" +
                                       deep + "}");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("deep.json"));
    testsupport::writeFile(path, json);

    const ChildResult r = withMemoryCap([&] {
        std::string out = openAndRead(str(path)) + "\n";
        try {
            GradientCheckpoint::load(str(path));
            out += "loaded";
        } catch (const GradientError& e) {
            out += std::string("error: ") + e.what();
        }
        return out;
    });
    QVERIFY2(!r.signalled && r.code == 0, qPrintable(r.describe()));
    const QStringList lines = qstr(r.text).split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), 2);
    for (const QString& line : lines) {
        QVERIFY2(line.startsWith(QStringLiteral("error: ") + path + QLatin1Char(':')),
                 qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("nesting deeper than")), qPrintable(line));
    }
}

void TestHostileFiles::moderateNestingInUnknownFieldIsIgnored() {
    // Within the depth limit an unknown field is skipped, whatever it holds.
    const std::string deep = std::string(40, '[') + "1,{\"x\":[null]}" + std::string(40, ']');
    const GradientCheckpoint g =
        GradientCheckpoint::fromJson(minimalGradient(",\"extra\":" + deep), "moderate.json");
    QCOMPARE(g.step, uint64_t(3));
    QCOMPARE(g.timestamp, uint64_t(5));
}

void TestHostileFiles::hugeMetadataLengthClaim_data() {
    QTest::addColumn<quint32>("claim");
    QTest::newRow("2 GiB") << quint32(0x80000000u);
    QTest::newRow("4 GiB - 1") << quint32(0xFFFFFFFFu);
}

void TestHostileFiles::hugeMetadataLengthClaim() {
    // A 100-byte file claiming a 2 GiB metadata block: refused before any
    // allocation of that size (the child may not grow by more than 1 GiB).
    QFETCH(quint32, claim);
    std::string bytes = oxckHeader(0, claim) + "{\"a\":\"b\"}";
    bytes.resize(100, ' ');
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("huge_metadata.oxck"));
    testsupport::writeFile(path, bytes);

    const ChildResult r = withMemoryCap([&] {
        std::string out = openAndRead(str(path)) + "\n";
        try {
            Checkpoint::load(str(path));
            out += "loaded";
        } catch (const CheckpointError& e) {
            out += std::string("error: ") + e.what();
        }
        return out;
    });
    QVERIFY2(!r.signalled && r.code == 0, qPrintable(r.describe()));
    for (const QString& line : qstr(r.text).split(QLatin1Char('\n'))) {
        QVERIFY2(line.startsWith(QStringLiteral("error: ") + path + QStringLiteral(": ")),
                 qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("metadata block needs %1 bytes").arg(claim)),
                 qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("72 left")), qPrintable(line));
    }
}

void TestHostileFiles::hugeMetadataBlockOfZerosInSparseFile() {
    // The claim is backed by bytes this time — 2 GiB of zeros in a sparse
    // file — but cannot be an object: refused from its first byte, without
    // reading or allocating the block.
    const uint32_t claim = 0x80000000u;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("zero_metadata.oxck"));
    if (!writeSparse(path, oxckHeader(0, claim), 28 + uint64_t(claim)))
        QSKIP("the filesystem does not keep a 2 GiB sparse file sparse");
    const ChildResult r = withMemoryCap([&] { return openAndRead(str(path)); });
    QVERIFY2(!r.signalled && r.code == 0, qPrintable(r.describe()));
    QCOMPARE(qstr(r.text), QStringLiteral("error: ") + path +
                               QStringLiteral(": metadata at byte 28: expected '{' to open the "
                                              "metadata object"));
}

void TestHostileFiles::nameLengthPastTheEnd_data() {
    QTest::addColumn<quint32>("nameLen");
    QTest::newRow("one byte past") << quint32(0); // 0: the bytes left + 1
    QTest::newRow("4 GiB - 1") << quint32(0xFFFFFFFFu);
}

void TestHostileFiles::nameLengthPastTheEnd() {
    QFETCH(quint32, nameLen);
    // One good tensor, then one whose name_len runs past the end of the file.
    std::string bytes = oxckHeader(2, 2) + "{}";
    putU32(bytes, 1);
    bytes += "w";
    putU32(bytes, 1);
    putU64(bytes, 1);
    putU64(bytes, 1);
    bytes += std::string(4, '\0');
    const size_t second = bytes.size();
    const uint64_t left = 10 + 4 + 8; // a name, a dimension count, a value count
    if (nameLen == 0)
        nameLen = quint32(left + 1);
    putU32(bytes, nameLen);
    bytes += "ten bytes!";
    putU32(bytes, 0);
    putU64(bytes, 0);
    QCOMPARE(bytes.size(), second + 4 + left);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("long_name.oxck"));
    testsupport::writeFile(path, bytes);
    const ChildResult r = withMemoryCap([&] { return openAndRead(str(path)); });
    QVERIFY2(!r.signalled && r.code == 0, qPrintable(r.describe()));
    const QString msg = qstr(r.text);
    QVERIFY2(msg.startsWith(QStringLiteral("error: ") + path + QStringLiteral(": tensor 1: ")),
             qPrintable(msg));
    QVERIFY2(
        msg.contains(QStringLiteral("the name needs %1 bytes, %2 left").arg(nameLen).arg(left)),
        qPrintable(msg));
    QVERIFY2(msg.contains(QStringLiteral("byte %1").arg(second + 4)), qPrintable(msg));
}

void TestHostileFiles::shapeProductOverflows() {
    // Shapes whose product does not fit in 64 bits: the file opens with a
    // warning, counts saturate instead of wrapping, the stored values read.
    struct Case {
        std::vector<uint64_t> shape;
        std::optional<uint64_t> count;
    };
    const std::vector<Case> cases = {
        {{uint64_t(1) << 32, uint64_t(1) << 32, 2}, std::nullopt},
        {std::vector<uint64_t>(64, 2), std::nullopt}, // exactly 2^64
        {std::vector<uint64_t>(63, 2), uint64_t(1) << 63},
        {{UINT64_MAX, UINT64_MAX, 0}, 0}, // a zero dimension wins
        {{UINT64_MAX}, UINT64_MAX},
    };
    for (const Case& c : cases) {
        Checkpoint ck;
        ck.addTensor({"big", c.shape, {1.5f, -2.0f, 4.0f}});
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("overflow.oxck"));
        ck.save(str(path));

        const auto doc = Document::open(str(path));
        QCOMPARE(doc->tensors().size(), size_t(1));
        QVERIFY(doc->tensors()[0].elementCount == c.count);
        QCOMPARE(doc->numParams(), c.count.value_or(UINT64_MAX));
        QCOMPARE(doc->totalBytes(),
                 c.count && *c.count <= UINT64_MAX / 4 ? *c.count * 4 : UINT64_MAX);
        bool warned = false;
        for (const auto& w : doc->warnings())
            warned = warned || qstr(w.message).contains(QStringLiteral("overflows 64 bits"));
        QCOMPARE(warned, !c.count.has_value());

        const StatsResult r = computeStats(
            3, [&](uint64_t first, uint64_t n, float* out) { doc->readValues(0, first, n, out); },
            {});
        QCOMPARE(r.stats.count, uint64_t(3));
        QCOMPARE(*r.stats.max, 4.0);

        const Checkpoint back = Checkpoint::load(str(path));
        QVERIFY(back.tensors[0].checkedElementCount() == c.count);
        QCOMPARE(back.tensors[0].elementCount(), c.count.value_or(UINT64_MAX));
        QCOMPARE(back.numParams(), c.count.value_or(UINT64_MAX));
    }
}

// A FIFO, a socket or a device is refused before it is opened — opening a
// FIFO for reading blocks until a writer comes, /dev/zero never ends — by
// Document and by every command that reads a file, with the file's kind.
void TestHostileFiles::specialFilesAreRefusedAtOnce_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("fifo") << QStringLiteral("a FIFO");
    QTest::newRow("socket") << QStringLiteral("a socket");
    QTest::newRow("char device") << QStringLiteral("a character device");
}

void TestHostileFiles::specialFilesAreRefusedAtOnce() {
    QFETCH(QString, kind);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    std::string path = str(dir.filePath(QStringLiteral("special")));
    int sock = -1;
    if (kind == QStringLiteral("a FIFO")) {
        QCOMPARE(::mkfifo(path.c_str(), 0600), 0);
    } else if (kind == QStringLiteral("a socket")) {
        sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        QVERIFY(path.size() < sizeof addr.sun_path);
        std::copy(path.begin(), path.end(), addr.sun_path);
        QCOMPARE(::bind(sock, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    } else {
        path = "/dev/zero";
    }
    const std::string expected = "not a regular file (" + str(kind) + ")";
    const std::string opened = openAndRead(path);
    QVERIFY2(opened == "error: " + path + ": " + expected, opened.c_str());

    const QString file = qstr(path);
    const QString out = dir.filePath(QStringLiteral("out"));
    const QList<std::pair<QStringList, int>> commands = {
        {{QStringLiteral("info"), file}, 1},
        {{QStringLiteral("stats"), file}, 1},
        {{QStringLiteral("export"), file, QStringLiteral("--tensor"), QStringLiteral("w"),
          QStringLiteral("-o"), out + QStringLiteral(".npy")},
         1},
        {{QStringLiteral("convert"), file, out + QStringLiteral(".safetensors")}, 1},
        {{QStringLiteral("diff"), file, file}, 2},
    };
    for (const auto& [args, code] : commands) {
        const clirunner::Run r = clirunner::runCli(args);
        QVERIFY2(r.exitCode == code && r.errText().contains(qstr(expected)),
                 qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(": ") +
                            clirunner::describe(r)));
    }
    if (sock >= 0)
        ::close(sock);
}

QTEST_GUILESS_MAIN(TestHostileFiles)
#include "tst_hostilefiles.moc"
