// The gradient JSON reader's two paths (core/src/formats/gradient/gradientjsonreader.h): the
// fast path either gives up or builds exactly the checkpoint the SAX reader
// builds, and it gives up on every text the SAX reader rejects — over every
// conformance file, generated graphs, hand-written oddities and a few
// hundred seeded random mutations of them.
#include "formats/gradient/gradientjsonreader.h"
#include "testsupport.h"

#include "ckptscope/export/samplegenerator.h"
#include "ckptscope/formats/gradient/gradienterror.h"

#include <QDir>
#include <QTest>

#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace ckptscope;
using testsupport::qstr;

namespace {

struct Text {
    std::string name;
    std::string text;
    bool graphOnly = false;
};

enum class Verdict { FastAgrees, FastGaveUp, BothRejected };

// Runs both paths; fails the test (and returns nullopt) when they disagree.
std::optional<Verdict> compare(const Text& t) {
    const std::string_view text = gradientjson::withoutBom(t.text);
    const std::optional<GradientCheckpoint> fast = gradientjson::readFast(text, t.graphOnly);
    std::optional<GradientCheckpoint> sax;
    std::string saxError;
    try {
        sax = gradientjson::readSax(text, "t.json", t.graphOnly);
    } catch (const GradientError& e) {
        saxError = e.what();
    }
    const QString where =
        qstr(t.name) + (t.graphOnly ? QStringLiteral(" (graph only)") : QString());
    if (!sax) {
        [&] {
            QVERIFY2(!fast, qPrintable(where +
                                       QStringLiteral(": the fast path accepted a text the "
                                                      "SAX reader rejects: ") +
                                       qstr(saxError)));
        }();
        return QTest::currentTestFailed() ? std::nullopt : std::optional(Verdict::BothRejected);
    }
    if (!fast)
        return Verdict::FastGaveUp;
    [&] {
        QVERIFY2(*fast == *sax,
                 qPrintable(where + QStringLiteral(": the two paths built different checkpoints")));
    }();
    return QTest::currentTestFailed() ? std::nullopt : std::optional(Verdict::FastAgrees);
}

std::vector<Text> generatedGraphs() {
    std::vector<Text> out;
    for (uint64_t nodes : {0, 1, 30, 400, 3000}) {
        SyntheticGraphSpec spec;
        spec.nodeCount = nodes;
        spec.optimizerBytes = nodes * 64;
        spec.completeBackward = nodes % 2 == 0;
        spec.seed = nodes + 1;
        const GradientCheckpoint g = makeSyntheticGradient(spec);
        out.push_back({"generated " + std::to_string(nodes), g.toJson(), false});
        out.push_back({"generated graph " + std::to_string(nodes), g.graph.toJson(), true});
    }
    return out;
}

std::vector<Text> handWritten() {
    return {
        {"unknown fields everywhere, repeated map keys",
         R"({"zz": {"a": [1, {"b": null}], "c": "d", "e": -15},
        "graph": {"nodes": {"n": {"id": "n", "extra": {"deep": [[["x"]]]}, "op": "o",
        "input_cids": [], "more": 0, "metadata": {"k": "v", "k": "w"}, "z": null},
        "é": {"id": "名前", "op": "o", "input_cids": ["a", "b"], "output_cid": null}},
        "edges": [["n", "é"], ["n", "missing"]], "unknown": [true, false]},
        "step": 1, "loss_cid": "c", "optimizer_state": {"m": [0, 255, 7], "m": [1]},
        "timestamp": 2, "tail": "t"})"},
        {"byte order mark", "\xEF\xBB\xBF"
                            R"({"graph": {"nodes": {}, "edges": []}, "step": 0,
        "optimizer_state": {}, "timestamp": 0})"},
        {"escapes (fast path gives up)",
         R"({"graph": {"nodes": {"a\"b": {"id": "\u0041", "op": "o\n", "input_cids": []}},
        "edges": []}, "step": 1, "optimizer_state": {}, "timestamp": 2})"},
        {"numbers the fast path leaves to SAX",
         R"({"graph": {"nodes": {}, "edges": []}, "step": 1.0, "optimizer_state": {},
        "timestamp": 18446744073709551616})"},
        {"duplicate field", R"({"step": 1, "step": 2, "graph": {"nodes": {}, "edges": []},
        "optimizer_state": {}, "timestamp": 0})"},
        {"missing field", R"({"graph": {"nodes": {}, "edges": []}, "step": 1, "timestamp": 0})"},
    };
}

std::vector<Text> corpusTexts() {
    std::vector<Text> out;
    for (const char* sub : {"valid", "invalid"}) {
        const QDir dir(testsupport::corpus(QLatin1String(sub)));
        for (const QString& f : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name))
            out.push_back({std::string(sub) + "/" + testsupport::str(f),
                           testsupport::readFile(dir.filePath(f)), false});
    }
    return out;
}

// Each byte class the fast path looks at, put at a random place.
Text mutated(const Text& t, std::mt19937_64& rng) {
    static const char* kPieces[] = {
        "\"",   "\\",           ",",         ":",   "[",    "]",    "{", "}",  "0",    "00",
        "256",  "-1",           "1.5",       "1e3", "null", "true", " ", "\n", "\x01", "\xC3\xA9",
        "\xFF", "\xED\xA0\x80", "\"x\": 1,", ""};
    Text m = t;
    const size_t at = 1 + rng() % (m.text.size() - 1);
    const std::string piece = kPieces[rng() % std::size(kPieces)];
    switch (rng() % 3) {
    case 0:
        m.text.insert(at, piece);
        break;
    case 1:
        m.text.replace(at, 1 + rng() % 3, piece);
        break;
    default:
        m.text.erase(at, 1 + rng() % 8);
        break;
    }
    m.name += " mutated at byte " + std::to_string(at);
    return m;
}

} // namespace

class TestGradientJsonPaths : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void generatedGraphsTakeTheFastPath() {
        // The speed is in the fast path: plain pretty JSON must not fall back.
        for (const Text& t : generatedGraphs()) {
            const std::optional<Verdict> v = compare(t);
            if (!v)
                return;
            QVERIFY2(*v == Verdict::FastAgrees, t.name.c_str());
        }
    }
    void handWrittenTexts() {
        for (const Text& t : handWritten())
            if (!compare(t))
                return;
    }
    void conformanceFiles() {
        REQUIRE_CONFORMANCE();
        int fast = 0, rejected = 0;
        const std::vector<Text> texts = corpusTexts();
        QVERIFY(texts.size() >= 10);
        for (const Text& t : texts) {
            const std::optional<Verdict> v = compare(t);
            if (!v)
                return;
            fast += *v == Verdict::FastAgrees;
            rejected += *v == Verdict::BothRejected;
        }
        // Both verdicts occur: the corpus has plain valid files and invalid ones.
        QVERIFY(fast > 0);
        QVERIFY(rejected > 0);
    }
    void randomMutations() {
        std::vector<Text> sources = handWritten();
        for (Text& t : generatedGraphs())
            if (t.text.size() < 100'000)
                sources.push_back(std::move(t));
        if (!testsupport::conformanceDir().isEmpty())
            for (Text& t : corpusTexts())
                if (t.text.size() < 100'000)
                    sources.push_back(std::move(t));
        std::mt19937_64 rng(5);
        int count = 0, rejected = 0;
        for (int k = 0; k < 600; ++k) {
            const Text m = mutated(sources[size_t(k) % sources.size()], rng);
            const std::optional<Verdict> v = compare(m);
            if (!v)
                return;
            ++count;
            rejected += *v == Verdict::BothRejected;
        }
        QCOMPARE(count, 600);
        QVERIFY(rejected > 100); // most mutations break the text
    }
    void pathsAreForcedApart() {
        // The seam reaches each path on its own: a text only SAX reads (an
        // escape) and one SAX rejects with its message.
        const std::string escaped = R"({"graph": {"nodes": {}, "edges": []}, "step": 1,
            "optimizer_state": {}, "timestamp": 0, "\u007a": 0})";
        QVERIFY(!gradientjson::readFast(escaped, false));
        QCOMPARE(gradientjson::readSax(escaped, "t.json", false).step, uint64_t(1));
        try {
            gradientjson::readSax("[]", "t.json", false);
            QFAIL("accepted");
        } catch (const GradientError& e) {
            QVERIFY2(qstr(e.what()).startsWith(QStringLiteral("t.json:1:1: ")), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestGradientJsonPaths)
#include "tst_gradientjsonpaths.moc"
