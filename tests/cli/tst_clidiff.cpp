// `ckptscope-cli diff` run as a process: exit codes 0/1/2, the JSON contract
// for tensor files and gradient checkpoints against values computed here,
// the text output's order, and damaged or mismatched inputs.
#include "clirunner.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using nlohmann::json;
using namespace ckptscope;
using testsupport::str;

using clirunner::describe;
using clirunner::Run;
using clirunner::runCli;

namespace {

std::vector<float> randomValues(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(n);
    for (float& f : v)
        f = d(rng);
    return v;
}

#define JSON_COMPARE(actual, expected) QVERIFY2((actual) == (expected), (actual).dump().c_str())

bool close(double x, double y) {
    return std::fabs(x - y) <= 1e-12 * std::max({1.0, std::fabs(x), std::fabs(y)});
}

// The element fields, computed directly (double).
void checkElements(const json& t, const std::vector<float>& a, const std::vector<float>& b,
                   double atol, double rtol) {
    uint64_t differing = 0, nanMismatch = 0, finite = 0;
    double maxAbs = 0, sumAbs = 0, sumSq = 0, aa = 0, bb = 0, ab = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double x = a[i], y = b[i];
        if (std::isnan(x) != std::isnan(y)) {
            ++differing;
            ++nanMismatch;
        } else if (std::isnan(x)) {
        } else if (std::isinf(x) || std::isinf(y)) {
            differing += x != y;
        } else {
            const double d = y - x;
            differing += std::fabs(d) > atol + rtol * std::fabs(x);
            ++finite;
            maxAbs = std::max(maxAbs, std::fabs(d));
            sumAbs += std::fabs(d);
            sumSq += d * d;
            aa += x * x;
            bb += y * y;
            ab += x * y;
        }
    }
    QCOMPARE(t["count"].get<uint64_t>(), uint64_t(a.size()));
    QCOMPARE(t["differing"].get<uint64_t>(), differing);
    QCOMPARE(t["nan_mismatch"].get<uint64_t>(), nanMismatch);
    QCOMPARE(t["max_abs_diff"].get<double>(), maxAbs);
    QVERIFY(close(t["mean_abs_diff"].get<double>(), sumAbs / double(finite)));
    QVERIFY(close(t["rel_l2"].get<double>(), std::sqrt(sumSq) / std::sqrt(aa)));
    QVERIFY(close(t["cosine"].get<double>(), ab / (std::sqrt(aa) * std::sqrt(bb))));
    uint64_t binned = 0;
    for (const json& c : t["histogram"]["counts"])
        binned += c.get<uint64_t>();
    QCOMPARE(binned, finite);
}

void checkNullElements(const json& t) {
    for (const char* f : {"count", "differing", "nan_mismatch", "max_abs_diff", "mean_abs_diff",
                          "rel_l2", "cosine", "histogram"})
        QVERIFY2(t[f].is_null(), f);
}

} // namespace

class TestCliDiff : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_a, m_b, m_same, m_gradA, m_gradB;
    std::vector<float> m_x, m_x2, m_w;

    QString path(const char* name) const { return m_dir.filePath(QString::fromLatin1(name)); }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_w = randomValues(70'000, 1); // more than one block
        m_x = randomValues(1000, 2);
        m_x2 = m_x;
        for (size_t i = 0; i < m_x2.size(); i += 7)
            m_x2[i] += 0.01f * float(i % 13);
        m_x2[10] = std::nanf("");
        m_x2[11] = std::numeric_limits<float>::infinity();
        Checkpoint a, b;
        a.setMetadata("epoch", "1");
        a.setMetadata("model", "tiny");
        b.setMetadata("epoch", "2");
        b.setMetadata("model", "tiny");
        a.addTensor({"w", {70'000}, m_w});
        a.addTensor({"x", {10, 100}, m_x});
        a.addTensor({"shape", {4}, {1, 2, 3, 4}});
        a.addTensor({"gone", {1}, {1}});
        a.addTensor({"big", {4}, {1, 2, 3, 4}});
        b.addTensor({"x", {10, 100}, m_x2});
        b.addTensor({"w", {70'000}, m_w});
        b.addTensor({"shape", {2, 2}, {1, 2, 3, 4}});
        b.addTensor({"big", {4}, {10, 2, 3, 4}});
        b.addTensor({"new", {2}, {5, 6}});
        m_a = path("a.oxck");
        m_b = path("b.oxck");
        m_same = path("a-copy.oxck");
        a.save(str(m_a));
        b.save(str(m_b));
        a.save(str(m_same));

        GradientCheckpoint ga;
        ga.step = 5;
        ga.timestamp = 100;
        ga.graph.insertNode(ComputationNode("n1", "matmul", {}));
        ga.graph.insertNode(ComputationNode("n2", "relu", {"c1"}));
        ga.graph.addEdge("n1", "n2");
        ga.graph.addEdge("n1", "n2");
        ga.setOptimizerState("m", {0, 0, 128, 63});
        GradientCheckpoint gb = ga;
        gb.step = 6;
        gb.graph = ComputationGraphStore{};
        gb.graph.insertNode(ComputationNode("n1", "matmul", {"c0"}));
        gb.graph.insertNode(ComputationNode("n2", "relu", {"c1"}));
        gb.graph.insertNode(ComputationNode("n3", "add", {}));
        gb.graph.addEdge("n1", "n2");
        gb.setOptimizerState("m", {0, 0, 192, 63});
        m_gradA = path("ga.json");
        m_gradB = path("gb.json");
        ga.save(str(m_gradA));
        gb.save(str(m_gradB));
    }

    void identicalFilesExitZero() {
        for (const QString& b : {m_a, m_same}) {
            const Run r = runCli({QStringLiteral("diff"), m_a, b});
            QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
            QVERIFY(r.outText().contains(QStringLiteral("0 changed")));
            const Run j = runCli({QStringLiteral("diff"), m_a, b, QStringLiteral("--json")});
            QVERIFY2(j.exitCode == 0, qPrintable(describe(j)));
            QCOMPARE(clirunner::parseOut(j)["summary"]["same"].get<int>(), 5);
        }
        const Run g = runCli({QStringLiteral("diff"), m_gradA, m_gradA, QStringLiteral("--json")});
        QVERIFY2(g.exitCode == 0, qPrintable(describe(g)));
        QCOMPARE(clirunner::parseOut(g)["node_matching"].get<std::string>(), std::string("id"));
    }

    void tensorJsonContract() {
        const Run r = runCli({QStringLiteral("diff"), m_a, m_b, QStringLiteral("--json"),
                              QStringLiteral("--bins"), QStringLiteral("10")});
        QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
        const json j = clirunner::parseOut(r);
        QVERIFY(!j.is_discarded());
        QCOMPARE(j["format"].get<std::string>(), std::string("tensors"));
        QCOMPARE(j["a"]["path"].get<std::string>(), str(m_a));
        QCOMPARE(j["a"]["format"].get<std::string>(), std::string("oxck"));
        QCOMPARE(j["b"]["file_size"].get<uint64_t>(), uint64_t(QFile(m_b).size()));
        QCOMPARE(j["tolerance"]["atol"].get<double>(), 0.0);
        QCOMPARE(j["metadata"].size(), size_t(2));
        QCOMPARE(j["metadata"][0]["key"].get<std::string>(), std::string("epoch"));
        QCOMPARE(j["metadata"][0]["status"].get<std::string>(), std::string("changed"));
        QCOMPARE(j["metadata"][0]["b"].get<std::string>(), std::string("2"));
        QCOMPARE(j["metadata"][1]["status"].get<std::string>(), std::string("same"));

        const json& t = j["tensors"];
        std::vector<std::pair<std::string, std::string>> want = {
            {"w", "same"},       {"x", "changed"},   {"shape", "shape_changed"},
            {"gone", "removed"}, {"big", "changed"}, {"new", "added"}};
        QCOMPARE(t.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) {
            QCOMPARE(t[i]["name"].get<std::string>(), want[i].first);
            QCOMPARE(t[i]["status"].get<std::string>(), want[i].second);
        }
        checkElements(t[0], m_w, m_w, 0, 0);
        checkElements(t[1], m_x, m_x2, 0, 0);
        QCOMPARE(t[1]["histogram"]["counts"].size(), size_t(10));
        JSON_COMPARE(t[1]["shape_a"], json({10, 100}));
        QCOMPARE(t[1]["dtype_b"].get<std::string>(), std::string("F32"));
        JSON_COMPARE(t[2]["shape_b"], json({2, 2}));
        checkNullElements(t[2]);
        checkNullElements(t[3]);
        QVERIFY(t[3]["shape_b"].is_null() && t[3]["dtype_b"].is_null());
        checkNullElements(t[5]);
        QVERIFY(t[5]["shape_a"].is_null());
        const json& s = j["summary"];
        QCOMPARE(s["same"].get<int>(), 1);
        QCOMPARE(s["changed"].get<int>(), 2);
        QCOMPARE(s["added"].get<int>(), 1);
        QCOMPARE(s["removed"].get<int>(), 1);
        QCOMPARE(s["shape_changed"].get<int>(), 1);
        QCOMPARE(s["differing_elements"].get<uint64_t>(),
                 t[1]["differing"].get<uint64_t>() + t[4]["differing"].get<uint64_t>());
    }

    void toleranceDecidesTheExitCode() {
        // big: |10 - 1| = 9 is the only difference. atol 9 is inside, just below is outside.
        auto run = [&](const char* atol, const char* rtol) {
            return runCli({QStringLiteral("diff"), m_a, m_b, QStringLiteral("--tensor"),
                           QStringLiteral("big"), QStringLiteral("--atol"),
                           QString::fromLatin1(atol), QStringLiteral("--rtol"),
                           QString::fromLatin1(rtol), QStringLiteral("--json")});
        };
        // Metadata differs too: compare the tensor's own status.
        const Run inside = run("9", "0");
        QCOMPARE(clirunner::parseOut(inside)["tensors"][0]["status"].get<std::string>(),
                 std::string("same"));
        QCOMPARE(clirunner::parseOut(inside)["tolerance"]["atol"].get<double>(), 9.0);
        const Run outside = run("8.999999999", "0");
        QCOMPARE(clirunner::parseOut(outside)["tensors"][0]["status"].get<std::string>(),
                 std::string("changed"));
        QCOMPARE(clirunner::parseOut(run("4", "5"))["tensors"][0]["status"].get<std::string>(),
                 std::string("same")); // 4 + 5 * |1|
        // Without a metadata difference the exit code follows.
        Checkpoint c = Checkpoint::load(str(m_a));
        c.tensors[4].data[0] = 1.5f;
        const QString pc = path("c.oxck");
        c.save(str(pc));
        QCOMPARE(runCli({QStringLiteral("diff"), m_a, pc, QStringLiteral("--atol"),
                         QStringLiteral("0.5")})
                     .exitCode,
                 0);
        QCOMPARE(runCli({QStringLiteral("diff"), m_a, pc, QStringLiteral("--atol"),
                         QStringLiteral("0.4999")})
                     .exitCode,
                 1);
    }

    void textMostChangedFirst() {
        const Run r = runCli({QStringLiteral("diff"), m_a, m_b});
        QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
        const QStringList lines = r.outText().split(QLatin1Char('\n'));
        QVERIFY(lines[0].contains(
            QStringLiteral("2 changed, 1 added, 1 removed, 1 shape changed, 1 same")));
        // x (a NaN and an Inf gained) before big (rel_l2 9/sqrt(30), larger
        // than x's), then those without one by name.
        const QString out = r.outText();
        const qsizetype big = out.indexOf(QStringLiteral("\nbig ")),
                        x = out.indexOf(QStringLiteral("\nx ")),
                        gone = out.indexOf(QStringLiteral("\ngone ")),
                        neu = out.indexOf(QStringLiteral("\nnew ")),
                        shape = out.indexOf(QStringLiteral("\nshape "));
        QVERIFY2(x > 0 && x < big && big < gone && gone < neu && neu < shape, qPrintable(out));
        // Its line names the NaN and the Inf; the finite figures say what they cover.
        const QString xLine = out.mid(x + 1, out.indexOf(QLatin1Char('\n'), x + 1) - x - 1);
        QVERIFY2(xLine.contains(QStringLiteral("NaN 1, Inf 1")), qPrintable(xLine));
        QVERIFY(out.contains(QStringLiteral("over finite pairs")));
        QVERIFY(lines[0].contains(QStringLiteral("1 tensor with NaN/Inf mismatches")));
        QVERIFY(!out.contains(QStringLiteral(" dtype "))); // no dtype differs: no column
        QVERIFY(!out.contains(QStringLiteral("\nw ")));
        QVERIFY(out.contains(QStringLiteral("epoch (changed): 1 -> 2")));
    }

    // Equal values in another dtype (issue 22, defect 1): dtype_changed, not
    // changed; a difference all the same (exit 1); the dtypes named.
    void dtypeChanged() {
        const QString half = path("half.safetensors"), single = path("single.oxck");
        Checkpoint a;
        a.addTensor({"t", {2}, {1.0f, 2.0f}});
        a.addTensor({"u", {2}, {1.0f, 2.0f}});
        a.save(str(single));
        QFile f(half);
        QVERIFY(f.open(QIODevice::WriteOnly));
        const std::string data = testsupport::stFile(
            {{"t", "F16", {2}, testsupport::leBytes<uint16_t>({0x3C00, 0x4000})},
             {"u", "F32", {2}, testsupport::leBytes<float>({1.0f, 2.0f})}});
        f.write(data.data(), qint64(data.size()));
        f.close();
        const Run j = runCli({QStringLiteral("diff"), single, half, QStringLiteral("--json")});
        QVERIFY2(j.exitCode == 1, qPrintable(describe(j)));
        const json d = clirunner::parseOut(j);
        const json& t = d["tensors"][0];
        QCOMPARE(t["status"].get<std::string>(), std::string("dtype_changed"));
        QCOMPARE(t["dtype_a"].get<std::string>(), std::string("F32"));
        QCOMPARE(t["dtype_b"].get<std::string>(), std::string("F16"));
        QCOMPARE(t["differing"].get<uint64_t>(), uint64_t(0));
        QCOMPARE(d["tensors"][1]["status"].get<std::string>(), std::string("same"));
        QCOMPARE(d["summary"]["dtype_changed"].get<uint64_t>(), uint64_t(1));
        QCOMPARE(d["summary"]["changed"].get<uint64_t>(), uint64_t(0));
        QCOMPARE(d["summary"]["same"].get<uint64_t>(), uint64_t(1));
        const Run r = runCli({QStringLiteral("diff"), single, half});
        QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
        const QString out = r.outText();
        QVERIFY2(out.contains(QStringLiteral("0 changed, 1 dtype changed")), qPrintable(out));
        const qsizetype at = out.indexOf(QStringLiteral("\nt "));
        QVERIFY2(at > 0, qPrintable(out));
        const QString line = out.mid(at + 1, out.indexOf(QLatin1Char('\n'), at + 1) - at - 1);
        QVERIFY2(line.contains(QStringLiteral("dtype_changed")) &&
                     line.contains(QStringLiteral("F32 -> F16")),
                 qPrintable(line));
        QVERIFY(out.contains(QStringLiteral(" dtype "))); // the column's header
    }

    // Two files of one name are told apart by their directories (defect 4).
    void filesToldApart() {
        QDir(m_dir.path()).mkpath(QStringLiteral("llama"));
        QDir(m_dir.path()).mkpath(QStringLiteral("llama-ft"));
        QVERIFY(QFile::copy(m_a, path("llama/model.oxck")));
        QVERIFY(QFile::copy(m_b, path("llama-ft/model.oxck")));
        const Run r =
            runCli({QStringLiteral("diff"), path("llama/model.oxck"), path("llama-ft/model.oxck")});
        QVERIFY2(
            r.outText().startsWith(QStringLiteral("llama/model.oxck -> llama-ft/model.oxck: ")),
            qPrintable(r.outText()));
    }

    void gradientJsonContract() {
        const Run r = runCli({QStringLiteral("diff"), m_gradA, m_gradB, QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
        const json j = clirunner::parseOut(r);
        QCOMPARE(j["format"].get<std::string>(), std::string("gradient"));
        QCOMPARE(j["a"]["format"].get<std::string>(), std::string("gradient"));
        JSON_COMPARE(j["fields"][0],
                     json({{"field", "step"}, {"status", "changed"}, {"a", 5}, {"b", 6}}));
        JSON_COMPARE(j["fields"][1]["a"], json(nullptr));
        QCOMPARE(j["nodes"].size(), size_t(2));
        JSON_COMPARE(j["nodes"][0], json({{"id", "n1"},
                                          {"status", "changed"},
                                          {"op_a", "matmul"},
                                          {"op_b", "matmul"},
                                          {"changed", {"input_cids"}}}));
        JSON_COMPARE(j["nodes"][1], json({{"id", "n3"},
                                          {"status", "added"},
                                          {"op_a", nullptr},
                                          {"op_b", "add"},
                                          {"changed", json::array()}}));
        JSON_COMPARE(j["edges"]["removed"],
                     json::array({json::array({"n1", "n2"})})); // one of two copies
        JSON_COMPARE(j["edges"]["added"], json::array());
        const json& m = j["optimizer_state"][0];
        QCOMPARE(m["name"].get<std::string>(), std::string("m"));
        QCOMPARE(m["status"].get<std::string>(), std::string("changed"));
        QCOMPARE(m["bytes_a"].get<int>(), 4);
        QCOMPARE(m["differing_bytes"].get<int>(), 1);
        float fa, fb;
        const uint8_t ba[4] = {0, 0, 128, 63}, bb[4] = {0, 0, 192, 63};
        std::memcpy(&fa, ba, 4);
        std::memcpy(&fb, bb, 4);
        QCOMPARE(m["f32"]["max_abs_diff"].get<double>(), double(fb) - double(fa));
        QCOMPARE(m["f32"]["count"].get<int>(), 1);
        QCOMPARE(j["node_matching"].get<std::string>(), std::string("id"));
        JSON_COMPARE(j["summary"], json({{"nodes_same", 1},
                                         {"nodes_changed", 1},
                                         {"nodes_added", 1},
                                         {"nodes_removed", 0},
                                         {"edges_added", 0},
                                         {"edges_removed", 1},
                                         {"optimizer_changed", 1}}));
        const Run text = runCli({QStringLiteral("diff"), m_gradA, m_gradB});
        QCOMPARE(text.exitCode, 1);
        QVERIFY(text.outText().contains(QStringLiteral("step: 5 -> 6")));
    }

    void troubleExitsTwo() {
        auto check = [&](const QStringList& args, const QString& named) {
            const Run r = runCli(QStringList{QStringLiteral("diff")} + args);
            QVERIFY2(r.exitCode == 2, qPrintable(describe(r)));
            QVERIFY2(r.out.isEmpty(), qPrintable(describe(r)));
            if (!named.isEmpty())
                QVERIFY2(r.errText()
                             .trimmed()
                             .split(QLatin1Char('\n'))
                             .last()
                             .startsWith(named + QStringLiteral(": error: ")),
                         qPrintable(describe(r)));
        };
        // Missing, damaged, mixed formats: the file at fault is named.
        check({m_a, path("missing.oxck")}, path("missing.oxck"));
        QByteArray bytes = QByteArray::fromStdString(testsupport::readFile(m_b));
        const QString truncated = path("truncated.oxck");
        testsupport::writeFile(truncated, bytes.left(100).toStdString());
        check({truncated, m_b}, truncated);
        check({m_a, truncated}, truncated);
        const QString badJson = path("bad.json");
        testsupport::writeFile(badJson, "{\"graph\": {\"nodes\": 3}}");
        check({m_gradA, badJson}, badJson);
        check({m_a, m_gradA}, m_gradA);
        check({m_gradA, m_a}, m_a);
        // Usage errors and names in neither file.
        check({m_a}, QString());
        check({m_a, m_b, m_b}, QString());
        check({m_a, m_b, QStringLiteral("--atol"), QStringLiteral("-1")}, QString());
        check({m_a, m_b, QStringLiteral("--rtol"), QStringLiteral("x")}, QString());
        check({m_a, m_b, QStringLiteral("--bins"), QStringLiteral("0")}, QString());
        // The histogram is --json's: the text report has none.
        check({m_a, m_b, QStringLiteral("--bins"), QStringLiteral("5")}, QString());
        check({m_a, m_b, QStringLiteral("--frobnicate")}, QString());
        check({m_a, m_b, QStringLiteral("--tensor"), QStringLiteral("nope")}, QString());
        // A name in one file only is fine.
        const Run one = runCli({QStringLiteral("diff"), m_a, m_b, QStringLiteral("--tensor"),
                                QStringLiteral("new"), QStringLiteral("--json")});
        QCOMPARE(one.exitCode, 1);
        QCOMPARE(clirunner::parseOut(one)["tensors"].size(), size_t(1));
    }

    // --strip-prefix on both sides, --rename on B's names: pairs found
    // under their rewritten names, each row naming both; --tensor takes a
    // mapped pair by B's name too. A name too long for the regex engine
    // is refused (it overflowed the stack), not a crash.
    void renamedAndStrippedNames() {
        using testsupport::leBytes;
        const QString pa = path("ra.safetensors"), pb = path("rb.safetensors");
        testsupport::writeFile(
            pa, testsupport::stFile({{"module.w1", "F32", {2}, leBytes<float>({1, 2})},
                                     {"module.w2", "F32", {1}, leBytes<float>({3})}}));
        testsupport::writeFile(
            pb, testsupport::stFile({{"w1", "F32", {2}, leBytes<float>({1, 2})},
                                     {"other.w2", "F32", {1}, leBytes<float>({3.5f})}}));
        const QStringList mapping = {QStringLiteral("--strip-prefix"), QStringLiteral("module."),
                                     QStringLiteral("--rename"), QStringLiteral("^other\\.=")};
        const Run all =
            runCli(QStringList{QStringLiteral("diff"), pa, pb, QStringLiteral("--json")} + mapping);
        QVERIFY2(all.exitCode == 1, qPrintable(describe(all)));
        const json rows = clirunner::parseOut(all)["tensors"];
        QCOMPARE(rows.size(), size_t(2));
        QVERIFY(rows[0]["status"] == "same");
        QVERIFY(rows[1]["name"] == "module.w2");
        QVERIFY(rows[1]["name_b"] == "other.w2");
        QVERIFY(rows[1]["status"] == "changed");
        const Run byB = runCli(QStringList{QStringLiteral("diff"), pa, pb, QStringLiteral("--json"),
                                           QStringLiteral("--tensor"), QStringLiteral("other.w2")} +
                               mapping);
        QVERIFY2(byB.exitCode == 1, qPrintable(describe(byB)));
        QCOMPARE(clirunner::parseOut(byB)["tensors"].size(), size_t(1));
        QVERIFY(clirunner::parseOut(byB)["tensors"][0]["name"] == "module.w2");

        const QString pl = path("long.safetensors");
        const std::string longName = "model." + std::string(30000, 'a');
        testsupport::writeFile(pl,
                               testsupport::stFile({{longName, "F32", {1}, leBytes<float>({1})}}));
        const Run refused = runCli({QStringLiteral("diff"), pl, pl, QStringLiteral("--rename"),
                                    QStringLiteral("^model\\.(.*)=$1")});
        QVERIFY2(refused.exitCode == 2, qPrintable(describe(refused)));
        QVERIFY2(refused.errText().contains(QStringLiteral(
                     "--rename applies to tensor names of at most 4,096 bytes; tensor 1 of B")),
                 qPrintable(describe(refused)));
        // A malformed --rename is a usage error, before any file is read.
        const std::pair<const char*, const char*> bad[] = {
            {"(=x", "--rename: '(' is not a regular expression ("},
            {"x", "--rename wants REGEX=REPLACEMENT, got 'x'"},
            {"=x", "--rename wants REGEX=REPLACEMENT, got '=x'"}};
        for (const auto& [rename, message] : bad) {
            const Run r = runCli({QStringLiteral("diff"), path("absent-a"), path("absent-b"),
                                  QStringLiteral("--rename"), QString::fromUtf8(rename)});
            QVERIFY2(r.exitCode == 2, qPrintable(describe(r)));
            QVERIFY2(r.errText().contains(QString::fromUtf8(message)), qPrintable(describe(r)));
        }
    }

    void warningsPluralsAndEscapedNames() {
        // A: OXCK with a name given twice (a warning) and a name holding a
        // tab and a newline; B: a safetensors file, one element changed, one
        // "dup" fewer.
        const std::string odd = "x\ty\nz";
        Checkpoint a;
        a.addTensor({odd, {2}, {1, 2}});
        a.addTensor({"dup", {1}, {1}});
        a.addTensor({"dup", {1}, {1}});
        const QString pa = path("warned.oxck"), pb = path("odd.safetensors");
        a.save(str(pa));
        testsupport::writeFile(
            pb, testsupport::stFile({{odd, "F32", {2}, testsupport::leBytes<float>({1, 3})},
                                     {"dup", "F32", {1}, testsupport::leBytes<float>({1})}}));

        const Run j = runCli({QStringLiteral("diff"), pa, pb, QStringLiteral("--json")});
        QVERIFY2(j.exitCode == 1, qPrintable(describe(j)));
        const json out = clirunner::parseOut(j);
        QVERIFY2(out.contains("a") && out.contains("b"), qPrintable(describe(j)));
        for (const char* side : {"a", "b"})
            for (const char* key : {"path", "format", "file_size", "warnings"})
                QVERIFY2(out[side].contains(key), key);
        QCOMPARE(out["b"]["format"].get<std::string>(), std::string("safetensors"));
        JSON_COMPARE(out["b"]["warnings"], json::array());
        const json& w = out["a"]["warnings"];
        QVERIFY2(w.is_array() && w.size() == 1, w.dump().c_str());
        const QString warning = QString::fromStdString(w[0].get<std::string>());
        QVERIFY2(warning.contains(QStringLiteral("\"dup\": duplicate name")), qPrintable(warning));
        QCOMPARE(clirunner::lines(j.errText()),
                 QStringList{pa + QStringLiteral(": warning: ") + warning});

        // Text: counts with their nouns agreeing, the name escaped, one
        // line per row.
        const Run t = runCli({QStringLiteral("diff"), pa, pb});
        QVERIFY2(t.exitCode == 1, qPrintable(describe(t)));
        const QStringList lines = clirunner::lines(t.outText());
        QCOMPARE(lines.size(), 4); // summary, header, two rows
        QVERIFY2(lines[0].endsWith(QStringLiteral(": 1 changed, 0 added, 1 removed, 0 shape "
                                                  "changed, 1 same; 1 element differs; 0 of 0 "
                                                  "metadata entries differ")),
                 qPrintable(lines[0]));
        QVERIFY2(lines[2].startsWith(QStringLiteral("x\\ty\\nz  changed ")), qPrintable(lines[2]));
        QVERIFY2(lines[3].startsWith(QStringLiteral("dup      removed ")), qPrintable(lines[3]));

        // Gradient checkpoints: one node changed and one added, one of the
        // two repeated edges gone, the one blob changed.
        const Run g = runCli({QStringLiteral("diff"), m_gradA, m_gradB});
        QVERIFY2(g.exitCode == 1, qPrintable(describe(g)));
        QVERIFY2(g.outText().contains(QStringLiteral(
                     "1 node changed, 1 added, 0 removed, 1 same; 0 edges added, 1 removed; "
                     "1 of 1 optimizer blob differs\n")),
                 qPrintable(describe(g)));
    }

    // A figure beyond double is null with a warning naming it (issue 21,
    // item 6); integers differing by one above 2^24 are a change.
    void overflowNamedAndIntegersExact() {
        const QString pa = path("top-a.safetensors"), pb = path("top-b.safetensors");
        const auto [bytesA, bytesB] = testsupport::topOfRangePair();
        testsupport::writeFile(pa, bytesA);
        testsupport::writeFile(pb, bytesB);
        const Run j = runCli({QStringLiteral("diff"), pa, pb, QStringLiteral("--json")});
        QVERIFY2(j.exitCode == 1, qPrintable(describe(j)));
        const json d = clirunner::parseOut(j);
        const json& x = d["tensors"][0];
        QVERIFY2(x["max_abs_diff"].is_null(), x.dump().c_str());
        JSON_COMPARE(x["warnings"],
                     json::array({"max_abs_diff: overflows double",
                                  "histogram: 2 of 4 differences overflow double (not binned)"}));
        const QStringList err = clirunner::lines(j.errText());
        QVERIFY2(err.contains(
                     QStringLiteral("ckptscope-cli: warning: x: max_abs_diff: overflows double")),
                 qPrintable(describe(j)));
        const json& ids = d["tensors"][1];
        QCOMPARE(ids["status"].get<std::string>(), std::string("changed"));
        QCOMPARE(ids["differing"].get<uint64_t>(), uint64_t(1));
        QCOMPARE(ids["max_abs_diff"].get<double>(), 1.0);
        QVERIFY2(!ids.contains("warnings"), ids.dump().c_str());
    }

    void helpNamesEveryExitCode() {
        const Run r = runCli({QStringLiteral("--help")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.outText().contains(QStringLiteral("diff A B")));
        QVERIFY(r.outText().contains(QStringLiteral("Exit status of diff")));
        const QString readme = QString::fromStdString(
            testsupport::readFile(QStringLiteral(CKPTSCOPE_SOURCE_DIR "/README.md")));
        QVERIFY(readme.contains(QStringLiteral("ckptscope-cli diff A B")));
    }
};

QTEST_GUILESS_MAIN(TestCliDiff)
#include "tst_clidiff.moc"
