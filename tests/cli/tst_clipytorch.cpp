// ckptscope-cli on PyTorch torch.save files: info --json as the corpus says
// torch sees each file (tensors as views, storages, imports, the object
// tree, totals), unsafe imports as warnings with the file still opened, and
// statistics of strided views from the values torch gives.
#include "clirunner.h"
#include "dcpfixture.h"
#include "testsupport.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "ckptscope/document/document.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace clirunner;
using nlohmann::json;

namespace {

QString pt(const QString& relative) {
    return testsupport::corpus(QStringLiteral("pytorch/") + relative);
}

json readJson(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? json::parse(f.readAll().toStdString()) : json();
}

} // namespace

class TestCliPytorch : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { requireCli(); }

    void infoJson_data() {
        QTest::addColumn<QString>("expected");
        if (testsupport::conformanceDir().isEmpty())
            return;
        for (const QString& f : QDir(pt(QStringLiteral("expected")))
                                    .entryList({QStringLiteral("*.json")}, QDir::Files))
            QTest::newRow(qPrintable(f)) << f;
    }
    void infoJson() {
        REQUIRE_CONFORMANCE();
        QFETCH(QString, expected);
        const json e = readJson(pt(QStringLiteral("expected/") + expected));
        const QString file = pt(QStringLiteral("valid/") + QString::fromStdString(e["file"]));
        const Run r = runCli({QStringLiteral("info"), QStringLiteral("--json"), file});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        const json j = parseOut(r);
        QVERIFY2(!j.is_discarded(), qPrintable(describe(r)));
        QCOMPARE(j["format"].get<std::string>(), std::string("pytorch"));
        QCOMPARE(j["tensors"].size(), e["tensors"].size());
        for (size_t i = 0; i < e["tensors"].size(); ++i) {
            const json& t = j["tensors"][i];
            const json& x = e["tensors"][i];
            QVERIFY2(t["name"] == x["name"], (x["name"].get<std::string>() + ": name").c_str());
            QVERIFY(t["shape"] == x["shape"]);
            QVERIFY2(t["storage_key"] == x["storage_key"],
                     (x["name"].get<std::string>() + ": storage_key").c_str());
            QVERIFY2(t["storage_offset"] == x["storage_offset"],
                     (x["name"].get<std::string>() + ": storage_offset").c_str());
            QVERIFY2(t["requires_grad"] == x["requires_grad"],
                     (x["name"].get<std::string>() + ": requires_grad").c_str());
            QVERIFY2(t["is_parameter"] == x["is_parameter"],
                     (x["name"].get<std::string>() + ": is_parameter").c_str());
            QCOMPARE(t.contains("same_as"), x.contains("same_as"));
            if (x.contains("same_as"))
                QVERIFY2(t["same_as"] == x["same_as"],
                         (x["name"].get<std::string>() + ": same_as").c_str());
        }
        // Bytes: each storage once, whole.
        uint64_t bytes = 0;
        QCOMPARE(j["storages"].size(), e["storages"].size());
        for (const json& s : e["storages"])
            bytes += s["nbytes"].get<uint64_t>();
        QCOMPARE(j["total_bytes"].get<uint64_t>(), bytes);
        std::vector<std::string> imports;
        for (const json& i : j["pickle_imports"]) {
            imports.push_back(i["name"]);
            QVERIFY(i["risk"] != "unsafe");
        }
        QVERIFY(imports == e["imports"].get<std::vector<std::string>>());
        QVERIFY2(j["objects"] == e["objects"], e["file"].get<std::string>().c_str());
    }

    // An unsafe pickle opens (exit 0), lists its tensors and warns on stderr
    // and in the JSON, naming the call and its arguments.
    void unsafeImportIsAWarning() {
        REQUIRE_CONFORMANCE();
        const QString file = pt(QStringLiteral("invalid/malicious-os-system.pt"));
        const Run r = runCli({QStringLiteral("info"), QStringLiteral("--json"), file});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        const QString line = file + QStringLiteral(": warning: unsafe import os.system called with "
                                                   "[\"echo pwned > /tmp/x\"]");
        QVERIFY2(r.errText().contains(line), qPrintable(describe(r)));
        const json j = parseOut(r);
        QVERIFY(j["warnings"].dump().find("unsafe import os.system") != std::string::npos);
        bool unsafe = false;
        for (const json& i : j["pickle_imports"])
            if (i["name"] == "os.system") {
                unsafe = i["risk"] == "unsafe" && i["calls"][0][0] == "echo pwned > /tmp/x";
            }
        QVERIFY2(unsafe, j["pickle_imports"].dump().c_str());
        QVERIFY(!j["tensors"].empty());
    }

    // stats of a strided view (a column, stride 6) and of an expanded one
    // (stride 0): the mean of the values torch gives.
    void statsOfViewsAreTheValuesTorchGives_data() {
        QTest::addColumn<QString>("tensor");
        QTest::newRow("column") << QStringLiteral("column_2");
        QTest::newRow("transposed") << QStringLiteral("transposed");
        QTest::newRow("expanded") << QStringLiteral("expanded");
        QTest::newRow("channels_last") << QStringLiteral("channels_last");
    }
    void statsOfViewsAreTheValuesTorchGives() {
        REQUIRE_CONFORMANCE();
        QFETCH(QString, tensor);
        const json e = readJson(pt(QStringLiteral("expected/views.pt.json")));
        std::string bin;
        for (const json& t : e["tensors"])
            if (t["name"] == tensor.toStdString())
                bin = t["values"];
        QFile f(pt(QStringLiteral("expected/") + QString::fromStdString(bin)));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray raw = f.readAll();
        std::vector<float> v(size_t(raw.size()) / 4);
        std::memcpy(v.data(), raw.data(), size_t(raw.size()));
        double sum = 0, mn = INFINITY, mx = -INFINITY;
        for (float x : v) {
            sum += x;
            mn = std::min<double>(mn, x);
            mx = std::max<double>(mx, x);
        }
        const Run r =
            runCli({QStringLiteral("stats"), QStringLiteral("--json"),
                    pt(QStringLiteral("valid/views.pt")), QStringLiteral("--tensor"), tensor});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        const json s = parseOut(r)["tensors"][0];
        QCOMPARE(s["count"].get<uint64_t>(), uint64_t(v.size()));
        QCOMPARE(s["min"].get<double>(), mn);
        QCOMPARE(s["max"].get<double>(), mx);
        QVERIFY(std::abs(s["mean"].get<double>() - sum / double(v.size())) <=
                1e-12 * (1 + std::abs(sum)));
    }

    // convert to safetensors: every tensor contiguous with the values torch
    // gives (views, transposes and expansions written out), C128 left out
    // and named, shared storages and non-tensor values said.
    void convertWritesTheValuesTorchGives_data() {
        QTest::addColumn<QString>("expected");
        QTest::addColumn<QString>("warning");
        QTest::newRow("views") << QStringLiteral("views.pt.json")
                               << QStringLiteral(
                                      "8 tensors share storages and are each written whole");
        QTest::newRow("dtypes") << QStringLiteral("dtypes.pt.json")
                                << QStringLiteral("1 tensor left out (safetensors has no C128 "
                                                  "dtype): complex128");
        QTest::newRow("lightning") << QStringLiteral("lightning__epoch=2-step=150.ckpt.json")
                                   << QStringLiteral("values that are not tensors are left out: "
                                                     "epoch, global_step, ");
    }
    void convertWritesTheValuesTorchGives() {
        REQUIRE_CONFORMANCE();
        QFETCH(QString, expected);
        QFETCH(QString, warning);
        const json e = readJson(pt(QStringLiteral("expected/") + expected));
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("out.safetensors"));
        const Run r =
            runCli({QStringLiteral("convert"),
                    pt(QStringLiteral("valid/") + QString::fromStdString(e["file"])), out});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QVERIFY2(r.errText().contains(warning), qPrintable(describe(r)));
        const auto doc = ckptscope::Document::open(out.toStdString());
        size_t written = 0;
        for (const json& x : e["tensors"]) {
            if (x["dtype"] == "complex128")
                continue;
            ++written;
            const auto it =
                std::find_if(doc->tensors().begin(), doc->tensors().end(),
                             [&](const ckptscope::TensorEntry& t) { return t.name == x["name"]; });
            QVERIFY2(it != doc->tensors().end(), x["name"].get<std::string>().c_str());
            QVERIFY(it->shape == x["shape"].get<std::vector<uint64_t>>());
            QFile f(pt(QStringLiteral("expected/") + QString::fromStdString(x["values"])));
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray want = f.readAll();
            QByteArray got(want.size(), '\0');
            if (it->dataLen > 0)
                doc->readRawValues(size_t(it - doc->tensors().begin()), 0, it->dataLen, got.data());
            QVERIFY2(got == want, x["name"].get<std::string>().c_str());
        }
        QCOMPARE(doc->tensors().size(), written);
    }

    // Complex tensors have no statistics: `stats` gives each its count and
    // says so (a note under the table, "note" in --json with null figures,
    // empty cells in --csv) and computes every other tensor; exit 0. The
    // text and JSON rows of the other tensors are those of `stats --tensor`.
    void statsSayComplexValuesHaveNone() {
        REQUIRE_CONFORMANCE();
        const QString file = pt(QStringLiteral("valid/dtypes.pt"));
        const Run text = runCli({QStringLiteral("stats"), file});
        QVERIFY2(text.exitCode == 0, qPrintable(describe(text)));
        QVERIFY2(text.outText().contains(QStringLiteral(
                     "note: complex64, complex128: statistics are not computed for complex "
                     "values")),
                 qPrintable(describe(text)));
        const Run j = runCli({QStringLiteral("stats"), file, QStringLiteral("--json")});
        QVERIFY2(j.exitCode == 0, qPrintable(describe(j)));
        const json tensors = parseOut(j)["tensors"];
        QCOMPARE(tensors.size(), size_t(12));
        for (const json& t : tensors) {
            const std::string name = t["name"];
            if (name.rfind("complex", 0) == 0) {
                QCOMPARE(t["count"].get<uint64_t>(), uint64_t(name == "complex64" ? 5 : 4));
                QVERIFY(t["mean"].is_null() && t["finite"].is_null() && t["histogram"].is_null());
                QCOMPARE(t["note"].get<std::string>(),
                         std::string("statistics are not computed for complex values"));
            } else {
                QVERIFY2(!t.contains("note") && t["finite"].is_number(), name.c_str());
                const Run one = runCli({QStringLiteral("stats"), file, QStringLiteral("--json"),
                                        QStringLiteral("--tensor"), QString::fromStdString(name)});
                QVERIFY2(parseOut(one)["tensors"][0] == t, t.dump().c_str());
            }
        }
        const Run csv = runCli({QStringLiteral("stats"), file, QStringLiteral("--csv")});
        QVERIFY2(csv.exitCode == 0, qPrintable(describe(csv)));
        QVERIFY2(csv.outText().contains(QStringLiteral("\r\ncomplex64,5,,,,,,,,,,,,\r\n")),
                 qPrintable(describe(csv)));
        QVERIFY2(csv.errText().contains(QStringLiteral(
                     "note: complex128: statistics are not computed for complex values")),
                 qPrintable(describe(csv)));
    }

    // NumPy arrays are not tensors: rng_state.pth's MT19937 state is listed
    // apart with its dtype, shape and values — the 624 words the pickle's
    // bytes hold.
    void numpyArraysListedApart() {
        REQUIRE_CONFORMANCE();
        const Run r = runCli({QStringLiteral("info"), QStringLiteral("--json"),
                              pt(QStringLiteral("valid/checkpoint-50/rng_state.pth"))});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        const json j = parseOut(r);
        QCOMPARE(j["arrays"].size(), size_t(1));
        const json& a = j["arrays"][0];
        QCOMPARE(a["path"].get<std::string>(), std::string("numpy.1"));
        QCOMPARE(a["dtype"].get<std::string>(), std::string("<u4"));
        QVERIFY(a["shape"] == json::array({624}));
        QCOMPARE(a["role"].get<std::string>(), std::string("NumPy MT19937 state"));
        // The words from the corpus's own rendering of the object.
        const json e = readJson(pt(QStringLiteral("expected/checkpoint-50__rng_state.pth.json")));
        const std::string hex =
            e["objects"]["numpy"]["tuple"][1]["state"]["tuple"][4]["bytes_hex"].get<std::string>();
        QCOMPARE(a["values"].size(), hex.size() / 8);
        for (size_t i = 0; i < a["values"].size(); ++i) {
            uint32_t word = 0;
            for (int b = 3; b >= 0; --b)
                word = word << 8 |
                       uint32_t(std::stoul(hex.substr(i * 8 + size_t(b) * 2, 2), nullptr, 16));
            QCOMPARE(a["values"][i].get<uint64_t>(), uint64_t(word));
        }
        // A state dict holds none.
        const Run model = runCli({QStringLiteral("info"), QStringLiteral("--json"),
                                  pt(QStringLiteral("valid/llama-state-dict.pt"))});
        QVERIFY(parseOut(model)["arrays"].empty());
    }

    // A file whose pickle is damaged is a one-line error naming it (exit 1).
    // A DCP folder through the CLI: info --json lists each tensor's chunks
    // (file, offsets, sizes, the archive's byte range), convert writes the
    // model and with --include-optimizer the optimizer's state, a missing
    // rank file is one error line, exit 1.
    void dcpFolder() {
        QTemporaryDir dir;
        const testsupport::DcpFixture f = testsupport::DcpFixture::make(3, {{5, 3}, {7}});
        const QString folder = dir.filePath(QStringLiteral("step-10"));
        f.write(folder.toStdString());
        const json info =
            parseOut(runCli({QStringLiteral("info"), QStringLiteral("--json"), folder}));
        QCOMPARE(info["format"].get<std::string>(), "dcp");
        const json& t0 = info["tensors"][0];
        QCOMPARE(t0["name"].get<std::string>(), f.tensors[0].fqn);
        QCOMPARE(t0["chunks"].size(), f.tensors[0].chunks.size());
        for (size_t c = 0; c < f.tensors[0].chunks.size(); ++c) {
            const json& chunk = t0["chunks"][c];
            QVERIFY(chunk["offsets"] == f.tensors[0].chunks[c].offsets);
            QVERIFY(chunk["sizes"] == f.tensors[0].chunks[c].sizes);
            QCOMPARE(chunk["file"].get<std::string>(),
                     "__" + std::to_string(f.tensors[0].chunks[c].rank) + "_0.distcp");
            QVERIFY(chunk["length"].get<uint64_t>() > 0);
        }
        const QString out = dir.filePath(QStringLiteral("model.safetensors"));
        Run r = runCli({QStringLiteral("convert"), folder, out});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QVERIFY2(r.errText().contains(QStringLiteral("optim.*")), qPrintable(describe(r)));
        const auto model = ckptscope::Document::open(out.toStdString());
        QCOMPARE(model->tensors().size(), size_t(3)); // two layers and the grid
        const QString all = dir.filePath(QStringLiteral("all.safetensors"));
        r = runCli({QStringLiteral("convert"), QStringLiteral("--include-optimizer"), folder, all});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QCOMPARE(ckptscope::Document::open(all.toStdString())->tensors().size(), f.tensors.size());
        QVERIFY(QFile::remove(dir.filePath(QStringLiteral("step-10/__2_0.distcp"))));
        r = runCli({QStringLiteral("stats"), folder});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.errText().contains(QStringLiteral("__2_0.distcp")) &&
                     r.errText().contains(QStringLiteral("missing")),
                 qPrintable(describe(r)));
        QCOMPARE(lines(r.errText()).size(), 1);
    }

    void damagedFileIsAnError() {
        REQUIRE_CONFORMANCE();
        const QString file = pt(QStringLiteral("invalid/memo-unset.pt"));
        const Run r = runCli({QStringLiteral("info"), file});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.errText().startsWith(file + QStringLiteral(": error: ")),
                 qPrintable(describe(r)));
        QVERIFY(r.errText().contains(QStringLiteral("memo")));
        QCOMPARE(lines(r.errText()).size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestCliPytorch)
#include "tst_clipytorch.moc"
