// ckptscope-cli run as a process: `info`: the --json contract checked against the conformance
// corpus (expected/NAME.json), warnings on stderr, and the human-readable tables.
#include "clirunner.h"
#include "ggufbuilder.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>
using nlohmann::json;
using namespace clirunner;
using testsupport::corpus;
using testsupport::loadJson;
using testsupport::qstr;

namespace {

uint64_t u64At(const std::string& bytes, uint64_t offset) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = v << 8 | uint8_t(bytes.at(size_t(offset) + size_t(i)));
    return v;
}

} // namespace

class TestCliInfo : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void infoJsonOxck_data();
    void infoJsonOxck();
    void infoJsonOverflowWarning();
    void infoJsonGradient_data();
    void infoJsonGradient();
    void infoJsonGradientIsCanonicalText_data();
    void infoJsonGradientIsCanonicalText();
    void humanInfoTable();
    void humanStatsAndGradient();
    void ggufSplitModel();
    void humanTextEscapedOnceUncut();
    void infoJsonGguf_data();
    void infoJsonGguf() {
        testsupport::guarded([&] { infoJsonGgufImpl(); });
    }

private:
    void infoJsonGgufImpl();
    void infoJsonOxckImpl();
    void infoJsonOverflowWarningImpl();
    void infoJsonGradientImpl();
    void infoJsonGradientIsCanonicalTextImpl();
};

void TestCliInfo::initTestCase() {
    requireCli();
}

void TestCliInfo::infoJsonOxck_data() {
    addCorpusRows("oxck");
}

void TestCliInfo::infoJsonOxckImpl() {
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

void TestCliInfo::infoJsonOverflowWarningImpl() {
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
    QVERIFY(j.at("num_params").is_null() && j.at("total_bytes").is_null());
    // The text says so too, not the saturated 18,446,744,073,709,551,615.
    const Run text = runCli({QStringLiteral("info"), path});
    QVERIFY2(text.exitCode == 0, qPrintable(describe(text)));
    QVERIFY2(text.outText().contains(
                 QStringLiteral("\nParameters  overflows 64 bits (overflows 64 bits)\n")),
             qPrintable(describe(text)));
    QVERIFY(!j.at("warnings").empty());
    const QStringList errLines = lines(r.errText());
    QVERIFY2(!errLines.isEmpty(), "no warning on stderr");
    for (const QString& l : errLines)
        QVERIFY2(l.startsWith(path + QStringLiteral(": warning: ")), qPrintable(l));
    QVERIFY2(r.errText().contains(QStringLiteral("overflow")), qPrintable(describe(r)));
}

void TestCliInfo::infoJsonGradient_data() {
    addCorpusRows("gradient");
}

void TestCliInfo::infoJsonGradientImpl() {
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

// The gradient output is written without a DOM: it must be byte for byte
// nlohmann's pretty dump of its own content (what it was when a DOM built
// it), escapes included. The corpus, and a graph with every kind of escape,
// a cycle, repeated and dangling edges and optimizer state.
void TestCliInfo::infoJsonGradientIsCanonicalText_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("odd strings") << QString();
    const QDir valid(corpus(QStringLiteral("valid")));
    for (const QString& f : valid.entryList({QStringLiteral("*.json")}, QDir::Files))
        QTest::newRow(qPrintable(f)) << valid.filePath(f);
}

void TestCliInfo::infoJsonGradientIsCanonicalTextImpl() {
    QFETCH(QString, path);
    QTemporaryDir dir;
    if (path.isEmpty()) {
        const std::vector<std::string> ids = {
            "a\"q", "b\\s", "c\x01x", "d\xc3\xa9\xe4\xb8\xad", "e\x7f", "f\tg\n\r\b\f", "h/i", "k"};
        ckptscope::ComputationGraphStore graph;
        for (size_t i = 0; i < ids.size(); ++i) {
            ckptscope::ComputationNode node(ids[i], i % 2 ? "mul\n" : "\xc3\xbcop", {});
            node.outputCid = "cid\"" + std::to_string(i);
            graph.insertNode(std::move(node));
            if (i)
                graph.addEdge(ids[i - 1], ids[i]);
        }
        graph.addEdge(ids[0], ids[1]);      // repeated
        graph.addEdge("ghost\x02", ids[2]); // unknown producer
        graph.addEdge(ids[5], ids[4]);      // a cycle
        ckptscope::GradientCheckpoint g(std::move(graph), 7);
        g = std::move(g).withLossCid("cid\"3");
        g.setOptimizerState("w\xc3\xa9\"", {1, 2, 3});
        g.setOptimizerState("b", {});
        path = dir.filePath(QStringLiteral("odd.json"));
        g.save(path.toStdString());
    }
    const Run r = runCli({QStringLiteral("info"), path, QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const auto parsed = nlohmann::ordered_json::parse(r.out.toStdString());
    const std::string canonical =
        parsed.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    QCOMPARE(r.out, QByteArray::fromStdString(canonical));
    if (path.endsWith(QStringLiteral("odd.json"))) {
        QCOMPARE(parsed.at("cycle_nodes").size(), size_t(4));
        QCOMPARE(parsed.at("warnings").size(), size_t(3)); // repeat, unknown, cycle
        QCOMPARE(qstr(parsed.at("loss_node").get<std::string>()), QStringLiteral("d\u00e9\u4e2d"));
    }
}

void TestCliInfo::humanInfoTable() {
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

void TestCliInfo::humanStatsAndGradient() {
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

// Slots: the checks, guarded.
void TestCliInfo::infoJsonOxck() {
    testsupport::guarded([this] { infoJsonOxckImpl(); });
}
void TestCliInfo::infoJsonOverflowWarning() {
    testsupport::guarded([this] { infoJsonOverflowWarningImpl(); });
}
void TestCliInfo::infoJsonGradient() {
    testsupport::guarded([this] { infoJsonGradientImpl(); });
}
void TestCliInfo::infoJsonGradientIsCanonicalText() {
    testsupport::guarded([this] { infoJsonGradientIsCanonicalTextImpl(); });
}

// GGUF: the --json contract against ggml's reading of each corpus file
// (gguf/expected/FILE.json).
void TestCliInfo::infoJsonGguf_data() {
    QTest::addColumn<QString>("file");
    if (testsupport::conformanceDir().isEmpty()) {
        QTest::newRow("no-corpus") << QString();
        return;
    }
    for (const QString& f : QDir(corpus(QStringLiteral("gguf/valid")))
                                .entryList({QStringLiteral("*.gguf")}, QDir::Files, QDir::Name))
        QTest::newRow(qPrintable(f)) << f;
}

void TestCliInfo::infoJsonGgufImpl() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    const QString path = corpus(QStringLiteral("gguf/valid/") + file);
    const json exp =
        loadJson(corpus(QStringLiteral("gguf/expected/") + file + QStringLiteral(".json")));
    const Run r = runCli({QStringLiteral("info"), path, QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const json j = parseOut(r);
    const QStringList missing = missingKeys(j, {"format", "version", "alignment", "data_offset",
                                                "metadata", "metadata_types", "tensors"});
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join(u',')));
    QCOMPARE(j.at("format").get<std::string>(), std::string("gguf"));
    QVERIFY2(j.at("version") == exp.at("version"), j.at("version").dump().c_str());
    QVERIFY2(j.at("alignment") == exp.at("alignment"), j.at("alignment").dump().c_str());
    QVERIFY2(j.at("data_offset") == exp.at("data_offset"), j.at("data_offset").dump().c_str());
    QCOMPARE(j.at("metadata").size(), exp.at("metadata").size());
    for (const json& kv : exp.at("metadata")) {
        const std::string key = kv.at("key").get<std::string>();
        std::string type = kv.at("type").get<std::string>();
        if (type == "arr") {
            const std::string of = kv.at("value").at("array_of").get<std::string>();
            type += "[" + of + "]";
            QCOMPARE(j.at("metadata").at(key).get<std::string>(),
                     "[" + std::to_string(kv.at("value").at("length").get<uint64_t>()) + " × " +
                         of + "]");
        } else if (type == "str") {
            QVERIFY2(j.at("metadata").at(key) == kv.at("value"),
                     j.at("metadata").at(key).dump().c_str());
        }
        QCOMPARE(j.at("metadata_types").at(key).get<std::string>(), type);
    }
    const json& tensors = j.at("tensors");
    QCOMPARE(tensors.size(), exp.at("tensors").size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        const json& t = tensors.at(i);
        const json& e = exp.at("tensors").at(i);
        QVERIFY2(t.at("name") == e.at("name"), t.at("name").dump().c_str());
        QCOMPARE(QString::fromStdString(t.at("dtype").get<std::string>()).toLower(),
                 QString::fromStdString(e.at("type").get<std::string>()).toLower());
        auto ne = e.at("ne").get<std::vector<uint64_t>>();
        uint64_t elements = 1;
        for (uint64_t n : ne)
            elements *= n;
        std::reverse(ne.begin(), ne.end());
        QCOMPARE(t.at("shape").get<std::vector<uint64_t>>(), ne);
        QCOMPARE(t.at("element_count").get<uint64_t>(), elements);
        QVERIFY2(t.at("offset") == e.at("offset"), t.at("offset").dump().c_str());
        QVERIFY2(t.at("size_bytes") == e.at("size"), t.at("size_bytes").dump().c_str());
        QCOMPARE(t.at("bits_per_weight").get<double>(),
                 double(e.at("size").get<uint64_t>()) * 8 / double(elements));
    }
    // The text names general.file_type as llama.cpp does, where the file has one.
    const bool typed =
        std::any_of(exp.at("metadata").begin(), exp.at("metadata").end(),
                    [](const json& kv) { return kv.at("key") == "general.file_type"; });
    const Run text = runCli({QStringLiteral("info"), path});
    QVERIFY2(text.exitCode == 0, qPrintable(describe(text)));
    QCOMPARE(text.outText().contains(QStringLiteral("\nFile type   ")), typed);
    // --json gives the name alone, null where the file names no type.
    QVERIFY2(j.contains("file_type"), "no file_type");
    QCOMPARE(j.at("file_type").is_null(), !typed);
    if (file == QStringLiteral("tiny-llama-Q4_K_M.gguf")) {
        QVERIFY2(text.outText().contains(
                     QStringLiteral("\nFile type   Q4_K_M (general.file_type 15)\n")),
                 qPrintable(text.outText()));
        QCOMPARE(j.at("file_type").get<std::string>(), std::string("Q4_K_M"));
    }
}

// A split model (gguf-split) says so, and that the header facts shown are
// its first split's; its size and tensors are the whole model's.
void TestCliInfo::ggufSplitModel() {
    QTemporaryDir dir;
    const auto path = [&](int n) {
        return dir.filePath(QStringLiteral("m-0000%1-of-00002.gguf").arg(n));
    };
    const std::string first = testsupport::ggufOf({{"split.no", 0}, {"split.count", 2}},
                                                  {{"a", {1.0f, 2.0f}}, {"b", {3.0f}}}),
                      second = testsupport::ggufOf({{"split.no", 1}, {"split.count", 2}},
                                                   {{"c", {4.0f}}});
    testsupport::writeFile(path(1), first);
    testsupport::writeFile(path(2), second);
    const Run text = runCli({QStringLiteral("info"), path(1)});
    QVERIFY2(text.exitCode == 0, qPrintable(describe(text)));
    const QString out = text.outText();
    QVERIFY2(out.contains(QStringLiteral("\nFormat      GGUF version 3 split model (2 splits; the "
                                         "first's alignment 32, data from byte ")),
             qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("\nTensors     3\n")), qPrintable(out));
    const std::string size = ckptscope::fmt::bytes(first.size() + second.size());
    QVERIFY2(out.contains(QStringLiteral("m-00001-of-00002.gguf (%1)\n").arg(qstr(size))),
             qPrintable(out));
    // One file alone is a GGUF like any other.
    const Run one = runCli({QStringLiteral("info"), path(2)});
    QVERIFY2(one.exitCode == 0, qPrintable(describe(one)));
    QVERIFY2(one.outText().contains(QStringLiteral("\nFormat      GGUF version 3, alignment 32, ")),
             qPrintable(one.outText()));
}

// The text shows every name whole (a 73-character Hugging Face name was cut
// to 60), escaped once and unambiguously: a backslash as \\, so a literal
// "\n" reads apart from a newline; bytes of no UTF-8 character as \xNN;
// a bidirectional override as \u{202e}, which would reorder the line.
void TestCliInfo::humanTextEscapedOnceUncut() {
    using testsupport::leBytes;
    QTemporaryDir dir;
    const QString st = dir.filePath(QStringLiteral("names.safetensors"));
    const std::string longName =
        "model.vision_tower.vision_model.encoder.layers.10.self_attn.q_proj.weight";
    const std::string bidi = "\u202e"
                             "evil";
    testsupport::writeFile(st,
                           testsupport::stFile({{longName, "F32", {1}, leBytes<float>({1})},
                                                {"tab\there\\n", "F32", {1}, leBytes<float>({1})},
                                                {bidi, "F32", {1}, leBytes<float>({1})}},
                                               {{"k\\n", "a\nb"}}));
    // A GGUF string may hold any bytes (a safetensors header must be UTF-8).
    testsupport::GgufBytes g;
    g.bytes = {'G', 'G', 'U', 'F'};
    g.u32(3);
    g.u64(0);
    g.u64(1);
    g.str("general.name");
    g.u32(8); // gguf_type str
    g.str("ab\xff\xfe"
          "cd");
    g.pad32();
    const QString gguf = dir.filePath(QStringLiteral("bytes.gguf"));
    testsupport::writeFile(gguf, std::string(g.bytes.begin(), g.bytes.end()));
    QString out;
    for (const QString& path : {st, gguf}) {
        const Run r = runCli({QStringLiteral("info"), path});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        out += r.outText();
    }
    const QStringList shown = {QString::fromStdString(longName) + QStringLiteral("  "),
                               QStringLiteral(" tab\\there\\\\n "),
                               QStringLiteral(" \\u{202e}evil "),
                               QStringLiteral(" k\\\\n  "),
                               QStringLiteral("  a\\nb\n"),
                               QStringLiteral("  ab\\xff\\xfecd\n")};
    for (const QString& s : shown)
        QVERIFY2(out.contains(s), qPrintable(s + QLatin1Char('\n') + out));
    QVERIFY2(!out.contains(QStringLiteral("…")), qPrintable(out));
}

QTEST_GUILESS_MAIN(TestCliInfo)
#include "tst_cliinfo.moc"
