// ckptscope-cli run as a process: exit codes, the JSON contracts of `info`
// and `stats` checked against the conformance corpus and files written here,
// error and warning lines on stderr, and the human-readable tables.
#include "testsupport.h"

#include "ckptscope/checkpoint.h"
#include "ckptscope/gradientcheckpoint.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

using nlohmann::json;
using testsupport::qstr;
using testsupport::str;

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
    QString errText() const { return QString::fromUtf8(err); }
    QString outText() const { return QString::fromUtf8(out); }
};

Run runCli(const QStringList& args) {
    QProcess p;
    p.setProgram(QStringLiteral(CKPTSCOPE_CLI_PATH));
    p.setArguments(args);
    p.start();
    Run r;
    if (!p.waitForStarted(30000)) {
        r.err = "could not start " CKPTSCOPE_CLI_PATH;
        return r;
    }
    p.closeWriteChannel();
    if (!p.waitForFinished(240000)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out";
        return r;
    }
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1000 - p.exitCode();
    return r;
}

QString describe(const Run& r) {
    return QStringLiteral("exit %1\n--- stdout:\n%2\n--- stderr:\n%3")
        .arg(r.exitCode)
        .arg(QString::fromUtf8(r.out.left(2000)), QString::fromUtf8(r.err.left(2000)));
}

// Parses stdout as JSON; on failure returns a discarded value.
json parseOut(const Run& r) {
    return json::parse(r.out.constData(), r.out.constData() + r.out.size(), nullptr, false);
}

json loadJson(const QString& path) {
    return json::parse(testsupport::readFile(path));
}

QString corpus(const QString& rel) {
    return testsupport::conformanceDir() + QLatin1Char('/') + rel;
}

// Keys of `obj` that `required` lists but it lacks.
QStringList missingKeys(const json& obj, std::initializer_list<const char*> required) {
    QStringList missing;
    for (const char* k : required)
        if (!obj.is_object() || !obj.contains(k))
            missing << QLatin1String(k);
    return missing;
}

uint64_t u64At(const std::string& bytes, uint64_t offset) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = v << 8 | uint8_t(bytes.at(size_t(offset) + size_t(i)));
    return v;
}

QStringList lines(const QString& text) {
    return text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

// Every "<n> <unit>" size in a line, in bytes.
std::vector<double> sizesIn(const QString& line, const QString& unit) {
    static const QRegularExpression re(QStringLiteral("(\\d+(?:\\.\\d+)?) ?(B|KiB|MiB|GiB)\\b"));
    std::vector<double> out;
    auto it = re.globalMatch(line);
    while (it.hasNext()) {
        const auto m = it.next();
        if (m.captured(2) != unit)
            continue;
        const double scale = unit == QStringLiteral("KiB")   ? 1024.0
                             : unit == QStringLiteral("MiB") ? 1048576.0
                             : unit == QStringLiteral("GiB") ? 1073741824.0
                                                             : 1.0;
        out.push_back(m.captured(1).toDouble() * scale);
    }
    return out;
}

bool showsSize(const QString& line, uint64_t bytes) {
    const QString unit = bytes < 1024                  ? QStringLiteral("B")
                         : bytes < (1u << 20)          ? QStringLiteral("KiB")
                         : bytes < (uint64_t(1) << 30) ? QStringLiteral("MiB")
                                                       : QStringLiteral("GiB");
    for (double v : sizesIn(line, unit))
        if (std::fabs(v - double(bytes)) <= 0.06 * double(bytes))
            return true;
    return false;
}

std::optional<double> optDouble(const json& j) {
    if (j.is_null())
        return std::nullopt;
    return j.get<double>();
}

// Runs checks that read the CLI's JSON: a missing key or a wrong type fails
// the test with nlohmann's message instead of aborting the run.
template <typename F> void guarded(F&& checks) {
    try {
        checks();
    } catch (const json::exception& e) {
        QFAIL(qPrintable(QStringLiteral("unexpected JSON shape: ") + QString::fromUtf8(e.what())));
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QStringLiteral("unexpected exception: ") + QString::fromUtf8(e.what())));
    }
}

// The distinct edges between known nodes, self loops left out: what
// `layout` and `graph` draw.
std::set<std::pair<std::string, std::string>> drawnEdges(const json& file) {
    const json& nodes = file.at("graph").at("nodes");
    std::set<std::pair<std::string, std::string>> out;
    for (const json& e : file.at("graph").at("edges")) {
        const std::string a = e.at(0).get<std::string>(), b = e.at(1).get<std::string>();
        if (a != b && nodes.contains(a) && nodes.contains(b))
            out.emplace(a, b);
    }
    return out;
}

// Crossings of a `layout --json` drawing, recounted: each route cut between
// adjacent ranks, pairs whose order swaps (a shared end does not count).
uint64_t recountCrossings(const json& layout) {
    std::map<std::string, int> rankOf;
    for (const json& n : layout.at("nodes"))
        rankOf[n.at("id").get<std::string>()] = n.at("rank").get<int>();
    std::map<int, std::vector<std::pair<double, double>>> gaps;
    for (const json& e : layout.at("edges")) {
        const int a = rankOf.at(e.at("from").get<std::string>());
        const int b = rankOf.at(e.at("to").get<std::string>());
        std::vector<double> xs;
        for (const json& p : e.at("points"))
            xs.push_back(p.at(0).get<double>());
        if (a > b)
            std::reverse(xs.begin(), xs.end());
        for (size_t i = 0; i + 1 < xs.size(); ++i)
            gaps[std::min(a, b) + int(i)].emplace_back(xs[i], xs[i + 1]);
    }
    uint64_t crossings = 0;
    for (const auto& [gap, pieces] : gaps)
        for (size_t i = 0; i < pieces.size(); ++i)
            for (size_t j = i + 1; j < pieces.size(); ++j)
                crossings +=
                    (pieces[i].first - pieces[j].first) * (pieces[i].second - pieces[j].second) < 0;
    return crossings;
}

// Quotes in a DOT line come in pairs once escaped ones are skipped.
bool quotesBalanced(const QString& line) {
    bool inside = false;
    for (qsizetype i = 0; i < line.size(); ++i) {
        if (inside && line[i] == QLatin1Char('\\'))
            ++i;
        else if (line[i] == QLatin1Char('"'))
            inside = !inside;
    }
    return !inside;
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void help();
    void version();
    void usageErrors_data();
    void usageErrors();
    void infoJsonOxck_data();
    void infoJsonOxck();
    void infoJsonOverflowWarning();
    void infoJsonGradient_data();
    void infoJsonGradient();
    void statsJsonCorpus_data();
    void statsJsonCorpus();
    void statsJsonKnownValues();
    void statsTensorSelection();
    void statsGradientBlobs();
    void invalidFilesExit1_data();
    void invalidFilesExit1();
    void missingFileExit1();
    void humanInfoTable();
    void humanStatsAndGradient();
    void layoutJson_data();
    void layoutJson();
    void layoutSummary();
    void graphDot_data();
    void graphDot();
    void graphDotEscapesIds();
    void layoutAndGraphNeedAGraph();

private:
    void infoJsonOxckImpl();
    void infoJsonOverflowWarningImpl();
    void infoJsonGradientImpl();
    void statsJsonCorpusImpl();
    void statsJsonKnownValuesImpl();
    void statsTensorSelectionImpl();
    void statsGradientBlobsImpl();
    void layoutJsonImpl();

    QTemporaryDir m_tmp;
};

void TestCli::initTestCase() {
    QVERIFY2(QFileInfo::exists(QStringLiteral(CKPTSCOPE_CLI_PATH)),
             "ckptscope-cli is not built: " CKPTSCOPE_CLI_PATH);
    QVERIFY(m_tmp.isValid());
}

void TestCli::help() {
    for (const char* flag : {"--help", "-h"}) {
        const Run r = runCli({QLatin1String(flag)});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        const QString text = r.outText();
        QVERIFY2(text.contains(QStringLiteral("info")), qPrintable(describe(r)));
        QVERIFY2(text.contains(QStringLiteral("stats")), qPrintable(describe(r)));
        QVERIFY2(text.contains(QStringLiteral("--json")), qPrintable(describe(r)));
    }
}

void TestCli::version() {
    const Run r = runCli({QStringLiteral("--version")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    QVERIFY2(r.outText().contains(QStringLiteral(CKPTSCOPE_VERSION)), qPrintable(describe(r)));
}

void TestCli::usageErrors_data() {
    QTest::addColumn<QStringList>("args");
    const QString f = corpus(QStringLiteral("valid/mlp.oxck"));
    QTest::newRow("no-args") << QStringList();
    QTest::newRow("unknown-command") << QStringList{QStringLiteral("frobnicate"), f};
    QTest::newRow("info-no-file") << QStringList{QStringLiteral("info")};
    QTest::newRow("info-unknown-option")
        << QStringList{QStringLiteral("info"), f, QStringLiteral("--frob")};
    QTest::newRow("info-two-files") << QStringList{QStringLiteral("info"), f, f};
    QTest::newRow("info-bins-not-allowed")
        << QStringList{QStringLiteral("info"), f, QStringLiteral("--bins"), QStringLiteral("4")};
    QTest::newRow("stats-bins-zero")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--bins"), QStringLiteral("0")};
    QTest::newRow("stats-bins-negative")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--bins"), QStringLiteral("-3")};
    QTest::newRow("stats-bins-text")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--bins"), QStringLiteral("abc")};
    QTest::newRow("stats-bins-suffix")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--bins"), QStringLiteral("8x")};
    QTest::newRow("stats-bins-missing-value")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--bins")};
    QTest::newRow("stats-bins-huge")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--bins"),
                       QStringLiteral("99999999999999999999")};
    QTest::newRow("stats-tensor-missing-value")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--tensor")};
    QTest::newRow("layout-no-file") << QStringList{QStringLiteral("layout")};
    QTest::newRow("layout-dot-not-allowed")
        << QStringList{QStringLiteral("layout"), f, QStringLiteral("--dot")};
    QTest::newRow("graph-json-not-allowed")
        << QStringList{QStringLiteral("graph"), f, QStringLiteral("--json")};
}

void TestCli::usageErrors() {
    QFETCH(QStringList, args);
    const Run r = runCli(args);
    QVERIFY2(r.exitCode == 2, qPrintable(describe(r)));
    QVERIFY2(!r.err.trimmed().isEmpty(), qPrintable(describe(r)));
    QVERIFY2(r.out.isEmpty(), qPrintable(describe(r)));
}

// ---------------------------------------------------------------- info --json

void TestCli::infoJsonOxck_data() {
    QTest::addColumn<QString>("file");
    if (testsupport::conformanceDir().isEmpty()) {
        QTest::newRow("no-corpus") << QString();
        return;
    }
    for (const QString& f :
         QDir(corpus(QStringLiteral("valid"))).entryList(QDir::Files, QDir::Name))
        if (loadJson(corpus(QStringLiteral("expected/") + f + QStringLiteral(".json")))
                .at("format") == "oxck")
            QTest::newRow(qPrintable(f)) << f;
}

void TestCli::infoJsonOxckImpl() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    const QString path = corpus(QStringLiteral("valid/") + file);
    const json exp = loadJson(corpus(QStringLiteral("expected/") + file + QStringLiteral(".json")));
    const std::string bytes = testsupport::readFile(path);

    const Run r = runCli({QStringLiteral("info"), path, QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const json j = parseOut(r);
    QVERIFY2(j.is_object(), qPrintable(describe(r)));
    const QStringList missing =
        missingKeys(j, {"format", "file_size", "version", "flags", "metadata", "num_params",
                        "total_bytes", "tensors", "warnings"});
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join(u',')));

    QCOMPARE(qstr(j.at("format").get<std::string>()), QStringLiteral("oxck"));
    QCOMPARE(j.at("file_size").get<quint64>(), quint64(bytes.size()));
    QCOMPARE(j.at("version").get<quint64>(), exp.at("version").get<quint64>());
    QCOMPARE(j.at("flags").get<quint64>(), quint64(u64At(bytes, 8)));
    QVERIFY(j.at("metadata").is_object());
    QCOMPARE(j.at("metadata").size(), exp.at("metadata").size());
    for (const json& kv : exp.at("metadata")) {
        const std::string key = kv.at(0).get<std::string>();
        QVERIFY2(j.at("metadata").contains(key), key.c_str());
        QCOMPARE(qstr(j.at("metadata")[key].get<std::string>()), qstr(kv.at(1).get<std::string>()));
    }
    QCOMPARE(j.at("num_params").get<quint64>(), exp.at("num_params").get<quint64>());
    QCOMPARE(j.at("total_bytes").get<quint64>(), exp.at("total_bytes").get<quint64>());

    const json& tensors = j.at("tensors");
    QVERIFY(tensors.is_array());
    QCOMPARE(tensors.size(), exp.at("tensors").size());
    uint64_t previousEnd = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const json& t = tensors.at(i);
        const json& e = exp.at("tensors").at(i);
        const QStringList miss =
            missingKeys(t, {"name", "shape", "data_len", "element_count", "size_bytes", "offset"});
        QVERIFY2(miss.isEmpty(), qPrintable(miss.join(u',')));
        QCOMPARE(qstr(t.at("name").get<std::string>()), qstr(e.at("name").get<std::string>()));
        QVERIFY2(t.at("shape") == e.at("shape"), qPrintable(qstr(t.at("shape").dump())));
        QCOMPARE(t.at("data_len").get<quint64>(), e.at("data_len").get<quint64>());
        QCOMPARE(t.at("element_count").get<quint64>(), e.at("element_count").get<quint64>());
        QCOMPARE(t.at("size_bytes").get<quint64>(), e.at("size_bytes").get<quint64>());
        // offset: where the values start; the u64 before them is data_len,
        // and tensors follow one another.
        const uint64_t offset = t.at("offset").get<uint64_t>();
        QVERIFY(offset >= 8 && offset > previousEnd);
        QVERIFY(offset + 4 * t.at("data_len").get<uint64_t>() <= bytes.size());
        QCOMPARE(quint64(u64At(bytes, offset - 8)), e.at("data_len").get<quint64>());
        previousEnd = offset + 4 * t.at("data_len").get<uint64_t>();
    }

    // Warnings: strings, each also printed on stderr as "FILE: warning: …".
    QVERIFY(j.at("warnings").is_array());
    const QStringList errLines = lines(r.errText());
    QCOMPARE(qsizetype(j.at("warnings").size()), errLines.size());
    for (size_t i = 0; i < j.at("warnings").size(); ++i) {
        const std::string w = j.at("warnings").at(i).get<std::string>();
        QVERIFY(!w.empty());
        QVERIFY2(errLines.contains(path + QStringLiteral(": warning: ") + qstr(w)),
                 qPrintable(describe(r)));
    }
}

void TestCli::infoJsonOverflowWarningImpl() {
    REQUIRE_CONFORMANCE();
    const QString path = corpus(QStringLiteral("invalid/shape_product_overflow.oxck"));
    const Run r = runCli({QStringLiteral("info"), path, QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const json j = parseOut(r);
    QVERIFY2(j.is_object() && j.contains("tensors"), qPrintable(describe(r)));
    QVERIFY(j.at("tensors").size() >= 1);
    bool anyNull = false;
    for (const json& t : j.at("tensors")) {
        QVERIFY(t.contains("element_count"));
        if (t.at("element_count").is_null()) {
            anyNull = true;
            // No byte size can be given for it either.
            QVERIFY2(t.at("size_bytes").is_null(), qPrintable(qstr(t.dump())));
        }
    }
    QVERIFY2(anyNull, "the overflowing element count is not null");
    QVERIFY(!j.at("warnings").empty());
    const QStringList errLines = lines(r.errText());
    QVERIFY2(!errLines.isEmpty(), "no warning on stderr");
    for (const QString& l : errLines)
        QVERIFY2(l.startsWith(path + QStringLiteral(": warning: ")), qPrintable(l));
    QVERIFY2(r.errText().contains(QStringLiteral("overflow")), qPrintable(describe(r)));
}

void TestCli::infoJsonGradient_data() {
    QTest::addColumn<QString>("file");
    if (testsupport::conformanceDir().isEmpty()) {
        QTest::newRow("no-corpus") << QString();
        return;
    }
    for (const QString& f :
         QDir(corpus(QStringLiteral("valid"))).entryList(QDir::Files, QDir::Name))
        if (loadJson(corpus(QStringLiteral("expected/") + f + QStringLiteral(".json")))
                .at("format") == "gradient")
            QTest::newRow(qPrintable(f)) << f;
}

void TestCli::infoJsonGradientImpl() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    const QString path = corpus(QStringLiteral("valid/") + file);
    const json exp = loadJson(corpus(QStringLiteral("expected/") + file + QStringLiteral(".json")));
    const json input = loadJson(path); // the file itself, for node ids

    const Run r = runCli({QStringLiteral("info"), path, QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const json j = parseOut(r);
    QVERIFY2(j.is_object(), qPrintable(describe(r)));
    const QStringList missing = missingKeys(
        j, {"format", "step", "loss_cid", "timestamp", "node_count", "edge_count", "loss_node",
            "topological_order", "cycle_nodes", "ops", "optimizer_state", "warnings"});
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join(u',')));

    QCOMPARE(qstr(j.at("format").get<std::string>()), QStringLiteral("gradient"));
    QCOMPARE(j.at("step").get<quint64>(), exp.at("step").get<quint64>());
    QCOMPARE(j.at("timestamp").get<quint64>(), exp.at("timestamp").get<quint64>());
    QVERIFY2(j.at("loss_cid") == exp.at("loss_cid"), qPrintable(qstr(j.at("loss_cid").dump())));
    QVERIFY2(j.at("loss_node") == exp.at("loss_node"), qPrintable(qstr(j.at("loss_node").dump())));
    QCOMPARE(j.at("node_count").get<quint64>(), exp.at("node_count").get<quint64>());
    QCOMPARE(j.at("edge_count").get<quint64>(), exp.at("edge_count").get<quint64>());
    QVERIFY2(j.at("topological_order") == exp.at("topological_order"),
             qPrintable(qstr(j.at("topological_order").dump())));

    // cycle_nodes: every node left out of the order, sorted.
    std::set<std::string> rest;
    for (const auto& [id, node] : input.at("graph").at("nodes").items())
        rest.insert(id);
    for (const json& id : exp.at("topological_order"))
        rest.erase(id.get<std::string>());
    QVERIFY(j.at("cycle_nodes").is_array());
    QVERIFY2(j.at("cycle_nodes") == json(std::vector<std::string>(rest.begin(), rest.end())),
             qPrintable(qstr(j.at("cycle_nodes").dump())));
    if (file == QStringLiteral("diamond_and_cycle.json"))
        QCOMPARE(j.at("cycle_nodes").size(), size_t(2)); // the README's two-node cycle

    // ops: {op: count}, the counts of the expected (sorted, repeated) list.
    std::map<std::string, uint64_t> ops;
    for (const json& op : exp.at("ops"))
        ++ops[op.get<std::string>()];
    QVERIFY(j.at("ops").is_object());
    QVERIFY2(j.at("ops") == json(ops), qPrintable(qstr(j.at("ops").dump())));

    const json& blobs = j.at("optimizer_state");
    QVERIFY(blobs.is_array());
    QCOMPARE(blobs.size(), exp.at("optimizer_state").size());
    for (size_t i = 0; i < blobs.size(); ++i) {
        const json& e = exp.at("optimizer_state").at(i);
        QVERIFY(missingKeys(blobs.at(i), {"name", "bytes"}).isEmpty());
        QCOMPARE(qstr(blobs.at(i).at("name").get<std::string>()), qstr(e.at(0).get<std::string>()));
        QCOMPARE(blobs.at(i).at("bytes").get<quint64>(), e.at(1).get<quint64>());
    }
    QVERIFY(j.at("warnings").is_array());
    QCOMPARE(qsizetype(j.at("warnings").size()), lines(r.errText()).size());
}

// ---------------------------------------------------------------- stats --json

void TestCli::statsJsonCorpus_data() {
    infoJsonOxck_data();
}

void TestCli::statsJsonCorpusImpl() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    const QString path = corpus(QStringLiteral("valid/") + file);
    const json exp = loadJson(corpus(QStringLiteral("expected/") + file + QStringLiteral(".json")));
    const int bins = 7;
    const Run r = runCli({QStringLiteral("stats"), path, QStringLiteral("--json"),
                          QStringLiteral("--bins"), QString::number(bins)});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const json j = parseOut(r);
    QVERIFY2(j.is_object() && j.contains("tensors") && j.at("tensors").is_array(),
             qPrintable(describe(r)));
    const json& tensors = j.at("tensors");
    QCOMPARE(tensors.size(), exp.at("tensors").size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        const json& t = tensors.at(i);
        const json& e = exp.at("tensors").at(i);
        const QString where = QStringLiteral("tensor %1: ").arg(i) + qstr(t.dump());
        const QStringList miss = missingKeys(t, {"name", "count", "finite", "nan", "inf", "zeros",
                                                 "min", "max", "mean", "std", "l2", "histogram"});
        QVERIFY2(miss.isEmpty(), qPrintable(miss.join(u',')));
        QCOMPARE(qstr(t.at("name").get<std::string>()), qstr(e.at("name").get<std::string>()));
        const uint64_t count = t.at("count").get<uint64_t>();
        QCOMPARE(quint64(count), e.at("data_len").get<quint64>());
        QCOMPARE(t.at("nan").get<quint64>(), e.at("nan").get<quint64>());
        QCOMPARE(t.at("inf").get<quint64>(), e.at("inf").get<quint64>());
        const uint64_t finite = t.at("finite").get<uint64_t>();
        QCOMPARE(quint64(finite),
                 quint64(count - e.at("nan").get<uint64_t>() - e.at("inf").get<uint64_t>()));
        QVERIFY2(t.at("zeros").get<uint64_t>() <= finite, qPrintable(where));
        QVERIFY2(t.at("min") == e.at("min"), qPrintable(where));
        QVERIFY2(t.at("max") == e.at("max"), qPrintable(where));

        if (finite == 0) {
            QVERIFY2(t.at("mean").is_null() && t.at("std").is_null(), qPrintable(where));
            QVERIFY2(t.at("histogram").is_null() ||
                         (t.at("histogram").is_object() &&
                          t.at("histogram").value("counts", json::array()) ==
                              json(std::vector<int>(size_t(bins), 0))),
                     qPrintable(where));
            continue;
        }
        const double sum = e.at("finite_sum").get<double>();
        const double mean = t.at("mean").get<double>();
        const double spread =
            std::max(std::fabs(e.at("min").get<double>()), std::fabs(e.at("max").get<double>()));
        // |mean| is bounded by the largest magnitude; it equals sum/finite.
        QVERIFY2(std::fabs(mean - sum / double(finite)) <=
                     1e-9 * std::max(1.0, std::fabs(sum / double(finite))) +
                         (spread > 1e30 ? 1e-6 * spread / double(finite) : 0.0),
                 qPrintable(where));
        QVERIFY2(t.at("std").get<double>() >= 0 &&
                     t.at("std").get<double>() <= spread * (1 + 1e-12),
                 qPrintable(where));
        QVERIFY2(t.at("l2").get<double>() >= spread * (1 - 1e-12), qPrintable(where));

        const json& h = t.at("histogram");
        QVERIFY2(h.is_object() && h.contains("lo") && h.contains("hi") && h.contains("counts"),
                 qPrintable(where));
        QCOMPARE(h.at("lo").get<double>(), e.at("min").get<double>());
        QCOMPARE(h.at("hi").get<double>(), e.at("max").get<double>());
        QCOMPARE(h.at("counts").size(), size_t(bins));
        uint64_t total = 0;
        for (const json& c : h.at("counts"))
            total += c.get<uint64_t>();
        QCOMPARE(quint64(total), quint64(finite));
    }
}

void TestCli::statsJsonKnownValuesImpl() {
    // Values written here, so every statistic is known exactly.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    ckptscope::Checkpoint ck;
    ck.addTensor({"mixed", {9}, {0.0f, -0.0f, 1.0f, 2.0f, 3.0f, nan, inf, -inf, 4.0f}});
    ck.addTensor({"no_finite", {3}, {nan, inf, -inf}});
    ck.addTensor({"empty", {0}, {}});
    const QString path = m_tmp.filePath(QStringLiteral("known.oxck"));
    ck.save(str(path));

    const Run r = runCli({QStringLiteral("stats"), path, QStringLiteral("--json"),
                          QStringLiteral("--bins"), QStringLiteral("4")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const json j = parseOut(r);
    QVERIFY2(j.is_object() && j.contains("tensors"), qPrintable(describe(r)));
    QCOMPARE(j.at("tensors").size(), size_t(3));

    const json& m = j.at("tensors").at(0);
    QCOMPARE(qstr(m.at("name").get<std::string>()), QStringLiteral("mixed"));
    QCOMPARE(m.at("count").get<int>(), 9);
    QCOMPARE(m.at("finite").get<int>(), 6);
    QCOMPARE(m.at("nan").get<int>(), 1);
    QCOMPARE(m.at("inf").get<int>(), 2);
    QCOMPARE(m.at("zeros").get<int>(), 2);
    QCOMPARE(m.at("min").get<double>(), 0.0);
    QCOMPARE(m.at("max").get<double>(), 4.0);
    const double mean = 10.0 / 6.0;
    QVERIFY(std::fabs(m.at("mean").get<double>() - mean) < 1e-12);
    double m2 = 0;
    for (double v : {0.0, 0.0, 1.0, 2.0, 3.0, 4.0})
        m2 += (v - mean) * (v - mean);
    QVERIFY(std::fabs(m.at("std").get<double>() - std::sqrt(m2 / 6)) < 1e-12); // population
    QVERIFY(std::fabs(m.at("l2").get<double>() - std::sqrt(30.0)) < 1e-12);
    const json& h = m.at("histogram");
    QCOMPARE(h.at("lo").get<double>(), 0.0);
    QCOMPARE(h.at("hi").get<double>(), 4.0);
    // Bins of width 1 over [0, 4], the last closed: {0,-0}, {1}, {2}, {3,4}.
    QVERIFY2(h.at("counts") == json({2, 1, 1, 2}), qPrintable(qstr(h.dump())));

    for (size_t i : {size_t(1), size_t(2)}) {
        const json& t = j.at("tensors").at(i);
        const QString where = qstr(t.dump());
        QCOMPARE(t.at("finite").get<int>(), 0);
        QVERIFY2(t.at("min").is_null() && t.at("max").is_null(), qPrintable(where));
        QVERIFY2(t.at("mean").is_null() && t.at("std").is_null(), qPrintable(where));
        QVERIFY2(!optDouble(t.at("min")), qPrintable(where));
    }
    QCOMPARE(j.at("tensors").at(1).at("count").get<int>(), 3);
    QCOMPARE(j.at("tensors").at(1).at("nan").get<int>(), 1);
    QCOMPARE(j.at("tensors").at(1).at("inf").get<int>(), 2);
    QCOMPARE(j.at("tensors").at(2).at("count").get<int>(), 0);

    // Default bin count (documented in --help as 32).
    const Run d = runCli({QStringLiteral("stats"), path, QStringLiteral("--json")});
    QVERIFY2(d.exitCode == 0, qPrintable(describe(d)));
    const json dj = parseOut(d);
    QVERIFY(dj.is_object());
    QCOMPARE(dj.at("tensors").at(0).at("histogram").at("counts").size(), size_t(32));
}

void TestCli::statsTensorSelectionImpl() {
    REQUIRE_CONFORMANCE();
    const QString path = corpus(QStringLiteral("valid/edge_cases.oxck"));
    const json exp = loadJson(corpus(QStringLiteral("expected/edge_cases.oxck.json")));
    // Pick a tensor with a non-ASCII name and a repeated one (first match).
    std::string unicode, dup;
    std::map<std::string, int> seen;
    const json* firstDup = nullptr;
    for (const json& t : exp.at("tensors")) {
        const std::string name = t.at("name").get<std::string>();
        bool ascii = true;
        for (unsigned char c : name)
            ascii = ascii && c < 0x80;
        if (!ascii && unicode.empty())
            unicode = name;
        if (++seen[name] == 2 && dup.empty() && !name.empty())
            dup = name;
    }
    QVERIFY2(!unicode.empty() && !dup.empty(), "edge_cases.oxck lacks the names it documents");
    for (const json& t : exp.at("tensors"))
        if (t.at("name").get<std::string>() == dup && !firstDup)
            firstDup = &t;

    const Run r = runCli({QStringLiteral("stats"), path, QStringLiteral("--json"),
                          QStringLiteral("--tensor"), qstr(dup), QStringLiteral("--tensor"),
                          qstr(unicode), QStringLiteral("--bins"), QStringLiteral("3")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const json j = parseOut(r);
    QVERIFY2(j.is_object() && j.at("tensors").size() == 2, qPrintable(describe(r)));
    QCOMPARE(qstr(j.at("tensors").at(0).at("name").get<std::string>()), qstr(dup));
    QCOMPARE(j.at("tensors").at(0).at("count").get<quint64>(),
             firstDup->at("data_len").get<quint64>());
    QVERIFY(j.at("tensors").at(0).at("max") == firstDup->at("max"));
    QCOMPARE(qstr(j.at("tensors").at(1).at("name").get<std::string>()), qstr(unicode));
    QCOMPARE(j.at("tensors").at(1).at("histogram").at("counts").size(), size_t(3));

    const Run bad = runCli({QStringLiteral("stats"), path, QStringLiteral("--tensor"),
                            QStringLiteral("no.such.tensor")});
    QVERIFY2(bad.exitCode != 0, qPrintable(describe(bad)));
    QVERIFY2(bad.errText().contains(QStringLiteral("no.such.tensor")), qPrintable(describe(bad)));
}

void TestCli::statsGradientBlobsImpl() {
    REQUIRE_CONFORMANCE();
    // Optimizer-state blobs whose length is a multiple of 4 read as f32 LE:
    // decode them here from the file and compare.
    const QString path = corpus(QStringLiteral("valid/mlp_step1200.json"));
    const json input = loadJson(path);
    const Run r = runCli({QStringLiteral("stats"), path, QStringLiteral("--json"),
                          QStringLiteral("--bins"), QStringLiteral("5")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const json j = parseOut(r);
    QVERIFY2(j.is_object() && j.contains("tensors"), qPrintable(describe(r)));
    std::map<std::string, const json*> byName;
    for (const json& t : j.at("tensors"))
        byName[t.at("name").get<std::string>()] = &t;
    size_t expectedTargets = 0;
    for (const auto& [name, arr] : input.at("optimizer_state").items()) {
        if (arr.size() % 4 != 0) {
            QVERIFY2(!byName.count(name), name.c_str());
            continue;
        }
        ++expectedTargets;
        QVERIFY2(byName.count(name), name.c_str());
        const json& t = *byName[name];
        std::vector<uint8_t> raw;
        for (const json& b : arr)
            raw.push_back(b.get<uint8_t>());
        uint64_t nan = 0, inf = 0, finite = 0;
        std::optional<double> mn, mx;
        for (size_t k = 0; k + 4 <= raw.size(); k += 4) {
            const uint32_t bits = uint32_t(raw[k]) | uint32_t(raw[k + 1]) << 8 |
                                  uint32_t(raw[k + 2]) << 16 | uint32_t(raw[k + 3]) << 24;
            float f;
            std::memcpy(&f, &bits, 4);
            if (std::isnan(f)) {
                ++nan;
            } else if (std::isinf(f)) {
                ++inf;
            } else {
                ++finite;
                mn = mn ? std::min(*mn, double(f)) : double(f);
                mx = mx ? std::max(*mx, double(f)) : double(f);
            }
        }
        const QString where = qstr(t.dump());
        QCOMPARE(t.at("count").get<quint64>(), quint64(raw.size() / 4));
        QCOMPARE(t.at("nan").get<quint64>(), quint64(nan));
        QCOMPARE(t.at("inf").get<quint64>(), quint64(inf));
        QCOMPARE(t.at("finite").get<quint64>(), quint64(finite));
        QVERIFY2(optDouble(t.at("min")) == mn, qPrintable(where));
        QVERIFY2(optDouble(t.at("max")) == mx, qPrintable(where));
    }
    QCOMPARE(j.at("tensors").size(), expectedTargets);
    QVERIFY(expectedTargets > 0);
}

// ---------------------------------------------------------------- errors

void TestCli::invalidFilesExit1_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("command");
    for (const char* f : {"truncated_in_data.oxck", "hostile_tensor_count.oxck",
                          "tiny_file_huge_count.oxck", "hostile_data_len.oxck"})
        for (const char* c : {"info", "stats"})
            QTest::newRow(
                qPrintable(QStringLiteral("%1 %2").arg(QLatin1String(c), QLatin1String(f))))
                << QString::fromLatin1(f) << QString::fromLatin1(c);
}

void TestCli::invalidFilesExit1() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    QFETCH(QString, command);
    const QString path = corpus(QStringLiteral("invalid/") + file);
    for (const QStringList& extra : {QStringList(), QStringList{QStringLiteral("--json")}}) {
        const Run r = runCli(QStringList{command, path} + extra);
        QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
        QVERIFY2(r.errText().startsWith(path + QStringLiteral(": error: ")),
                 qPrintable(describe(r)));
        static const QRegularExpression byteRe(QStringLiteral("\\bbyte \\d+"));
        QVERIFY2(r.errText().contains(byteRe), qPrintable(describe(r)));
        QVERIFY2(r.out.isEmpty(), qPrintable(describe(r)));
    }
}

void TestCli::missingFileExit1() {
    const QString path = m_tmp.filePath(QStringLiteral("does_not_exist.oxck"));
    const Run r = runCli({QStringLiteral("info"), path});
    QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
    QVERIFY2(r.errText().startsWith(path + QStringLiteral(": error: ")), qPrintable(describe(r)));

    // Garbage: says what it found.
    const QString garbage = m_tmp.filePath(QStringLiteral("garbage.bin"));
    testsupport::writeFile(garbage, "hello, not a checkpoint");
    const Run g = runCli({QStringLiteral("stats"), garbage, QStringLiteral("--json")});
    QVERIFY2(g.exitCode == 1, qPrintable(describe(g)));
    QVERIFY2(g.errText().startsWith(garbage + QStringLiteral(": error: ")),
             qPrintable(describe(g)));
    QVERIFY2(g.errText().contains(QStringLiteral("hell")), qPrintable(describe(g)));
}

// ---------------------------------------------------------------- human output

void TestCli::humanInfoTable() {
    REQUIRE_CONFORMANCE();
    for (const char* name : {"mlp.oxck", "distributions.oxck"}) {
        const QString path = corpus(QStringLiteral("valid/") + QLatin1String(name));
        const json exp = loadJson(
            corpus(QStringLiteral("expected/") + QLatin1String(name) + QStringLiteral(".json")));
        const Run r = runCli({QStringLiteral("info"), path});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QVERIFY2(parseOut(r).is_discarded(), "human output should not be JSON");
        const QStringList out = lines(r.outText());
        // The file size, in KiB/MiB, somewhere in the header.
        const uint64_t fileSize = uint64_t(QFileInfo(path).size());
        bool sizeShown = false;
        for (const QString& l : out)
            sizeShown = sizeShown || showsSize(l, fileSize);
        QVERIFY2(sizeShown, qPrintable(describe(r)));
        // One table row per tensor, with its size in human units.
        for (const json& t : exp.at("tensors")) {
            const QString tname = qstr(t.at("name").get<std::string>());
            const uint64_t size = t.at("size_bytes").get<uint64_t>();
            QStringList rows;
            for (const QString& l : out)
                if (l.contains(QLatin1Char(' ') + tname + QLatin1Char(' ')))
                    rows << l;
            QVERIFY2(rows.size() == 1, qPrintable(tname + QLatin1Char('\n') + describe(r)));
            QVERIFY2(showsSize(rows[0], size), qPrintable(rows[0]));
        }
        // Metadata keys and values are shown.
        for (const json& kv : exp.at("metadata"))
            QVERIFY2(r.outText().contains(qstr(kv.at(1).get<std::string>())),
                     qPrintable(describe(r)));
    }
    // Units are what the sizes call for: KiB for mlp's 8 KiB tensor, MiB
    // for the 1.2 MiB distributions file.
    const Run kib = runCli({QStringLiteral("info"), corpus(QStringLiteral("valid/mlp.oxck"))});
    QVERIFY2(kib.outText().contains(QStringLiteral("KiB")), qPrintable(describe(kib)));
    const Run mib =
        runCli({QStringLiteral("info"), corpus(QStringLiteral("valid/distributions.oxck"))});
    QVERIFY2(mib.outText().contains(QStringLiteral("MiB")), qPrintable(describe(mib)));
}

void TestCli::humanStatsAndGradient() {
    REQUIRE_CONFORMANCE();
    const QString mlp = corpus(QStringLiteral("valid/mlp.oxck"));
    const json exp = loadJson(corpus(QStringLiteral("expected/mlp.oxck.json")));
    const Run r = runCli({QStringLiteral("stats"), mlp});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    QVERIFY2(r.outText().contains(QStringLiteral("mean")), qPrintable(describe(r)));
    for (const json& t : exp.at("tensors"))
        QVERIFY2(r.outText().contains(qstr(t.at("name").get<std::string>())),
                 qPrintable(describe(r)));

    const QString grad = corpus(QStringLiteral("valid/mlp_step1200.json"));
    const json gexp = loadJson(corpus(QStringLiteral("expected/mlp_step1200.json.json")));
    const Run g = runCli({QStringLiteral("info"), grad});
    QVERIFY2(g.exitCode == 0, qPrintable(describe(g)));
    QVERIFY2(parseOut(g).is_discarded(), "human output should not be JSON");
    const QString text = g.outText();
    QVERIFY2(text.contains(QString::number(gexp.at("step").get<quint64>())),
             qPrintable(describe(g)));
    QVERIFY2(text.contains(qstr(gexp.at("loss_node").get<std::string>())), qPrintable(describe(g)));
    // Optimizer blobs with sizes in human units (8192 bytes → KiB).
    for (const json& b : gexp.at("optimizer_state")) {
        const QString name = qstr(b.at(0).get<std::string>());
        const uint64_t bytes = b.at(1).get<uint64_t>();
        QStringList rows;
        for (const QString& l : lines(text))
            if (l.contains(QLatin1Char(' ') + name + QLatin1Char(' ')))
                rows << l;
        QVERIFY2(rows.size() == 1, qPrintable(name + QLatin1Char('\n') + describe(g)));
        if (bytes > 0)
            QVERIFY2(showsSize(rows[0], bytes), qPrintable(rows[0]));
    }
}

// ---------------------------------------------------------------- layout, graph

void TestCli::layoutJson_data() {
    infoJsonGradient_data();
}

void TestCli::layoutJsonImpl() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    const QString path = corpus(QStringLiteral("valid/") + file);
    const json input = loadJson(path);
    const Run r = runCli({QStringLiteral("layout"), path, QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const json j = parseOut(r);
    QVERIFY2(j.is_object(), qPrintable(describe(r)));
    QVERIFY2(missingKeys(j, {"nodes", "edges", "crossings"}).isEmpty(), qPrintable(describe(r)));
    QVERIFY(j.at("nodes").is_array() && j.at("edges").is_array());
    QVERIFY(j.at("crossings").is_number_unsigned());

    // Every node once, with its box and rank; y grows with rank.
    std::map<std::string, json> nodes;
    for (const json& n : j.at("nodes")) {
        QVERIFY2(missingKeys(n, {"id", "x", "y", "width", "height", "rank"}).isEmpty(),
                 qPrintable(qstr(n.dump())));
        for (const char* k : {"x", "y", "width", "height"})
            QVERIFY2(n.at(k).is_number(), qPrintable(qstr(n.dump())));
        QVERIFY(n.at("rank").is_number_integer() && n.at("rank").get<int>() >= 0);
        QVERIFY(n.at("width").get<double>() > 0 && n.at("height").get<double>() > 0);
        QVERIFY2(nodes.emplace(n.at("id").get<std::string>(), n).second,
                 qPrintable(qstr(n.dump())));
    }
    std::set<std::string> ids;
    for (const auto& [id, node] : input.at("graph").at("nodes").items())
        ids.insert(id);
    QCOMPARE(nodes.size(), ids.size());
    for (const std::string& id : ids)
        QVERIFY2(nodes.contains(id), id.c_str());
    for (const auto& [ia, a] : nodes)
        for (const auto& [ib, b] : nodes)
            if (a.at("rank").get<int>() < b.at("rank").get<int>())
                QVERIFY(a.at("y").get<double>() < b.at("y").get<double>());

    // Every distinct edge once, routed from border to border.
    std::set<std::pair<std::string, std::string>> edges;
    for (const json& e : j.at("edges")) {
        QVERIFY2(missingKeys(e, {"from", "to", "points", "reversed"}).isEmpty(),
                 qPrintable(qstr(e.dump())));
        QVERIFY(e.at("reversed").is_boolean());
        const std::string from = e.at("from").get<std::string>(),
                          to = e.at("to").get<std::string>();
        QVERIFY2(edges.emplace(from, to).second, qPrintable(qstr(e.dump())));
        const json& pts = e.at("points");
        QVERIFY2(pts.is_array() && pts.size() >= 2, qPrintable(qstr(e.dump())));
        const json &a = nodes.at(from), &b = nodes.at(to);
        const double sign = e.at("reversed").get<bool>() ? -1 : 1;
        const json &first = pts.front(), &last = pts.back();
        QCOMPARE(first.at(0).get<double>(), a.at("x").get<double>());
        QCOMPARE(first.at(1).get<double>(),
                 a.at("y").get<double>() + sign * a.at("height").get<double>() / 2);
        QCOMPARE(last.at(0).get<double>(), b.at("x").get<double>());
        QCOMPARE(last.at(1).get<double>(),
                 b.at("y").get<double>() - sign * b.at("height").get<double>() / 2);
        QCOMPARE(int(pts.size()) - 1, std::abs(b.at("rank").get<int>() - a.at("rank").get<int>()));
    }
    QVERIFY(edges == drawnEdges(input));
    QCOMPARE(j.at("crossings").get<uint64_t>(), recountCrossings(j));
    if (file == QStringLiteral("diamond_and_cycle.json")) {
        int reversed = 0;
        for (const json& e : j.at("edges"))
            reversed += e.at("reversed").get<bool>();
        QCOMPARE(reversed, 1); // the two-node cycle
    }
}

void TestCli::layoutSummary() {
    REQUIRE_CONFORMANCE();
    const QString path = corpus(QStringLiteral("valid/transformer_24l.json"));
    const Run r = runCli({QStringLiteral("layout"), path});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    QVERIFY2(parseOut(r).is_discarded(), "human output should not be JSON");
    const QString text = r.outText();
    for (const char* word : {"Nodes", "Edges", "Ranks", "Crossings", "reversed", "Size"})
        QVERIFY2(text.contains(QLatin1String(word)), qPrintable(describe(r)));
    static const QRegularExpression nodes(QStringLiteral("Nodes\\s+484\\b"));
    static const QRegularExpression edges(QStringLiteral("Edges\\s+603\\b"));
    QVERIFY2(text.contains(nodes) && text.contains(edges), qPrintable(describe(r)));
}

void TestCli::graphDot_data() {
    infoJsonGradient_data();
}

void TestCli::graphDot() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    const QString path = corpus(QStringLiteral("valid/") + file);
    const json input = loadJson(path);
    const json exp = loadJson(corpus(QStringLiteral("expected/") + file + QStringLiteral(".json")));
    const Run r = runCli({QStringLiteral("graph"), path, QStringLiteral("--dot")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const QString text = r.outText();
    QVERIFY2(text.startsWith(QStringLiteral("digraph")), qPrintable(describe(r)));
    QVERIFY2(text.trimmed().endsWith(QLatin1Char('}')), qPrintable(describe(r)));
    for (const QString& line : lines(text))
        QVERIFY2(quotesBalanced(line), qPrintable(line));
    // Every node declared with its op as label; every drawn edge once.
    for (const auto& [id, node] : input.at("graph").at("nodes").items()) {
        const QString decl = QLatin1Char('"') + qstr(id) + QStringLiteral("\" [label=\"") +
                             qstr(node.at("op").get<std::string>()) + QLatin1Char('"');
        QVERIFY2(text.contains(decl), qPrintable(decl));
    }
    const auto edges = drawnEdges(input);
    QCOMPARE(size_t(text.count(QStringLiteral(" -> "))), edges.size());
    for (const auto& [a, b] : edges)
        QVERIFY(text.contains(QLatin1Char('"') + qstr(a) + QStringLiteral("\" -> \"") + qstr(b) +
                              QLatin1Char('"')));
    // The loss node stands out.
    if (!exp.at("loss_node").is_null()) {
        const QString loss = QLatin1Char('"') + qstr(exp.at("loss_node").get<std::string>()) +
                             QStringLiteral("\" [");
        QStringList decl;
        for (const QString& line : lines(text))
            if (line.trimmed().startsWith(loss))
                decl << line;
        QCOMPARE(decl.size(), 1);
        QVERIFY2(decl[0].contains(QStringLiteral("filled")), qPrintable(decl[0]));
    }
    // --dot is the default.
    const Run plain = runCli({QStringLiteral("graph"), path});
    QVERIFY2(plain.exitCode == 0 && plain.out == r.out, qPrintable(describe(plain)));
}

void TestCli::graphDotEscapesIds() {
    // Ids and ops with quotes, backslashes and a line break.
    ckptscope::ComputationGraphStore g;
    g.insertNode(ckptscope::ComputationNode("say \"hi\"", "op\"x", {}));
    g.insertNode(ckptscope::ComputationNode("back\\slash\\", "add", {}));
    g.insertNode(ckptscope::ComputationNode("two\nlines", "mul", {}));
    g.addEdge("say \"hi\"", "back\\slash\\");
    g.addEdge("back\\slash\\", "two\nlines");
    const QString path = m_tmp.filePath(QStringLiteral("odd_ids.json"));
    ckptscope::GradientCheckpoint(g, 3).save(str(path));

    const Run r = runCli({QStringLiteral("graph"), path, QStringLiteral("--dot")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const QString text = r.outText();
    for (const QString& line : lines(text))
        QVERIFY2(quotesBalanced(line), qPrintable(line));
    QVERIFY2(text.contains(QStringLiteral("\"say \\\"hi\\\"\" [label=\"op\\\"x\"")),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("\"say \\\"hi\\\"\" -> \"back\\\\slash\\\\\"")),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("\"back\\\\slash\\\\\" -> \"two\\nlines\"")),
             qPrintable(text));

    const Run l = runCli({QStringLiteral("layout"), path, QStringLiteral("--json")});
    QVERIFY2(l.exitCode == 0, qPrintable(describe(l)));
    const json j = parseOut(l);
    QVERIFY2(j.is_object() && j.at("nodes").size() == 3 && j.at("edges").size() == 2,
             qPrintable(describe(l)));
    QCOMPARE(qstr(j.at("edges").at(0).at("from").get<std::string>()), QStringLiteral("say \"hi\""));
}

void TestCli::layoutAndGraphNeedAGraph() {
    REQUIRE_CONFORMANCE();
    const QString path = corpus(QStringLiteral("valid/mlp.oxck"));
    for (const QStringList& args :
         {QStringList{QStringLiteral("layout"), path},
          QStringList{QStringLiteral("layout"), path, QStringLiteral("--json")},
          QStringList{QStringLiteral("graph"), path, QStringLiteral("--dot")}}) {
        const Run r = runCli(args);
        QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
        QVERIFY2(r.errText().startsWith(path + QStringLiteral(": error: ")),
                 qPrintable(describe(r)));
        QVERIFY2(r.errText().contains(QStringLiteral("gradient")), qPrintable(describe(r)));
        QVERIFY2(r.out.isEmpty(), qPrintable(describe(r)));
    }
    // The help names both commands.
    const Run h = runCli({QStringLiteral("--help")});
    QVERIFY(h.outText().contains(QStringLiteral("layout FILE")));
    QVERIFY(h.outText().contains(QStringLiteral("graph FILE")));
}

// Slots: the checks, guarded.
void TestCli::infoJsonOxck() {
    guarded([this] { infoJsonOxckImpl(); });
}
void TestCli::infoJsonOverflowWarning() {
    guarded([this] { infoJsonOverflowWarningImpl(); });
}
void TestCli::infoJsonGradient() {
    guarded([this] { infoJsonGradientImpl(); });
}
void TestCli::statsJsonCorpus() {
    guarded([this] { statsJsonCorpusImpl(); });
}
void TestCli::statsJsonKnownValues() {
    guarded([this] { statsJsonKnownValuesImpl(); });
}
void TestCli::statsTensorSelection() {
    guarded([this] { statsTensorSelectionImpl(); });
}
void TestCli::statsGradientBlobs() {
    guarded([this] { statsGradientBlobsImpl(); });
}
void TestCli::layoutJson() {
    guarded([this] { layoutJsonImpl(); });
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
