// ckptscope-cli run as a process: `layout --json` and `graph --dot`: every node and drawn edge,
// crossings recounted from the routes, DOT that quotes what it must.
#include "clirunner.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <nlohmann/json.hpp>

#include <QRegularExpression>
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
using testsupport::str;

namespace {

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

} // namespace

class TestCliGraph : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void layoutJson_data();
    void layoutJson();
    void layoutSummary();
    void graphDot_data();
    void graphDot();
    void graphDotEscapesIds();
    void tensorFilesNamedByFormat();
    void layoutJsonWarnings();

private:
    void layoutJsonImpl();

    QTemporaryDir m_tmp;
};

void TestCliGraph::initTestCase() {
    requireCli();
    QVERIFY(m_tmp.isValid());
}

void TestCliGraph::layoutJson_data() {
    addCorpusRows("gradient");
}

void TestCliGraph::layoutJsonImpl() {
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

void TestCliGraph::layoutSummary() {
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

void TestCliGraph::graphDot_data() {
    addCorpusRows("gradient");
}

void TestCliGraph::graphDot() {
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

void TestCliGraph::graphDotEscapesIds() {
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

void TestCliGraph::tensorFilesNamedByFormat() {
    // layout, graph and render refuse a tensor file, naming its real format.
    const QString st = m_tmp.filePath(QStringLiteral("model.safetensors"));
    testsupport::writeFile(
        st, testsupport::stFile({{"w", "F32", {1}, testsupport::leBytes<float>({1})}}));
    ckptscope::Checkpoint ck;
    ck.addTensor({"w", {1}, {1.0f}});
    const QString ox = m_tmp.filePath(QStringLiteral("model.oxck"));
    ck.save(str(ox));
    const QString svg = m_tmp.filePath(QStringLiteral("out.svg"));
    for (const auto& [file, what] : {std::pair{st, QStringLiteral("safetensors file")},
                                     {ox, QStringLiteral("OXCK checkpoint")}})
        for (const QString& command :
             {QStringLiteral("layout"), QStringLiteral("graph"), QStringLiteral("render")}) {
            QStringList args = {command, file};
            if (command == QStringLiteral("render"))
                args << QStringLiteral("-o") << svg;
            const Run r = runCli(args);
            QVERIFY2(r.exitCode == 1 && r.out.isEmpty(), qPrintable(describe(r)));
            QCOMPARE(r.errText(), file +
                                      QStringLiteral(": error: not a gradient checkpoint: this ") +
                                      what + QStringLiteral(" has no computation graph; ") +
                                      command + QStringLiteral(" takes a gradient checkpoint\n"));
        }
}

void TestCliGraph::layoutJsonWarnings() {
    // A cycle is a warning: `layout --json` lists it as `info --json` does.
    ckptscope::ComputationGraphStore g;
    g.insertNode(ckptscope::ComputationNode("a", "add", {}));
    g.insertNode(ckptscope::ComputationNode("b", "mul", {}));
    g.addEdge("a", "b");
    g.addEdge("b", "a");
    const QString path = m_tmp.filePath(QStringLiteral("cycle.json"));
    ckptscope::GradientCheckpoint(g, 1).save(str(path));
    const Run l = runCli({QStringLiteral("layout"), path, QStringLiteral("--json")});
    QVERIFY2(l.exitCode == 0, qPrintable(describe(l)));
    const json j = parseOut(l);
    QVERIFY2(j.is_object() && j.contains("warnings"), qPrintable(describe(l)));
    QVERIFY2(j.at("warnings").size() == 1, qPrintable(describe(l)));
    QCOMPARE(lines(l.errText()), QStringList{path + QStringLiteral(": warning: ") +
                                             qstr(j.at("warnings").at(0).get<std::string>())});
    const Run i = runCli({QStringLiteral("info"), path, QStringLiteral("--json")});
    QVERIFY2(i.exitCode == 0, qPrintable(describe(i)));
    QVERIFY(parseOut(i).at("warnings") == j.at("warnings"));
}

// Slots: the checks, guarded.
void TestCliGraph::layoutJson() {
    testsupport::guarded([this] { layoutJsonImpl(); });
}

QTEST_GUILESS_MAIN(TestCliGraph)
#include "tst_cligraph.moc"
