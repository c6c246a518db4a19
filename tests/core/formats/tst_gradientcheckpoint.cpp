#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include "testsupport.h"

#include <QDir>
#include <QElapsedTimer>
#include <QRegularExpression>
#include <QStringList>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <sstream>

using namespace ckptscope;
using testsupport::qstr;
using testsupport::qstrList;
using OJson = nlohmann::ordered_json;

namespace {

std::string corpusPath(const QString& relative) {
    return testsupport::str(testsupport::corpus(relative));
}

// An independent writer: nlohmann's dump(2) has serde_json's pretty layout
// and escaping, so a DOM in the reference field order is the oracle.
OJson oracle(const GradientCheckpoint& c) {
    const auto optional = [](const std::optional<std::string>& s) {
        return s ? OJson(*s) : OJson(nullptr);
    };
    OJson nodes = OJson::object();
    for (const auto& [key, n] : c.graph.nodes()) {
        OJson node = OJson::object();
        node["id"] = n.id;
        node["op"] = n.op;
        node["input_cids"] = OJson::array();
        for (const std::string& cid : n.inputCids)
            node["input_cids"].push_back(cid);
        node["output_cid"] = optional(n.outputCid);
        node["gradient_cid"] = optional(n.gradientCid);
        node["metadata"] = OJson::object();
        for (const auto& [k, v] : n.metadata)
            node["metadata"][k] = v;
        nodes[key] = node;
    }
    OJson edges = OJson::array();
    for (const auto& [p, q] : c.graph.edges())
        edges.push_back(OJson::array({p, q}));
    OJson optimizer = OJson::object();
    for (const auto& [name, blob] : c.optimizerState) {
        OJson bytes = OJson::array();
        for (const uint8_t b : blob)
            bytes.push_back(unsigned(b));
        optimizer[name] = bytes;
    }
    OJson root = OJson::object();
    root["graph"] = OJson::object();
    root["graph"]["nodes"] = nodes;
    root["graph"]["edges"] = edges;
    root["step"] = c.step;
    root["loss_cid"] = optional(c.lossCid);
    root["optimizer_state"] = optimizer;
    root["timestamp"] = c.timestamp;
    return root;
}

OJson sortedObject(const OJson& object) {
    std::vector<std::string> keys;
    for (auto it = object.begin(); it != object.end(); ++it)
        keys.push_back(it.key());
    std::sort(keys.begin(), keys.end());
    OJson out = OJson::object();
    for (const std::string& k : keys)
        out[k] = object.at(k);
    return out;
}

// A reference-written file with its hash-map orders replaced by key order.
OJson normalised(OJson file) {
    OJson& nodes = file["graph"]["nodes"];
    for (auto it = nodes.begin(); it != nodes.end(); ++it)
        it.value()["metadata"] = sortedObject(it.value()["metadata"]);
    nodes = sortedObject(nodes);
    file["optimizer_state"] = sortedObject(file["optimizer_state"]);
    return file;
}

// Strings that stress escaping: quotes, backslashes, every control
// character, DEL, multi-byte UTF-8 (2, 3 and 4 bytes), U+2028.
std::string randomText(std::mt19937& rng, size_t maxPieces) {
    static const std::vector<std::string> pieces = {
        "a",       "Z",    "0",      " ",    "_",
        ".",       "/",    "\"",     "\\",   "\n",
        "\r",      "\t",   "\b",     "\f",   std::string(1, '\0'),
        "\x01",    "\x1f", "\x7f",   "é",    "ß",
        "日本語",  "😀",    "\u2028", "bafy", "{",
        "}",       "[",    "]",      ":",    ",",
        "\\u0041", "'"};
    std::string s;
    const size_t n = rng() % (maxPieces + 1);
    for (size_t i = 0; i < n; ++i)
        s += pieces[rng() % pieces.size()];
    return s;
}

GradientCheckpoint randomCheckpoint(std::mt19937& rng) {
    GradientCheckpoint c;
    const size_t nodeCount = rng() % 12;
    std::vector<std::string> ids;
    std::vector<std::string> cids;
    for (size_t i = 0; i < nodeCount; ++i) {
        ComputationNode n(randomText(rng, 6), randomText(rng, 4), {});
        for (size_t k = rng() % 4; k > 0; --k)
            n.inputCids.push_back(cids.empty() || rng() % 3 == 0 ? randomText(rng, 3)
                                                                 : cids[rng() % cids.size()]);
        if (rng() % 3 != 0) {
            n.outputCid = randomText(rng, 5);
            cids.push_back(*n.outputCid);
        }
        if (rng() % 2 == 0)
            n.gradientCid = randomText(rng, 5);
        for (size_t k = rng() % 4; k > 0; --k)
            n.metadata[randomText(rng, 3)] = randomText(rng, 8);
        ids.push_back(n.id);
        c.graph.insertNode(std::move(n));
    }
    for (size_t k = rng() % 15; k > 0 && !ids.empty(); --k)
        c.graph.addEdge(ids[rng() % ids.size()],
                        rng() % 7 == 0 ? randomText(rng, 2) : ids[rng() % ids.size()]);
    c.step = rng() % 4 == 0 ? UINT64_MAX : uint64_t(rng()) << (rng() % 32);
    c.timestamp = rng() % 4 == 0 ? 0 : uint64_t(rng()) * 7919;
    if (rng() % 2 == 0)
        c.lossCid = cids.empty() ? randomText(rng, 4) : cids[rng() % cids.size()];
    for (size_t k = rng() % 5; k > 0; --k) {
        std::vector<uint8_t> blob(rng() % 3 == 0 ? 0 : rng() % 3000);
        for (uint8_t& b : blob)
            b = uint8_t(rng());
        c.setOptimizerState(randomText(rng, 4), std::move(blob));
    }
    return c;
}

// Expects fromJson(text) to fail with exactly `message`.
void expectError(const std::string& text, const QString& message,
                 GradientError::Kind kind = GradientError::Kind::Schema) {
    try {
        GradientCheckpoint::fromJson(text, "t.json");
        QFAIL(qPrintable(QStringLiteral("accepted: ") + qstr(text.substr(0, 200))));
    } catch (const GradientError& e) {
        QCOMPARE(QString::fromUtf8(e.what()), message);
        QCOMPARE(int(e.kind()), int(kind));
    }
}

// A compact, valid checkpoint with replaceable parts.
struct Parts {
    std::string nodes =
        R"("n": {"id": "n", "op": "relu", "input_cids": ["a"], "output_cid": "b", "gradient_cid": null, "metadata": {"k": "v"}})";
    std::string edges = R"(["n", "n"])";
    std::string step = "12";
    std::string lossCid = "null";
    std::string optimizer = R"("m": [0, 255])";
    std::string timestamp = "99";
    std::string text() const {
        return R"({"graph": {"nodes": {)" + nodes + R"(}, "edges": [)" + edges + R"(]}, "step": )" +
               step + R"(, "loss_cid": )" + lossCid + R"(, "optimizer_state": {)" + optimizer +
               R"(}, "timestamp": )" + timestamp + "}";
    }
};

} // namespace

class TestGradientCheckpoint : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void constructorStampsTimeAndBuilders() {
        ComputationGraphStore g;
        ComputationNode loss("L", "cross_entropy", {"x"});
        loss.outputCid = "lossCid";
        g.addNode(loss);
        const auto now = [] {
            return uint64_t(std::chrono::duration_cast<std::chrono::seconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
        };
        const uint64_t before = now();
        GradientCheckpoint c = GradientCheckpoint(g, 1200).withLossCid("lossCid");
        const uint64_t after = now();
        QVERIFY(c.timestamp >= before && c.timestamp <= after);
        QCOMPARE(c.step, uint64_t(1200));
        QCOMPARE(qstr(*c.lossCid), QStringLiteral("lossCid"));
        QVERIFY(c.graph == g);
        QCOMPARE(qstr(c.lossNode()->id), QStringLiteral("L"));
        c.lossCid = "unknown";
        QVERIFY(c.lossNode() == nullptr);
        c.lossCid.reset();
        QVERIFY(c.lossNode() == nullptr);

        c.setOptimizerState("w.exp_avg", {1, 2, 3});
        c.setOptimizerState("w.exp_avg", {9});
        c.setOptimizerState("b", {});
        QCOMPARE(c.optimizerState.size(), size_t(2));
        QVERIFY(c.optimizerState.at("w.exp_avg") == std::vector<uint8_t>{9});
        QVERIFY(c.optimizerState.at("b").empty());
    }

    void toJsonLayout() {
        GradientCheckpoint c;
        ComputationNode n("id1", "matmul", {"c1", "c2"});
        n.gradientCid = "g";
        c.graph.insertNode(n.withMeta("shape", "[32,64]").withMeta("dtype", "f32"));
        c.graph.addEdge("id1", "id1");
        c.step = 1200;
        c.lossCid = "c3";
        c.setOptimizerState("w", {0, 9, 10, 99, 100, 255});
        c.setOptimizerState("e", {});
        c.timestamp = 1732867200;
        const std::string expected = R"({
  "graph": {
    "nodes": {
      "id1": {
        "id": "id1",
        "op": "matmul",
        "input_cids": [
          "c1",
          "c2"
        ],
        "output_cid": null,
        "gradient_cid": "g",
        "metadata": {
          "dtype": "f32",
          "shape": "[32,64]"
        }
      }
    },
    "edges": [
      [
        "id1",
        "id1"
      ]
    ]
  },
  "step": 1200,
  "loss_cid": "c3",
  "optimizer_state": {
    "e": [],
    "w": [
      0,
      9,
      10,
      99,
      100,
      255
    ]
  },
  "timestamp": 1732867200
})";
        QCOMPARE(qstr(c.toJson()), qstr(expected));
        std::ostringstream streamed;
        c.writeJson(streamed);
        QCOMPARE(qstr(streamed.str()), qstr(expected));
        QCOMPARE(
            qstr(GradientCheckpoint().toJson()),
            QStringLiteral("{\n  \"graph\": {\n    \"nodes\": {},\n    \"edges\": []\n  },\n"
                           "  \"step\": 0,\n  \"loss_cid\": null,\n  \"optimizer_state\": {},\n"
                           "  \"timestamp\": 0\n}"));
    }

    void stringEscaping() {
        GradientCheckpoint c;
        c.lossCid = std::string("q\" b\\ n\n r\r t\t b\b f\f nul") + '\0' +
                    " x01\x01 x1f\x1f del\x7f é 日 😀 \\u0041 /";
        const std::string json = c.toJson();
        const std::string expected = "\"loss_cid\": \"q\\\" b\\\\ n\\n r\\r t\\t b\\b f\\f "
                                     "nul\\u0000 x01\\u0001 x1f\\u001f del\x7f é 日 😀 "
                                     "\\\\u0041 /\",";
        QVERIFY2(json.find(expected) != std::string::npos, json.c_str());
        // Every ASCII character, escaped as the oracle (= serde_json) does.
        std::string all;
        for (int ch = 0; ch < 128; ++ch)
            all += char(ch);
        c.lossCid = all;
        c.graph.insertNode(ComputationNode(all, all, {all}).withMeta(all, all));
        c.setOptimizerState(all, {1});
        QCOMPARE(qstr(c.toJson()), qstr(oracle(c).dump(2)));
        QVERIFY(GradientCheckpoint::fromJson(c.toJson(), "x") == c);
    }

    void randomRoundTrips() {
        std::mt19937 rng(0x5eed2024);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath(QStringLiteral("ckpt.json")).toStdString();
        for (int round = 0; round < 200; ++round) {
            const GradientCheckpoint c = randomCheckpoint(rng);
            const std::string json = c.toJson();
            QCOMPARE(qstr(json), qstr(oracle(c).dump(2)));
            const GradientCheckpoint back = GradientCheckpoint::fromJson(json, "random.json");
            QVERIFY2(back == c, json.c_str());
            if (round % 20 == 0) {
                c.save(path);
                QVERIFY(GradientCheckpoint::load(path) == c);
                QCOMPARE(qstr(testsupport::readFile(QString::fromStdString(path))), qstr(json));
            }
        }
    }

    // 4 MiB of optimizer state is about 40 MB of text: streamed out in
    // chunks and read back through the SAX path.
    void bigOptimizerStateRoundTrip() {
        GradientCheckpoint c;
        std::mt19937 rng(3);
        std::vector<uint8_t> blob(size_t(4) << 20);
        for (uint8_t& b : blob)
            b = uint8_t(rng());
        c.setOptimizerState("layer.weight.exp_avg", blob);
        c.setOptimizerState("empty", {});
        c.step = 5;
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("big.json")).toStdString();
        QElapsedTimer timer;
        timer.start();
        c.save(path);
        const qint64 saveMs = timer.restart();
        const GradientCheckpoint back = GradientCheckpoint::load(path);
        const qint64 loadMs = timer.elapsed();
        QVERIFY(back == c);
        qInfo("4 MiB blob: save %lld ms, load %lld ms", saveMs, loadMs);
        std::ostringstream streamed;
        c.writeJson(streamed);
        QVERIFY(streamed.str() == c.toJson());
        QVERIFY(streamed.str() == testsupport::readFile(QString::fromStdString(path)));
    }

    void saveReplacesAndReportsIoErrors() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("a.json")).toStdString();
        GradientCheckpoint c;
        c.step = 1;
        c.save(path);
        c.step = 2;
        c.save(path);
        QCOMPARE(GradientCheckpoint::load(path).step, uint64_t(2));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(),
                 1); // no temporaries

        const std::string missingDir =
            dir.filePath(QStringLiteral("no/such/dir/b.json")).toStdString();
        try {
            c.save(missingDir);
            QFAIL("saved into a missing folder");
        } catch (const GradientError& e) {
            QCOMPARE(int(e.kind()), int(GradientError::Kind::Io));
            QVERIFY2(qstr(e.what()).contains(qstr(missingDir)), e.what());
        }
    }

    void loadReportsIoErrors() {
        QTemporaryDir dir;
        const std::string missing = dir.filePath(QStringLiteral("missing.json")).toStdString();
        try {
            GradientCheckpoint::load(missing);
            QFAIL("loaded a missing file");
        } catch (const GradientError& e) {
            QCOMPARE(int(e.kind()), int(GradientError::Kind::Io));
            QVERIFY2(qstr(e.what()).startsWith(qstr(missing + ": ")), e.what());
        }
        try {
            GradientCheckpoint::load(dir.path().toStdString());
            QFAIL("loaded a folder");
        } catch (const GradientError& e) {
            QVERIFY2(qstr(e.what()).startsWith(dir.path()), e.what());
        }
    }

    void schemaErrors_data() {
        QTest::addColumn<QString>("field"); // which part of Parts to replace
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("marker"); // the error points at its first occurrence
        QTest::addColumn<QString>("message");
        const auto row = [](const char* name, const char* field, const char* value,
                            const char* marker, const char* message) {
            QTest::newRow(name) << QString::fromUtf8(field) << QString::fromUtf8(value)
                                << QString::fromUtf8(marker) << QString::fromUtf8(message);
        };
        row("step string", "step", "\"1200\"", "\"1200\"",
            "\"step\" must be an unsigned integer, found string \"1200\"");
        row("step negative", "step", "-1", "-1",
            "\"step\" must be an unsigned integer, found integer -1");
        row("step fraction", "step", "1.5", "1.5",
            "\"step\" must be an unsigned integer, found number 1.5");
        row("step exponent", "step", "1e3", "1e3",
            "\"step\" must be an unsigned integer, found number 1e3");
        row("step too large", "step", "18446744073709551616", "18446744073709551616",
            "\"step\" must be an unsigned integer, found integer 18446744073709551616, which does "
            "not fit in 64 bits");
        row("step null", "step", "null", "null, \"loss",
            "\"step\" must be an unsigned integer, found null");
        row("step object", "step", "{\"a\": 1}", "{\"a\"",
            "\"step\" must be an unsigned integer, found an object");
        row("timestamp bool", "timestamp", "true", "true",
            "\"timestamp\" must be an unsigned integer, found true");
        row("timestamp negative", "timestamp", "-5", "-5",
            "\"timestamp\" must be an unsigned integer, found integer -5");
        row("loss_cid number", "lossCid", "5", "5, \"opt",
            "\"loss_cid\" must be a string or null, found integer 5");
        row("loss_cid false", "lossCid", "false", "false",
            "\"loss_cid\" must be a string or null, found false");
        row("byte 256", "optimizer", "\"m\": [1, 256]", "256",
            "byte 1 of optimizer state \"m\" must be an integer 0..255, found integer 256");
        row("byte negative", "optimizer", "\"m\": [-1]", "-1",
            "byte 0 of optimizer state \"m\" must be an integer 0..255, found integer -1");
        row("byte fraction", "optimizer", "\"m\": [3, 4, 1.0]", "1.0",
            "byte 2 of optimizer state \"m\" must be an integer 0..255, found number 1.0");
        row("byte string", "optimizer", "\"m\": [\"7\"]", "\"7\"",
            "byte 0 of optimizer state \"m\" must be an integer 0..255, found string \"7\"");
        row("byte nested", "optimizer", "\"m\": [[1]]", "[1]",
            "byte 0 of optimizer state \"m\" must be an integer 0..255, found an array");
        row("blob object", "optimizer", "\"m\": {}", "{}",
            "optimizer state \"m\" must be an array, found an object");
        row("node op number", "nodes", "\"n\": {\"id\": \"n\", \"op\": 3, \"input_cids\": []}",
            "3,", "\"op\" of node \"n\" must be a string, found integer 3");
        row("node id null", "nodes", "\"n\": {\"id\": null, \"op\": \"o\", \"input_cids\": []}",
            "null", "\"id\" of node \"n\" must be a string, found null");
        row("node missing op", "nodes", "\"n\": {\"id\": \"n\", \"input_cids\": []}", "}}",
            "missing required field \"op\" in node \"n\"");
        row("node missing input_cids", "nodes", "\"n\": {\"id\": \"n\", \"op\": \"o\"}", "}}",
            "missing required field \"input_cids\" in node \"n\"");
        row("node missing id", "nodes", "\"n\": {\"op\": \"o\", \"input_cids\": []}", "}}",
            "missing required field \"id\" in node \"n\"");
        row("input cid null", "nodes",
            "\"n\": {\"id\": \"n\", \"op\": \"o\", \"input_cids\": [\"a\", null]}", "null",
            "input CID 1 of node \"n\" must be a string, found null");
        row("input_cids string", "nodes",
            "\"n\": {\"id\": \"n\", \"op\": \"o\", \"input_cids\": \"a\"}", "\"a\"",
            "\"input_cids\" of node \"n\" must be an array, found string \"a\"");
        row("output_cid number", "nodes",
            "\"n\": {\"id\": \"n\", \"op\": \"o\", \"input_cids\": [], \"output_cid\": 1}", "1}",
            "\"output_cid\" of node \"n\" must be a string or null, found integer 1");
        row("metadata value number", "nodes",
            "\"n\": {\"id\": \"n\", \"op\": \"o\", \"input_cids\": [], \"metadata\": {\"k\": 1}}",
            "1}", "metadata \"k\" of node \"n\" must be a string, found integer 1");
        row("metadata null", "nodes",
            "\"n\": {\"id\": \"n\", \"op\": \"o\", \"input_cids\": [], \"metadata\": null}", "null",
            "\"metadata\" of node \"n\" must be an object, found null");
        row("node array", "nodes", "\"n\": []", "[]",
            "node \"n\" must be an object, found an array");
        row("node key escaped", "nodes", "\"a\\nb\": 7", "7",
            "node \"a\\nb\" must be an object, found integer 7");
        row("duplicate node field", "nodes",
            "\"n\": {\"id\": \"n\", \"op\": \"a\", \"op\": \"b\", \"input_cids\": []}",
            "\"op\": \"b", "duplicate field \"op\" in node \"n\"");
        row("edge three elements", "edges", "[\"a\", \"b\", \"c\"]", "\"c\"",
            "edge 0 must be a [producer, consumer] pair, found a third element");
        row("edge one element", "edges", "[\"n\", \"n\"], [\"a\"]", "]]",
            "edge 1 must be a [producer, consumer] pair, found 1 element");
        row("edge empty", "edges", "[]", "]]",
            "edge 0 must be a [producer, consumer] pair, found 0 elements");
        row("edge element number", "edges", "[\"a\", 1]", "1]",
            "element 1 of edge 0 must be a string, found integer 1");
        row("edge string", "edges", "\"ab\"", "\"ab\"",
            "edge 0 must be a [producer, consumer] pair, found string \"ab\"");
    }
    void schemaErrors() {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, marker);
        QFETCH(QString, message);
        Parts parts;
        const std::string v = value.toStdString();
        if (field == QLatin1String("step"))
            parts.step = v;
        else if (field == QLatin1String("timestamp"))
            parts.timestamp = v;
        else if (field == QLatin1String("lossCid"))
            parts.lossCid = v;
        else if (field == QLatin1String("optimizer"))
            parts.optimizer = v;
        else if (field == QLatin1String("nodes"))
            parts.nodes = v;
        else
            parts.edges = v;
        const std::string text = parts.text();
        const size_t at = text.find(marker.toStdString());
        QVERIFY(at != std::string::npos);
        expectError(text, QStringLiteral("t.json:1:%1: ").arg(at + 1) + message);
    }

    void structuralErrors() {
        // Positions point at the closing brace of the incomplete object.
        Parts parts;
        std::string text = parts.text();
        text.erase(text.find(", \"timestamp\": 99"), 17);
        expectError(text, QStringLiteral("t.json:1:%1: missing required field \"timestamp\" in the "
                                         "top-level object")
                              .arg(text.size()));
        text = parts.text();
        text.erase(text.find("\"step\": 12, "), 12);
        expectError(text, QStringLiteral("t.json:1:%1: missing required field \"step\" in the "
                                         "top-level object")
                              .arg(text.size()));
        text = R"({"graph": {"edges": []}, "step": 1, "optimizer_state": {}, "timestamp": 1})";
        expectError(text,
                    QStringLiteral("t.json:1:23: missing required field \"nodes\" in \"graph\""));
        text =
            R"({"graph": {"nodes": {}, "edges": {}}, "step": 1, "optimizer_state": {}, "timestamp": 1})";
        expectError(text,
                    QStringLiteral(
                        "t.json:1:34: \"edges\" in \"graph\" must be an array, found an object"));
        text = R"({"graph": [], "step": 1, "optimizer_state": {}, "timestamp": 1})";
        expectError(text,
                    QStringLiteral("t.json:1:11: \"graph\" must be an object, found an array"));
        text = R"({"step": 1, "optimizer_state": [], "timestamp": 1})";
        expectError(
            text,
            QStringLiteral("t.json:1:32: \"optimizer_state\" must be an object, found an array"));
        text = R"({"step": 1,
  "step": 2})";
        expectError(text,
                    QStringLiteral("t.json:2:3: duplicate field \"step\" in the top-level object"));
        expectError("[]", QStringLiteral(
                              "t.json:1:1: the top-level value must be an object, found an array"));
        expectError("\n  \"x\"",
                    QStringLiteral(
                        "t.json:2:3: the top-level value must be an object, found string \"x\""));
        expectError("7", QStringLiteral(
                             "t.json:1:1: the top-level value must be an object, found integer 7"));
    }

    // Where the error is and what was found: exact. The rest of the wording
    // is nlohmann's lexer's (rewritten, but not pinned here word for word).
    void syntaxErrors_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QStringList>("mentions");
        const auto row = [](const char* name, const QByteArray& text, const QString& where,
                            const QStringList& mentions) {
            QTest::newRow(name) << text << where << mentions;
        };
        const QString eof = QStringLiteral("unexpected end of file");
        row("empty", QByteArray(), QStringLiteral("t.json:1:1"), {eof});
        row("bom only", QByteArray("\xEF\xBB\xBF"), QStringLiteral("t.json:1:1"), {eof});
        row("whitespace only", QByteArray("  \n "), QStringLiteral("t.json:2:2"), {eof});
        row("not json", QByteArray("hello\n"), QStringLiteral("t.json:1:1"),
            {QStringLiteral("unexpected 'h'")});
        const QByteArray valid = QByteArray::fromStdString(Parts().text());
        row("trailing garbage", valid + "\n x", QStringLiteral("t.json:2:2"),
            {QStringLiteral("unexpected 'x'"), QStringLiteral("end of file")});
        row("second value", valid + " {}", QStringLiteral("t.json:1:%1").arg(valid.size() + 2),
            {QStringLiteral("unexpected '{'"), QStringLiteral("end of file")});
        row("truncated in object", QByteArray("{\"step\": 1,\n  "), QStringLiteral("t.json:2:3"),
            {eof});
        row("missing colon", QByteArray("{\"step\" 1}"), QStringLiteral("t.json:1:9"),
            {QStringLiteral("':'")});
        row("unterminated string", QByteArray("{\"graph\": \"abc"), QStringLiteral("t.json:1:15"),
            {QStringLiteral("string")});
        row("raw newline in string", QByteArray("{\"a\": \"x\ny\"}"), QStringLiteral("t.json:1:9"),
            {QStringLiteral("string"), QStringLiteral("U+000A")});
        row("invalid utf8", QByteArray("{\"a\": \"\xff\"}"), QStringLiteral("t.json:1:8"),
            {QStringLiteral("UTF-8"), QStringLiteral("\\xFF")});
        row("bom then error", QByteArray("\xEF\xBB\xBF{\"a\": [1,]}"),
            QStringLiteral("t.json:1:10"), {QStringLiteral("unexpected ']'")});
    }
    void syntaxErrors() {
        QFETCH(QByteArray, text);
        QFETCH(QString, where);
        QFETCH(QStringList, mentions);
        try {
            GradientCheckpoint::fromJson(text.toStdString(), "t.json");
            QFAIL("accepted");
        } catch (const GradientError& e) {
            const QString problem = testsupport::syntaxErrorProblem(e.what(), where, mentions);
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
            QCOMPARE(int(e.kind()), int(GradientError::Kind::Parse));
        }
    }

    void nestingLimit() {
        const std::string tail =
            R"(, "graph": {"nodes": {}, "edges": []}, "step": 1, "optimizer_state": {}, "timestamp": 1})";
        // The top-level object plus 63 arrays is 64 levels: accepted.
        std::string text = "{\"x\": " + std::string(63, '[') + std::string(63, ']') + tail;
        QCOMPARE(GradientCheckpoint::fromJson(text, "t.json").step, uint64_t(1));
        text = "{\"x\": " + std::string(64, '[') + std::string(64, ']') + tail;
        expectError(text, QStringLiteral("t.json:1:70: nesting deeper than 64 levels"));
        // 100000 levels inside an ignored field fail at once, without recursion.
        text = "{\"x\": " + std::string(100000, '[') + std::string(100000, ']') + tail;
        QElapsedTimer timer;
        timer.start();
        expectError(text, QStringLiteral("t.json:1:70: nesting deeper than 64 levels"));
        QVERIFY(timer.elapsed() < 2000);
        text = "{\"x\": " + std::string(100000, '['); // and never closed
        expectError(text, QStringLiteral("t.json:1:70: nesting deeper than 64 levels"));
    }

    void unknownFieldsIgnoredEverywhere() {
        const std::string text = R"({"zz": {"a": [1, {"b": null}], "c": "d", "e": -1.5e9},
            "graph": {"nodes": {"n": {"id": "n", "extra": {"deep": [[["x"]]]}, "op": "o",
            "input_cids": [], "more": 1.5, "metadata": {}, "z": null}}, "edges": [],
            "unknown": [true, false]}, "step": 1, "optimizer_state": {}, "timestamp": 2,
            "tail": "t", "huge": 123456789012345678901234567890})";
        const GradientCheckpoint c = GradientCheckpoint::fromJson(text, "t.json");
        GradientCheckpoint expected;
        expected.graph.insertNode(ComputationNode("n", "o", {}));
        expected.step = 1;
        expected.timestamp = 2;
        QVERIFY(c == expected);
    }

    void optionalFieldsDefault() {
        const std::string text =
            R"({"graph": {"nodes": {"n": {"id": "n", "op": "o", "input_cids": ["a"]}},
            "edges": []}, "step": 18446744073709551615, "optimizer_state": {"m": []}, "timestamp": 0})";
        const GradientCheckpoint c = GradientCheckpoint::fromJson(text, "t.json");
        QVERIFY(!c.lossCid);
        const ComputationNode* n = c.graph.getNode("n");
        QVERIFY(n && !n->outputCid && !n->gradientCid && n->metadata.empty());
        QCOMPARE(c.step, UINT64_MAX);
        QVERIFY(c.optimizerState.at("m").empty());
        QVERIFY(c.graph.validate().empty());
    }

    void repeatedKeysKeepTheLaterValue() {
        const std::string text = R"({"graph": {"nodes": {
            "n": {"id": "n", "op": "first", "input_cids": []},
            "n": {"id": "n", "op": "second", "input_cids": [], "metadata": {"k": "1", "k": "2"}}},
            "edges": []}, "step": 1, "optimizer_state": {"m": [1], "m": [2, 3]}, "timestamp": 2})";
        const GradientCheckpoint c = GradientCheckpoint::fromJson(text, "t.json");
        QCOMPARE(c.graph.nodeCount(), size_t(1));
        QCOMPARE(qstr(c.graph.getNode("n")->op), QStringLiteral("second"));
        QCOMPARE(qstr(c.graph.getNode("n")->metadata.at("k")), QStringLiteral("2"));
        QVERIFY(c.optimizerState.at("m") == (std::vector<uint8_t>{2, 3}));
    }

    void bomIsSkipped() {
        const std::string body = Parts().text();
        const GradientCheckpoint plain = GradientCheckpoint::fromJson(body, "t.json");
        QVERIFY(GradientCheckpoint::fromJson("\xEF\xBB\xBF" + body, "t.json") == plain);
        QCOMPARE(plain.optimizerState.at("m").size(), size_t(2));
    }

    void conformanceValidFilesMatchExpected() {
        REQUIRE_CONFORMANCE();
        const QStringList files =
            QDir(testsupport::conformanceDir() + QStringLiteral("/valid"))
                .entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
        QVERIFY(files.size() >= 5);
        for (const QString& file : files) {
            const GradientCheckpoint c =
                GradientCheckpoint::load(corpusPath(QStringLiteral("valid/") + file));
            const auto expected = nlohmann::json::parse(
                testsupport::readFile(testsupport::conformanceDir() + QStringLiteral("/expected/") +
                                      file + QStringLiteral(".json")));
            const QByteArray ctx = file.toUtf8();
            QCOMPARE(expected.at("format").get<std::string>(), std::string("gradient"));
            QVERIFY2(c.step == expected.at("step").get<uint64_t>(), ctx);
            QVERIFY2(c.timestamp == expected.at("timestamp").get<uint64_t>(), ctx);
            if (expected.at("loss_cid").is_null())
                QVERIFY2(!c.lossCid, ctx);
            else
                QVERIFY2(c.lossCid == expected.at("loss_cid").get<std::string>(), ctx);
            QVERIFY2(c.graph.nodeCount() == expected.at("node_count").get<size_t>(), ctx);
            QVERIFY2(c.graph.edgeCount() == expected.at("edge_count").get<size_t>(), ctx);
            std::vector<std::string> ops;
            for (const auto& [id, node] : c.graph.nodes())
                ops.push_back(node.op);
            std::sort(ops.begin(), ops.end());
            QCOMPARE(qstrList(ops), qstrList(expected.at("ops").get<std::vector<std::string>>()));
            const std::vector<std::string> order = c.graph.topologicalOrder();
            QCOMPARE(qstrList(order),
                     qstrList(expected.at("topological_order").get<std::vector<std::string>>()));
            std::vector<std::string> topoOps;
            for (const std::string& id : order)
                topoOps.push_back(c.graph.getNode(id)->op);
            QCOMPARE(qstrList(topoOps),
                     qstrList(expected.at("topological_ops").get<std::vector<std::string>>()));
            const ComputationNode* loss = c.lossNode();
            if (expected.at("loss_node").is_null())
                QVERIFY2(loss == nullptr, ctx);
            else
                QCOMPARE(qstr(loss->id), qstr(expected.at("loss_node").get<std::string>()));
            const auto& blobs = expected.at("optimizer_state");
            QVERIFY2(blobs.size() == c.optimizerState.size(), ctx);
            size_t i = 0;
            for (const auto& [name, bytes] : c.optimizerState) {
                const auto& row = blobs.at(i++);
                QCOMPARE(qstr(name), qstr(row.at(0).get<std::string>()));
                QVERIFY2(bytes.size() == row.at(1).get<size_t>(), ctx);
                uint64_t sum = 0;
                for (const uint8_t b : bytes)
                    sum += b;
                QVERIFY2(sum == row.at(2).get<uint64_t>(), ctx);
            }
            QVERIFY2(c.graph.validate().empty(), ctx);
        }
    }

    // The reference writer's bytes come back exactly once its hash-map orders
    // are replaced by key order; files already in key order round-trip as is.
    void conformanceFilesReserialiseByteForByte() {
        REQUIRE_CONFORMANCE();
        const QStringList files =
            QDir(testsupport::conformanceDir() + QStringLiteral("/valid"))
                .entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
        QVERIFY(!files.isEmpty());
        int identical = 0;
        for (const QString& file : files) {
            const std::string bytes = testsupport::readFile(testsupport::conformanceDir() +
                                                            QStringLiteral("/valid/") + file);
            const OJson parsed = OJson::parse(bytes);
            // The oracle writes what the reference wrote.
            QVERIFY2(parsed.dump(2) == bytes, qPrintable(file));
            const GradientCheckpoint c = GradientCheckpoint::fromJson(bytes, file.toStdString());
            const std::string ours = c.toJson();
            QVERIFY2(normalised(parsed).dump(2) == ours, qPrintable(file));
            QVERIFY2(GradientCheckpoint::fromJson(ours, "again") == c, qPrintable(file));
            if (normalised(parsed).dump(2) == bytes) {
                QVERIFY2(ours == bytes, qPrintable(file));
                ++identical;
            }
        }
        QVERIFY(identical >= 1); // empty_graph.json has no map with two keys
        const std::string empty = testsupport::readFile(testsupport::conformanceDir() +
                                                        QStringLiteral("/valid/empty_graph.json"));
        QCOMPARE(qstr(GradientCheckpoint::fromJson(empty, "e").toJson()), qstr(empty));
    }

    void conformanceInvalidFilesGetTheirVerdict() {
        REQUIRE_CONFORMANCE();
        const auto verdicts = nlohmann::json::parse(testsupport::readFile(
            testsupport::conformanceDir() + QStringLiteral("/invalid/EXPECTED.json")));
        int checked = 0;
        for (const auto& [name, entry] : verdicts.items()) {
            if (!name.ends_with(".json"))
                continue;
            ++checked;
            const std::string expect = entry.at("expect").get<std::string>();
            const std::string path = corpusPath(QStringLiteral("invalid/") + qstr(name));
            const QByteArray ctx = QByteArray::fromStdString(name + " (" + expect + ")");
            if (expect == "error") {
                try {
                    GradientCheckpoint::load(path);
                    QFAIL(ctx.constData());
                } catch (const GradientError& e) {
                    const QString msg = QString::fromUtf8(e.what());
                    const QRegularExpression where(QRegularExpression::escape(qstr(name)) +
                                                   QStringLiteral(":[1-9][0-9]*:[1-9][0-9]*: \\S"));
                    QVERIFY2(where.match(msg).hasMatch(), qPrintable(msg));
                    QVERIFY2(e.kind() != GradientError::Kind::Io, qPrintable(msg));
                }
            } else {
                const GradientCheckpoint c = GradientCheckpoint::load(path);
                const std::vector<std::string> warnings = c.graph.validate();
                QVERIFY2(warnings.empty() == (expect == "ok"), ctx.constData());
            }
        }
        QVERIFY(checked >= 12);
    }

    void conformanceInvalidMessages_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("tail"); // the message after "PATH"
        // The file ends after five spaces on line 7221: the end is column 6
        // (serde_json says 5, the column of the last character it read).
        QTest::newRow("truncated")
            << QStringLiteral("truncated.json")
            << QStringLiteral(":7221:6: unexpected end of file"); // then nlohmann's wording
        QTest::newRow("not json") << QStringLiteral("not_json.json")
                                  << QStringLiteral(":1:1: unexpected 'h'");
        QTest::newRow("deep nesting")
            << QStringLiteral("deep_nesting.json")
            << QStringLiteral(":1:1: the top-level value must be an object, found an array");
        QTest::newRow("step is string")
            << QStringLiteral("step_is_string.json")
            << QStringLiteral(
                   ":1:3687: \"step\" must be an unsigned integer, found string \"1200\"");
        QTest::newRow("negative step")
            << QStringLiteral("negative_step.json")
            << QStringLiteral(":1:3687: \"step\" must be an unsigned integer, found integer -1");
        QTest::newRow("missing timestamp")
            << QStringLiteral("missing_timestamp.json")
            << QStringLiteral(
                   ":1:99300: missing required field \"timestamp\" in the top-level object");
    }
    void conformanceInvalidMessages() {
        REQUIRE_CONFORMANCE();
        QFETCH(QString, file);
        QFETCH(QString, tail);
        const std::string path = corpusPath(QStringLiteral("invalid/") + file);
        try {
            GradientCheckpoint::load(path);
            QFAIL("accepted");
        } catch (const GradientError& e) {
            // Syntax errors: the place and what was found, then nlohmann's
            // words (not pinned); the project's own messages whole.
            const QString message = QString::fromUtf8(e.what());
            if (e.kind() == GradientError::Kind::Parse)
                QVERIFY2(message.startsWith(qstr(path) + tail), qPrintable(message));
            else
                QCOMPARE(message, qstr(path) + tail);
        }
    }

    void conformanceInvalidSpecifics() {
        REQUIRE_CONFORMANCE();
        const auto load = [](const char* name) {
            return GradientCheckpoint::load(
                corpusPath(QStringLiteral("invalid/") + QLatin1String(name)));
        };
        const auto messageOf = [&](const char* name) {
            try {
                load(name);
            } catch (const GradientError& e) {
                return QString::fromUtf8(e.what());
            }
            return QString();
        };
        QVERIFY(messageOf("blob_byte_out_of_range.json")
                    .contains(QStringLiteral("0..255, found integer 256")));
        QVERIFY(messageOf("edge_three_elements.json")
                    .contains(QStringLiteral("found a third element")));
        const GradientCheckpoint mlp =
            GradientCheckpoint::load(corpusPath(QStringLiteral("valid/mlp_step1200.json")));
        QVERIFY(load("bom_prefixed.json") == mlp);
        QVERIFY(!load("missing_loss_cid.json").lossCid);
        const auto warnings = load("edge_to_missing_node.json").graph.validate();
        QCOMPARE(warnings.size(), size_t(1));
        QVERIFY2(qstr(warnings[0]).contains(QStringLiteral("producer no-such-node is not a node")),
                 warnings[0].c_str());
    }
};

QTEST_GUILESS_MAIN(TestGradientCheckpoint)
#include "tst_gradientcheckpoint.moc"
