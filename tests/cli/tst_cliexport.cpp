// ckptscope-cli export, convert and stats --csv run as a process, and info
// on safetensors files; the .npy and .npz files read back by NumPy itself
// (/usr/bin/python3, Debian's python3-numpy), not only by our own reader.
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include "ckptscope/formats/oxck/checkpoint.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace ckptscope;
using nlohmann::json;
using testsupport::leBytes;
using testsupport::qstr;
using testsupport::stFile;
using testsupport::str;

namespace {

struct Result {
    int code = -1;
    QByteArray out, err;
};

Result run(const QString& program, const QStringList& args) {
    QProcess p;
    p.start(program, args);
    Result r;
    if (!p.waitForStarted(30000) || !p.waitForFinished(240000)) {
        p.kill();
        p.waitForFinished();
        r.err = "did not run to the end";
        return r;
    }
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return r;
}

Result cli(const QStringList& args) {
    return run(QStringLiteral(CKPTSCOPE_CLI_PATH), args);
}

bool haveNumpy() {
    return run(QStringLiteral("/usr/bin/python3"),
               {QStringLiteral("-c"), QStringLiteral("import numpy")})
               .code == 0;
}

// Skips without NumPy — or fails, when the build requires it
// (CKPTSCOPE_REQUIRE_NUMPY, CI), so that a CI run cannot pass by skipping.
#ifdef CKPTSCOPE_REQUIRE_NUMPY
#define CKPTSCOPE_NO_NUMPY(msg) QFAIL(msg)
#else
#define CKPTSCOPE_NO_NUMPY(msg) QSKIP(msg)
#endif
#define REQUIRE_NUMPY()                                                                            \
    do {                                                                                           \
        if (!haveNumpy())                                                                          \
            CKPTSCOPE_NO_NUMPY(                                                                    \
                "/usr/bin/python3 with numpy is missing (packaging/install-deps.sh "               \
                "installs python3-numpy)");                                                        \
    } while (0)

// NumPy's view of an .npy or .npz file: per array the dtype, shape and the
// bytes of the values in hex.
json numpyView(const QString& path) {
    const char* script = R"(
import json, sys, numpy as np
f = np.load(sys.argv[1], allow_pickle=False)
arrays = {k: f[k] for k in f.files} if hasattr(f, 'files') else {'': f}
print(json.dumps({k: {'dtype': a.dtype.str, 'shape': list(a.shape),
                      'hex': np.ascontiguousarray(a).tobytes().hex()} for k, a in arrays.items()}))
)";
    const Result r = run(QStringLiteral("/usr/bin/python3"),
                         {QStringLiteral("-c"), QString::fromUtf8(script), path});
    if (r.code != 0)
        return {{"error", r.err.toStdString()}};
    return json::parse(r.out.toStdString());
}

std::string hex(const void* data, size_t n) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; ++i) {
        const auto b = static_cast<const uint8_t*>(data)[i];
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}

std::vector<float> patterned(size_t n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = float(i) * 0.37f - 3.0f;
    if (n > 3) {
        v[1] = std::numeric_limits<float>::quiet_NaN();
        v[2] = -std::numeric_limits<float>::infinity();
        v[3] = -0.0f;
    }
    return v;
}

Checkpoint sample() {
    Checkpoint c;
    c.setMetadata("step", "7");
    c.setMetadata("note", "a, \"quoted\"\nvalue");
    c.addTensor({"w", {3, 4}, patterned(12)});
    c.addTensor({"b", {4}, patterned(4)});
    c.addTensor({"s", {}, {0.1f}});
    c.addTensor({"cube", {2, 2, 2}, patterned(8)});
    c.addTensor({"odd", {3, 3}, patterned(5)});
    return c;
}

QByteArray readBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestCliExport : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_oxck;

    QString path(const char* name) const { return m_dir.filePath(QString::fromUtf8(name)); }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_oxck = path("model.oxck");
        sample().save(str(m_oxck));
    }

    void infoJsonSafetensors() {
        const std::vector<int32_t> ints = {1, -2, 3};
        const QString file = path("info.safetensors");
        testsupport::writeFile(file, stFile({{"x", "I32", {3}, leBytes(ints)},
                                             {"s", "BF16", {}, std::string("\x80\x3f", 2)}},
                                            {{"format", "pt"}}));
        const Result r = cli({QStringLiteral("info"), file, QStringLiteral("--json")});
        QCOMPARE(r.code, 0);
        const json j = json::parse(r.out.toStdString());
        QCOMPARE(qstr(j["format"]), QStringLiteral("safetensors"));
        QCOMPARE(j["file_size"].get<uint64_t>(), uint64_t(QFileInfo(file).size()));
        QCOMPARE(qstr(j["metadata"]["format"]), QStringLiteral("pt"));
        QCOMPARE(j["num_params"].get<uint64_t>(), uint64_t(4));
        QCOMPARE(j["total_bytes"].get<uint64_t>(), uint64_t(14));
        QVERIFY(j["warnings"].empty());
        const json& t = j["tensors"];
        QCOMPARE(t.size(), size_t(2));
        QCOMPARE(qstr(t[0]["dtype"]), QStringLiteral("I32"));
        QCOMPARE(t[0]["size_bytes"].get<uint64_t>(), uint64_t(12));
        QCOMPARE(qstr(t[1]["name"]), QStringLiteral("s"));
        QCOMPARE(t[1]["element_count"].get<uint64_t>(), uint64_t(1));
        QVERIFY(t[1]["shape"].empty());
        const uint64_t dataStart = QFileInfo(file).size() - 14;
        QCOMPARE(t[0]["offset"].get<uint64_t>(), dataStart);
        QCOMPARE(t[1]["offset"].get<uint64_t>(), dataStart + 12);
        // OXCK tensors say F32.
        const json o = json::parse(
            cli({QStringLiteral("info"), m_oxck, QStringLiteral("--json")}).out.toStdString());
        for (const json& e : o["tensors"])
            QCOMPARE(qstr(e["dtype"]), QStringLiteral("F32"));
        // The text table shows dtypes; statistics work.
        const Result text = cli({QStringLiteral("info"), file});
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.contains("safetensors") && text.out.contains("BF16"));
        const Result stats = cli({QStringLiteral("stats"), file, QStringLiteral("--json")});
        QCOMPARE(stats.code, 0);
        const json s = json::parse(stats.out.toStdString());
        QCOMPARE(s["tensors"][0]["min"].get<double>(), -2.0);
        QCOMPARE(s["tensors"][1]["max"].get<double>(), 1.0);
    }

    void hostileSafetensorsExitOne() {
        const QString file = path("bad.safetensors");
        testsupport::writeFile(file, stFile("{\"x\":{\"dtype\":\"Q7\",\"shape\":[1],"
                                            "\"data_offsets\":[0,1]}}",
                                            "a"));
        for (const char* cmd : {"info", "stats"}) {
            const Result r = cli({QString::fromUtf8(cmd), file});
            QCOMPARE(r.code, 1);
            QVERIFY2(r.err.startsWith((file + QStringLiteral(": error: ")).toUtf8()), r.err);
            QVERIFY2(r.err.contains("Q7"), r.err);
        }
    }

    void statsCsv() {
        const Result r = cli({QStringLiteral("stats"), m_oxck, QStringLiteral("--csv")});
        QCOMPARE(r.code, 0);
        const Result j = cli({QStringLiteral("stats"), m_oxck, QStringLiteral("--json")});
        const json stats = json::parse(j.out.toStdString())["tensors"];
        const QStringList lines = QString::fromUtf8(r.out).split(QStringLiteral("\r\n"));
        QCOMPARE(lines.size(), int(stats.size()) + 2); // header, rows, "" after the last CRLF
        const QStringList header = lines[0].split(QLatin1Char(','));
        QCOMPARE(header.first(), QStringLiteral("name"));
        QVERIFY(!header.contains(QStringLiteral("histogram")));
        for (size_t i = 0; i < stats.size(); ++i) {
            const QStringList cells = lines[int(i) + 1].split(QLatin1Char(','));
            QCOMPARE(cells.size(), header.size());
            for (int c = 0; c < header.size(); ++c) {
                const json& v = stats[i][str(header[c])];
                if (v.is_null())
                    QCOMPARE(cells[c], QString());
                else if (v.is_string())
                    QCOMPARE(cells[c], qstr(v.get<std::string>()));
                else
                    QCOMPARE(cells[c].toDouble(), v.get<double>());
            }
        }
        QCOMPARE(cli({QStringLiteral("stats"), m_oxck, QStringLiteral("--csv"),
                      QStringLiteral("--json")})
                     .code,
                 2);
    }

    // Complex tensors (torch's complex64 and complex128) export as NumPy's
    // <c8 and <c16, bit for bit as torch.load gives them, and as CSV text
    // that NumPy's loadtxt(dtype=complex) reads back to the same values.
    void exportComplexReadByNumpy() {
        REQUIRE_CONFORMANCE();
        REQUIRE_NUMPY();
        const QString dir = testsupport::corpus(QStringLiteral("pytorch/"));
        const QString in = dir + QStringLiteral("valid/dtypes.pt");
        const char* check = R"(
import sys, numpy as np
npy, csv, expected, descr = sys.argv[1:5]
want = np.fromfile(expected, dtype=descr)
a = np.load(npy, allow_pickle=False)
assert a.dtype.str == descr, a.dtype.str
assert a.tobytes() == want.tobytes(), (a, want)
t = np.loadtxt(csv, dtype=complex, delimiter=',', ndmin=1).astype(descr).reshape(-1)
w = want.reshape(-1)
for part in (np.real, np.imag):
    x, y = part(t), part(w)
    same = (np.isnan(x) & np.isnan(y)) | ((x == y) & (np.signbit(x) == np.signbit(y)))
    assert same.all(), (t, w)
print('ok', a.shape)
)";
        for (const auto& [tensor, descr, bin] :
             {std::tuple{"complex64", "<c8", "dtypes.pt.10.bin"},
              std::tuple{"complex128", "<c16", "dtypes.pt.11.bin"}}) {
            const QString npy = path("c.npy"), csv = path("c.csv");
            for (const QString& out : {npy, csv}) {
                const Result r = cli({QStringLiteral("export"), in, QStringLiteral("--tensor"),
                                      QString::fromLatin1(tensor), QStringLiteral("-o"), out});
                QVERIFY2(r.code == 0, r.err.constData());
            }
            const Result py = run(QStringLiteral("/usr/bin/python3"),
                                  {QStringLiteral("-c"), QString::fromUtf8(check), npy, csv,
                                   dir + QStringLiteral("expected/") + QString::fromLatin1(bin),
                                   QString::fromLatin1(descr)});
            QVERIFY2(py.code == 0 && py.out.startsWith("ok"), (py.err + py.out).constData());
        }
    }

    void exportNpyReadByNumpy() {
        REQUIRE_NUMPY();
        const Checkpoint c = sample();
        struct Case {
            const char* tensor;
            std::vector<uint64_t> shape;
        };
        for (const Case& k : {Case{"w", {3, 4}}, Case{"b", {4}}, Case{"s", {}},
                              Case{"cube", {2, 2, 2}}, Case{"odd", {5}}}) {
            const QString out = path("t.npy");
            const Result r = cli({QStringLiteral("export"), m_oxck, QStringLiteral("--tensor"),
                                  QString::fromUtf8(k.tensor), QStringLiteral("-o"), out});
            QCOMPARE(r.code, 0);
            QCOMPARE(r.err.contains("written 1-D"), std::string(k.tensor) == "odd");
            const json v = numpyView(out);
            QVERIFY2(!v.contains("error"), v.dump().c_str());
            QCOMPARE(qstr(v[""]["dtype"]), QStringLiteral("<f4"));
            QCOMPARE(v[""]["shape"].get<std::vector<uint64_t>>(), k.shape);
            const auto& data = c.getTensor(k.tensor)->data;
            QCOMPARE(qstr(v[""]["hex"]), qstr(hex(data.data(), data.size() * 4)));
        }
        // Safetensors dtypes keep their NumPy type; BF16 becomes <f4.
        const QString st = path("d.safetensors");
        const std::vector<int64_t> i64 = {INT64_MIN, 5};
        testsupport::writeFile(st, stFile({{"i", "I64", {2, 1}, leBytes(i64)},
                                           {"h", "F16", {1}, std::string("\x00\x3c", 2)},
                                           {"t", "BOOL", {2}, std::string("\x01\x00", 2)},
                                           {"b", "BF16", {1}, std::string("\xc0\x3f", 2)}}));
        const char* want[][2] = {{"i", "<i8"}, {"h", "<f2"}, {"t", "|b1"}, {"b", "<f4"}};
        for (const auto& [name, dtype] : want) {
            const QString out = path("d.npy");
            const Result r = cli({QStringLiteral("export"), st, QStringLiteral("--tensor"),
                                  QString::fromUtf8(name), QStringLiteral("-o"), out});
            QCOMPARE(r.code, 0);
            const json v = numpyView(out);
            QCOMPARE(qstr(v[""]["dtype"]), QString::fromUtf8(dtype));
        }
        const float bf = 1.5f;
        QCOMPARE(qstr(numpyView(path("d.npy"))[""]["hex"]), qstr(hex(&bf, 4)));
    }

    void exportCsvAndRaw() {
        const Result csv = cli({QStringLiteral("export"), m_oxck, QStringLiteral("--tensor"),
                                QStringLiteral("cube"), QStringLiteral("-o"), QStringLiteral("-"),
                                QStringLiteral("--format"), QStringLiteral("csv")});
        QCOMPARE(csv.code, 0);
        const QStringList lines = QString::fromUtf8(csv.out).split(QStringLiteral("\r\n"));
        QCOMPARE(lines.size(), 5); // 4 rows × 2 columns
        QCOMPARE(lines[0], QStringLiteral("-3,nan"));
        QCOMPARE(lines[1], QStringLiteral("-inf,-0"));
        const std::vector<float> cube = patterned(8);
        QCOMPARE(std::strtof(str(lines[3].section(QLatin1Char(','), 1)).c_str(), nullptr), cube[7]);
        const QString rawPath = path("cube.raw");
        QCOMPARE(cli({QStringLiteral("export"), m_oxck, QStringLiteral("--tensor"),
                      QStringLiteral("cube"), QStringLiteral("-o"), rawPath})
                     .code,
                 0);
        QCOMPARE(readBytes(rawPath), QByteArray(reinterpret_cast<const char*>(cube.data()), 32));
    }

    void exportUsage_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::newRow("stdout without --format")
            << QStringList{QStringLiteral("--tensor"), QStringLiteral("w"), QStringLiteral("-o"),
                           QStringLiteral("-")}
            << 2;
        QTest::newRow("unknown extension")
            << QStringList{QStringLiteral("--tensor"), QStringLiteral("w"), QStringLiteral("-o"),
                           QStringLiteral("x.txt")}
            << 2;
        QTest::newRow("no tensor")
            << QStringList{QStringLiteral("-o"), QStringLiteral("x.npy")} << 2;
        QTest::newRow("unknown tensor")
            << QStringList{QStringLiteral("--tensor"), QStringLiteral("nope"), QStringLiteral("-o"),
                           QStringLiteral("x.npy")}
            << 2;
        QTest::newRow("bad format")
            << QStringList{QStringLiteral("--tensor"), QStringLiteral("w"),
                           QStringLiteral("-o"),       QStringLiteral("-"),
                           QStringLiteral("--format"), QStringLiteral("xls")}
            << 2;
    }

    void exportUsage() {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        const Result r = cli(QStringList{QStringLiteral("export"), m_oxck} + args);
        QCOMPARE(r.code, code);
        QVERIFY(r.out.isEmpty());
    }

    void neverOverTheInput() {
        const QByteArray before = readBytes(m_oxck);
        QCOMPARE(
            cli({QStringLiteral("export"), m_oxck, QStringLiteral("--tensor"), QStringLiteral("w"),
                 QStringLiteral("-o"), m_oxck, QStringLiteral("--format"), QStringLiteral("raw")})
                .code,
            2);
        const QString st = path("self.safetensors");
        QCOMPARE(cli({QStringLiteral("convert"), m_oxck, st}).code, 0);
        QCOMPARE(cli({QStringLiteral("convert"), st, st}).code, 2);
        QCOMPARE(cli({QStringLiteral("convert"), m_oxck, m_oxck}).code, 2);
        QCOMPARE(readBytes(m_oxck), before);
        QCOMPARE(cli({QStringLiteral("convert"), m_oxck, path("x.txt")}).code, 2);
        QCOMPARE(cli({QStringLiteral("convert"), path("missing.oxck"), path("y.safetensors")}).code,
                 1);
    }

    // OXCK → safetensors → OXCK: the same bytes (the writer keeps the
    // reference layout), and a warning for the tensor safetensors reshapes.
    void convertRoundTrip() {
        Checkpoint c = sample();
        c.tensors.pop_back(); // "odd": stored count ≠ shape, becomes 1-D
        const QString in = path("clean.oxck");
        c.save(str(in));
        const QString st = path("clean.safetensors");
        const QString back = path("back.oxck");
        Result r = cli({QStringLiteral("convert"), in, st});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.isEmpty(), r.err);
        r = cli({QStringLiteral("convert"), st, back});
        QCOMPARE(r.code, 0);
        QCOMPARE(readBytes(back), readBytes(in));
        r = cli({QStringLiteral("convert"), m_oxck, path("odd.safetensors")});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.contains("warning: tensor \"odd\""), r.err);
    }

    void convertRefusesDuplicates() {
        Checkpoint c;
        c.addTensor({"dup", {1}, {1}});
        c.addTensor({"dup", {1}, {2}});
        const QString in = path("dup.oxck");
        c.save(str(in));
        const QString out = path("dup.safetensors");
        const Result r = cli({QStringLiteral("convert"), in, out});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("\"dup\""), r.err);
        QVERIFY(!QFile::exists(out));
    }

    void convertSafetensorsToOxck() {
        REQUIRE_CONFORMANCE();
        const QString in = testsupport::conformanceDir() +
                           QStringLiteral("/safetensors/valid/all_dtypes.safetensors");
        const QString out = path("all.oxck");
        const Result r = cli({QStringLiteral("convert"), in, out});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.err.count("warning: tensor"), 12); // every dtype but F32
        const json j = json::parse(
            cli({QStringLiteral("info"), out, QStringLiteral("--json")}).out.toStdString());
        QCOMPARE(qstr(j["format"]), QStringLiteral("oxck"));
        QCOMPARE(j["tensors"].size(), size_t(13));
        QCOMPARE(qstr(j["metadata"]["format"]), QStringLiteral("pt"));
        QCOMPARE(qstr(j["tensors"][0]["name"]), QStringLiteral("t_bool"));
    }

    void npzReadByNumpy() {
        REQUIRE_NUMPY();
        const QString out = path("model.npz");
        const Result r = cli({QStringLiteral("convert"), m_oxck, out});
        QCOMPARE(r.code, 0);
        const json v = numpyView(out);
        QVERIFY2(!v.contains("error"), v.dump().c_str());
        const Checkpoint c = sample();
        QCOMPARE(v.size(), c.tensors.size());
        for (const CheckpointTensor& t : c.tensors) {
            const json& a = v[t.name];
            QCOMPARE(qstr(a["dtype"]), QStringLiteral("<f4"));
            QCOMPARE(qstr(a["hex"]), qstr(hex(t.data.data(), t.data.size() * 4)));
        }
        QCOMPARE(v["s"]["shape"].size(), size_t(0));
        QCOMPARE(v["odd"]["shape"].get<std::vector<uint64_t>>(), std::vector<uint64_t>{5});
    }

    // 65 536 entries need the ZIP64 end records; NumPy must still find all.
    void npzManyEntries() {
        REQUIRE_NUMPY();
        Checkpoint c;
        for (int i = 0; i < 65536; ++i)
            c.addTensor({"t" + std::to_string(i), {1}, {float(i)}});
        const QString in = path("many.oxck");
        c.save(str(in));
        const QString out = path("many.npz");
        QCOMPARE(cli({QStringLiteral("convert"), in, out}).code, 0);
        const char* script = "import sys, numpy as np\n"
                             "f = np.load(sys.argv[1])\n"
                             "print(len(f.files), float(f['t65535'][0]))\n";
        const Result r = run(QStringLiteral("/usr/bin/python3"),
                             {QStringLiteral("-c"), QString::fromUtf8(script), out});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out.trimmed(), QByteArray("65536 65535.0"));
    }
};

QTEST_GUILESS_MAIN(TestCliExport)
#include "tst_cliexport.moc"
