// The conformance corpus (../shared/conformance): every valid file must read
// exactly as the reference libraries read it (expected/NAME.json), and every
// damaged or hostile file must get the verdict invalid/EXPECTED.json gives it.
#include "testsupport.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/document/document.h"
#include "ckptscope/stats/tensorstats.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStringList>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

using nlohmann::json;
using namespace ckptscope;
using testsupport::AddressSpaceCap;
using testsupport::guarded;
using testsupport::loadJson;
using testsupport::qstr;
using testsupport::str;

namespace {

QString shapeText(const std::vector<uint64_t>& shape) {
    return qstr(fmt::shape(shape));
}

QString optText(const std::optional<double>& v) {
    return v ? QString::number(*v, 'g', 17) : QStringLiteral("null");
}

QString jsonText(const json& j) {
    return qstr(j.dump());
}

// First byte that is not JSON whitespace, after an optional UTF-8 BOM.
char firstSignificantByte(const std::string& bytes) {
    size_t i = bytes.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
    while (i < bytes.size() &&
           (bytes[i] == ' ' || bytes[i] == '\t' || bytes[i] == '\n' || bytes[i] == '\r'))
        ++i;
    return i < bytes.size() ? bytes[i] : '\0';
}

} // namespace

class TestConformance : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void validFile_data();
    void validFile();
    void everyValidFileHasExpected();
    void invalidFile_data();
    void invalidFile();
    void expectedNamesExistingFiles();

private:
    void validFileImpl();
    void everyValidFileHasExpectedImpl();
    void invalidFileImpl();
    void expectedNamesExistingFilesImpl();
    void checkOxck(const Document& doc, const json& exp);
    void checkOxckTensor(const Document& doc, size_t i, const json& e);
    void checkGradient(const Document& doc, const json& exp);
};

// ---------------------------------------------------------------- valid/

void TestConformance::validFile_data() {
    QTest::addColumn<QString>("file");
    const QString dir = testsupport::conformanceDir();
    if (dir.isEmpty()) {
        QTest::newRow("no-corpus") << QString();
        return;
    }
    const QStringList files =
        QDir(dir + QStringLiteral("/valid")).entryList(QDir::Files, QDir::Name);
    for (const QString& f : files)
        QTest::newRow(qPrintable(f)) << f;
}

void TestConformance::validFileImpl() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    const QString dir = testsupport::conformanceDir();
    const QString path = dir + QStringLiteral("/valid/") + file;
    const QString expectedPath =
        dir + QStringLiteral("/expected/") + file + QStringLiteral(".json");
    QVERIFY2(QFileInfo::exists(expectedPath),
             qPrintable(expectedPath + QStringLiteral(" missing")));
    const json exp = loadJson(expectedPath);

    std::shared_ptr<const Document> doc;
    try {
        doc = Document::open(str(path));
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QStringLiteral("cannot open a valid file: ") + qstr(e.what())));
    }
    QVERIFY(doc);
    QCOMPARE(qstr(doc->path()), path);
    QCOMPARE(doc->fileSize(), quint64(QFileInfo(path).size()));

    const std::string format = exp.at("format").get<std::string>();
    QCOMPARE(qstr(formatName(doc->format())), qstr(format));
    if (format == "oxck")
        checkOxck(*doc, exp);
    else if (format == "gradient")
        checkGradient(*doc, exp);
    else
        QFAIL(qPrintable(QStringLiteral("unknown format in expected file: ") + qstr(format)));
}

void TestConformance::checkOxck(const Document& doc, const json& exp) {
    QCOMPARE(doc.version(), exp.at("version").get<uint32_t>());
    QVERIFY(doc.gradient() == nullptr);

    // Metadata: [key, value] pairs sorted by key, compared as a whole list.
    std::vector<std::pair<std::string, std::string>> expMeta;
    for (const json& kv : exp.at("metadata"))
        expMeta.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
    QCOMPARE(doc.metadata().size(), expMeta.size());
    for (size_t i = 0; i < expMeta.size(); ++i) {
        QCOMPARE(qstr(doc.metadata()[i].first), qstr(expMeta[i].first));
        QCOMPARE(qstr(doc.metadata()[i].second), qstr(expMeta[i].second));
    }

    QCOMPARE(quint64(doc.numParams()), exp.at("num_params").get<quint64>());
    QCOMPARE(quint64(doc.totalBytes()), exp.at("total_bytes").get<quint64>());

    const json& tensors = exp.at("tensors");
    QCOMPARE(doc.tensors().size(), tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        checkOxckTensor(doc, i, tensors[i]);
        if (QTest::currentTestFailed())
            return;
    }

    // Anomalies the expected summary shows must be flagged, on the right
    // tensor, and nothing else: a shape/value-count mismatch (a scalar with
    // shape [] and one value is the reference's normal encoding) and every
    // repeat of an earlier name.
    std::set<size_t> flagged, scalars;
    std::set<std::string> seen;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const json& t = tensors[i];
        const bool scalar = t.at("shape").empty() && t.at("data_len").get<uint64_t>() == 1;
        if (scalar)
            scalars.insert(i); // may or may not be flagged
        else if (t.at("element_count").get<uint64_t>() != t.at("data_len").get<uint64_t>())
            flagged.insert(i);
        if (!seen.insert(t.at("name").get<std::string>()).second)
            flagged.insert(i);
    }
    std::set<size_t> warned;
    for (const IndexWarning& w : doc.warnings()) {
        QVERIFY2(w.tensor.has_value(),
                 qPrintable(QStringLiteral("unexpected file-level warning: ") + qstr(w.message)));
        QVERIFY2(flagged.count(*w.tensor) || scalars.count(*w.tensor),
                 qPrintable(QStringLiteral("unexpected warning: ") + qstr(w.message)));
        warned.insert(*w.tensor);
    }
    for (size_t i : flagged)
        QVERIFY2(warned.count(i),
                 qPrintable(QStringLiteral("no warning for tensor %1 (duplicate name or shape/"
                                           "value-count mismatch)")
                                .arg(i)));
}

void TestConformance::checkOxckTensor(const Document& doc, size_t i, const json& e) {
    const TensorEntry& t = doc.tensors()[i];
    const QString where = QStringLiteral("tensor %1 \"%2\"").arg(i).arg(qstr(t.name));
    QCOMPARE(qstr(t.name), qstr(e.at("name").get<std::string>()));
    const auto shape = e.at("shape").get<std::vector<uint64_t>>();
    QVERIFY2(t.shape == shape, qPrintable(where + QStringLiteral(": shape ") + shapeText(t.shape) +
                                          QStringLiteral(", expected ") + shapeText(shape)));
    QCOMPARE(quint64(t.dataLen), e.at("data_len").get<quint64>());
    QVERIFY2(t.elementCount.has_value(), qPrintable(where + QStringLiteral(": no element count")));
    QCOMPARE(quint64(*t.elementCount), e.at("element_count").get<quint64>());
    QCOMPARE(quint64(*t.elementCount) * 4, e.at("size_bytes").get<quint64>());

    // Values: read through the document, summarised by the statistics code.
    StatsResult r;
    try {
        StatsOptions options;
        r = computeStats(
            t.dataLen,
            [&doc, i](uint64_t first, uint64_t n, float* out) { doc.readValues(i, first, n, out); },
            options);
    } catch (const std::exception& ex) {
        QFAIL(qPrintable(where + QStringLiteral(": reading values failed: ") + qstr(ex.what())));
    }
    const TensorStats& s = r.stats;
    QCOMPARE(quint64(s.count), quint64(t.dataLen));
    QCOMPARE(quint64(s.nan), e.at("nan").get<quint64>());
    QCOMPARE(quint64(s.posInf + s.negInf), e.at("inf").get<quint64>());
    QCOMPARE(quint64(s.finite), quint64(s.count - s.nan - s.posInf - s.negInf));

    // min/max come from f32 values: exact.
    for (const char* key : {"min", "max"}) {
        const std::optional<double>& got = std::string(key) == "min" ? s.min : s.max;
        const json& want = e.at(key);
        const QString msg = where + QLatin1Char(' ') + QLatin1String(key) +
                            QStringLiteral(": got ") + optText(got) +
                            QStringLiteral(", expected ") + jsonText(want);
        if (want.is_null()) {
            QVERIFY2(!got.has_value(), qPrintable(msg));
        } else {
            QVERIFY2(got.has_value(), qPrintable(msg));
            QVERIFY2(*got == want.get<double>(), qPrintable(msg));
        }
    }

    // The sum depends on summation order: relative tolerance (absolute near 0).
    const double wantSum = e.at("finite_sum").get<double>();
    const double tol = 1e-9 * std::max(1.0, std::fabs(wantSum));
    QVERIFY2(std::fabs(s.finiteSum - wantSum) <= tol,
             qPrintable(where + QStringLiteral(": finite_sum %1, expected %2")
                                    .arg(s.finiteSum, 0, 'g', 17)
                                    .arg(wantSum, 0, 'g', 17)));
}

void TestConformance::checkGradient(const Document& doc, const json& exp) {
    const GradientCheckpoint* g = doc.gradient();
    QVERIFY2(g, "a gradient document without a gradient checkpoint");
    QCOMPARE(quint64(g->step), exp.at("step").get<quint64>());
    QCOMPARE(quint64(g->timestamp), exp.at("timestamp").get<quint64>());
    if (exp.at("loss_cid").is_null()) {
        QVERIFY2(!g->lossCid, qPrintable(QStringLiteral("loss_cid should be null, is ") +
                                         qstr(g->lossCid.value_or(""))));
    } else {
        QVERIFY(g->lossCid.has_value());
        QCOMPARE(qstr(*g->lossCid), qstr(exp.at("loss_cid").get<std::string>()));
    }
    QCOMPARE(quint64(g->graph.nodeCount()), exp.at("node_count").get<quint64>());
    QCOMPARE(quint64(g->graph.edgeCount()), exp.at("edge_count").get<quint64>());

    QStringList ops;
    for (const auto& [id, node] : g->graph.nodes())
        ops << qstr(node.op);
    ops.sort();
    QStringList expOps;
    for (const json& op : exp.at("ops"))
        expOps << qstr(op.get<std::string>());
    QCOMPARE(ops, expOps);

    QStringList order, orderOps;
    for (const std::string& id : g->graph.topologicalOrder()) {
        order << qstr(id);
        const ComputationNode* n = g->graph.getNode(id);
        QVERIFY2(n, qPrintable(QStringLiteral("topological order names unknown node ") + qstr(id)));
        orderOps << qstr(n->op);
    }
    QStringList expOrder, expOrderOps;
    for (const json& id : exp.at("topological_order"))
        expOrder << qstr(id.get<std::string>());
    for (const json& op : exp.at("topological_ops"))
        expOrderOps << qstr(op.get<std::string>());
    QCOMPARE(order, expOrder);
    QCOMPARE(orderOps, expOrderOps);

    const ComputationNode* loss = g->lossNode();
    if (exp.at("loss_node").is_null()) {
        QVERIFY2(!loss, qPrintable(QStringLiteral("loss node should be null, is ") +
                                   (loss ? qstr(loss->id) : QString())));
    } else {
        QVERIFY2(loss, "no loss node");
        QCOMPARE(qstr(loss->id), qstr(exp.at("loss_node").get<std::string>()));
    }

    const json& blobs = exp.at("optimizer_state");
    QCOMPARE(g->optimizerState.size(), blobs.size());
    size_t k = 0;
    for (const auto& [name, bytes] : g->optimizerState) {
        const json& b = blobs[k++];
        QCOMPARE(qstr(name), qstr(b.at(0).get<std::string>()));
        QCOMPARE(quint64(bytes.size()), b.at(1).get<quint64>());
        quint64 sum = 0;
        for (uint8_t byte : bytes)
            sum += byte;
        QCOMPARE(sum, b.at(2).get<quint64>());
    }
}

void TestConformance::everyValidFileHasExpectedImpl() {
    REQUIRE_CONFORMANCE();
    const QString dir = testsupport::conformanceDir();
    QStringList valid = QDir(dir + QStringLiteral("/valid")).entryList(QDir::Files, QDir::Name);
    QStringList expected;
    for (const QString& f :
         QDir(dir + QStringLiteral("/expected")).entryList(QDir::Files, QDir::Name)) {
        QVERIFY2(f.endsWith(QStringLiteral(".json")), qPrintable(f));
        expected << f.chopped(5);
    }
    QVERIFY(!valid.isEmpty());
    QCOMPARE(valid, expected);
}

// ---------------------------------------------------------------- invalid/

void TestConformance::invalidFile_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("verdict");
    QTest::addColumn<QString>("why");
    QTest::addColumn<QString>("reference");
    const QString dir = testsupport::conformanceDir();
    if (dir.isEmpty()) {
        QTest::newRow("no-corpus") << QString() << QString() << QString() << QString();
        return;
    }
    const json expected = loadJson(dir + QStringLiteral("/invalid/EXPECTED.json"));
    const QStringList files =
        QDir(dir + QStringLiteral("/invalid")).entryList(QDir::Files, QDir::Name);
    for (const QString& f : files) {
        if (f == QStringLiteral("EXPECTED.json"))
            continue;
        const auto it = expected.find(str(f));
        if (it == expected.end()) {
            // A new corpus file without a verdict: the test fails on it.
            QTest::newRow(qPrintable(f)) << f << QString() << QString() << QString();
            continue;
        }
        QTest::newRow(qPrintable(f)) << f << qstr(it->at("expect").get<std::string>())
                                     << qstr(it->value("why", std::string()))
                                     << qstr(it->value("reference_library", std::string()));
    }
}

void TestConformance::invalidFileImpl() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    QFETCH(QString, verdict);
    QFETCH(QString, why);
    QFETCH(QString, reference);
    QVERIFY2(!verdict.isEmpty(),
             qPrintable(file + QStringLiteral(" has no entry in EXPECTED.json")));

    const QString path = testsupport::conformanceDir() + QStringLiteral("/invalid/") + file;
    const std::string bytes = testsupport::readFile(path);

    std::shared_ptr<const Document> doc;
    QString error, wrongException;
    {
        // Every file here is < 1 MiB: nothing legitimate needs 1 GiB more.
        AddressSpaceCap cap(uint64_t(1) << 30);
        try {
            doc = Document::open(str(path));
        } catch (const OpenError& e) {
            error = qstr(e.what());
        } catch (const std::bad_alloc&) {
            wrongException = QStringLiteral("std::bad_alloc: allocated for a count from the file");
        } catch (const std::length_error& e) {
            wrongException = QStringLiteral("std::length_error (allocation sized by the file): ") +
                             qstr(e.what());
        } catch (const std::exception& e) {
            wrongException = QStringLiteral("%1 instead of OpenError: %2")
                                 .arg(QLatin1String(typeid(e).name()), qstr(e.what()));
        }
    }
    QVERIFY2(wrongException.isEmpty(), qPrintable(wrongException));

    if (verdict == QStringLiteral("error")) {
        QVERIFY2(!doc, qPrintable(QStringLiteral("opened, but must be refused: ") + why));
        // "FILE: message", or "FILE:LINE:COLUMN: message" for a JSON position.
        static const QRegularExpression afterPath(QStringLiteral("^(: |:\\d+:\\d+: )"));
        QVERIFY2(error.startsWith(path) && error.mid(path.size()).contains(afterPath),
                 qPrintable(QStringLiteral("message does not begin with the path: ") + error));
        const QString detail = error.mid(path.size()).remove(afterPath);
        QVERIFY2(detail.size() >= 12, qPrintable(QStringLiteral("message too terse: ") + error));
        // Document::open wraps every std::exception in an OpenError: a failed
        // allocation sized by a hostile count must not be what refused it.
        static const QRegularExpression allocFailure(
            QStringLiteral("bad_alloc|bad_array_new_length|length_error|::reserve|_M_create|"
                           "max_size\\(\\)"));
        QVERIFY2(!error.contains(allocFailure),
                 qPrintable(QStringLiteral("refused by a failed allocation: ") + error));

        if (bytes.rfind("OXCK", 0) == 0) {
            // Binary faults name the byte offset, which lies within the file.
            static const QRegularExpression byteRe(QStringLiteral("\\bbyte (\\d+)"));
            const QRegularExpressionMatch m = byteRe.match(error);
            QVERIFY2(m.hasMatch(), qPrintable(QStringLiteral("no byte offset in: ") + error));
            QVERIFY2(m.captured(1).toULongLong() <= bytes.size(),
                     qPrintable(QStringLiteral("byte offset past the end of the file: ") + error));
        }
        static const QRegularExpression refLineRe(QStringLiteral("at line (\\d+) column (\\d+)"));
        const QRegularExpressionMatch ref = refLineRe.match(reference);
        if (firstSignificantByte(bytes) == '{' && ref.hasMatch()) {
            // JSON faults name line:column; the line agrees with the reference.
            static const QRegularExpression posRe(
                QStringLiteral(":(\\d+):(\\d+)\\b|\\bline (\\d+),? column (\\d+)"));
            const QRegularExpressionMatch m = posRe.match(error);
            QVERIFY2(m.hasMatch(), qPrintable(QStringLiteral("no line:column in: ") + error));
            const QString line = m.captured(1).isEmpty() ? m.captured(3) : m.captured(1);
            QVERIFY2(
                line == ref.captured(1),
                qPrintable(
                    QStringLiteral("line %1, the reference says %2: ").arg(line, ref.captured(1)) +
                    error));
        }
    } else if (verdict == QStringLiteral("ok")) {
        QVERIFY2(doc, qPrintable(QStringLiteral("refused, but must open (") + why +
                                 QStringLiteral("): ") + error));
        QStringList warnings;
        for (const IndexWarning& w : doc->warnings())
            warnings << qstr(w.message);
        QVERIFY2(warnings.isEmpty(),
                 qPrintable(QStringLiteral("unexpected warnings: ") + warnings.join(u'|')));
    } else if (verdict == QStringLiteral("ok-with-warning")) {
        QVERIFY2(doc, qPrintable(QStringLiteral("refused, but must open (") + why +
                                 QStringLiteral("): ") + error));
        QVERIFY2(!doc->warnings().empty(),
                 qPrintable(QStringLiteral("opened without the warning it needs: ") + why));
        for (const IndexWarning& w : doc->warnings())
            QVERIFY2(!w.message.empty(), "empty warning message");
    } else {
        QFAIL(qPrintable(QStringLiteral("unknown verdict in EXPECTED.json: ") + verdict));
    }
}

void TestConformance::expectedNamesExistingFilesImpl() {
    REQUIRE_CONFORMANCE();
    const QString dir = testsupport::conformanceDir() + QStringLiteral("/invalid");
    const json expected = loadJson(dir + QStringLiteral("/EXPECTED.json"));
    QVERIFY(expected.is_object());
    QVERIFY(!expected.empty());
    for (const auto& [name, entry] : expected.items()) {
        QVERIFY2(QFileInfo::exists(dir + QLatin1Char('/') + qstr(name)),
                 qPrintable(QStringLiteral("EXPECTED.json names a missing file: ") + qstr(name)));
        QVERIFY2(entry.contains("expect"), qPrintable(qstr(name)));
    }
    // And the other way round (also enforced per row in invalidFile).
    for (const QString& f : QDir(dir).entryList(QDir::Files)) {
        if (f != QStringLiteral("EXPECTED.json"))
            QVERIFY2(expected.contains(str(f)),
                     qPrintable(f + QStringLiteral(" has no entry in EXPECTED.json")));
    }
}

// Slots: the checks, guarded against stray exceptions.
void TestConformance::validFile() {
    guarded([this] { validFileImpl(); });
}
void TestConformance::everyValidFileHasExpected() {
    guarded([this] { everyValidFileHasExpectedImpl(); });
}
void TestConformance::invalidFile() {
    guarded([this] { invalidFileImpl(); });
}
void TestConformance::expectedNamesExistingFiles() {
    guarded([this] { expectedNamesExistingFilesImpl(); });
}

QTEST_GUILESS_MAIN(TestConformance)
#include "tst_conformance.moc"
