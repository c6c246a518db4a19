// ckptscope-cli run as a process: `stats`: the --json contract checked against the corpus and
// against values computed here, tensor selection and optimizer blobs.
#include "clirunner.h"
#include "ggufbuilder.h"
#include "optimizerfixture.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include "ckptscope/formats/oxck/checkpoint.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>
using nlohmann::json;
using namespace clirunner;
using testsupport::corpus;
using testsupport::loadJson;
using testsupport::qstr;
using testsupport::str;

namespace {

std::optional<double> optDouble(const json& j) {
    if (j.is_null())
        return std::nullopt;
    return j.get<double>();
}

} // namespace

class TestCliStats : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void statsJsonCorpus_data();
    void statsJsonCorpus();
    void statsJsonKnownValues();
    void statsTensorSelection();
    void statsGradientBlobs();
    void statsWarningsAndEscapedNames();
    void statsExactNumbers();
    void statsUndecodableTypeWritesNothing();
    void statsOptimizer();

private:
    void statsJsonCorpusImpl();
    void statsJsonKnownValuesImpl();
    void statsTensorSelectionImpl();
    void statsGradientBlobsImpl();
    void statsWarningsAndEscapedNamesImpl();
    void statsExactNumbersImpl();
    void statsUndecodableTypeWritesNothingImpl();
    void statsOptimizerImpl();

    QTemporaryDir m_tmp;
};

void TestCliStats::initTestCase() {
    requireCli();
    QVERIFY(m_tmp.isValid());
}

void TestCliStats::statsJsonCorpus_data() {
    addCorpusRows("oxck");
}

void TestCliStats::statsJsonCorpusImpl() {
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

void TestCliStats::statsJsonKnownValuesImpl() {
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

void TestCliStats::statsTensorSelectionImpl() {
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

void TestCliStats::statsGradientBlobsImpl() {
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

void TestCliStats::statsWarningsAndEscapedNamesImpl() {
    // A shape that holds 4 elements over 3 stored values: a warning naming
    // the tensor; and a name with a tab and a newline.
    const std::string odd = "x\ty\nz";
    ckptscope::Checkpoint ck;
    ck.addTensor({"short", {2, 2}, {1.0f, 2.0f, 3.0f}});
    ck.addTensor({odd, {1}, {5.0f}});
    const QString path = m_tmp.filePath(QStringLiteral("warned.oxck"));
    ck.save(str(path));

    // --json lists the warnings as `info --json` does and as stderr says them.
    const Run r = runCli({QStringLiteral("stats"), path, QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const json j = parseOut(r);
    QVERIFY2(j.is_object() && j.contains("warnings"), qPrintable(describe(r)));
    const json& w = j.at("warnings");
    QVERIFY2(w.is_array() && w.size() == 1, qPrintable(qstr(w.dump())));
    const QString warning = qstr(w.at(0).get<std::string>());
    QVERIFY2(warning.contains(QStringLiteral("\"short\"")) &&
                 warning.contains(QStringLiteral("shape holds 4 elements but 3 values")),
             qPrintable(warning));
    QCOMPARE(lines(r.errText()), QStringList{path + QStringLiteral(": warning: ") + warning});
    const Run info = runCli({QStringLiteral("info"), path, QStringLiteral("--json")});
    QVERIFY2(info.exitCode == 0, qPrintable(describe(info)));
    QVERIFY(parseOut(info).at("warnings") == w);
    QCOMPARE(qstr(j.at("tensors").at(1).at("name").get<std::string>()), qstr(odd));

    // A file without warnings has the key, empty.
    const QString clean = m_tmp.filePath(QStringLiteral("clean.safetensors"));
    testsupport::writeFile(
        clean, testsupport::stFile({{"v", "F32", {2}, testsupport::leBytes<float>({1, 2})}}));
    const Run c = runCli({QStringLiteral("stats"), clean, QStringLiteral("--json")});
    QVERIFY2(c.exitCode == 0 && c.err.isEmpty(), qPrintable(describe(c)));
    QVERIFY2(parseOut(c).at("warnings") == json::array(), qPrintable(describe(c)));

    // Text: one row per tensor, the name escaped as `info` shows it.
    const Run t = runCli({QStringLiteral("stats"), path});
    QVERIFY2(t.exitCode == 0, qPrintable(describe(t)));
    const QStringList rows = lines(t.outText());
    QCOMPARE(rows.size(), 3); // header, short, the odd name
    QVERIFY2(rows[2].startsWith(QStringLiteral("x\\ty\\nz ")), qPrintable(rows[2]));
    const Run i = runCli({QStringLiteral("info"), path});
    QVERIFY2(i.outText().contains(QStringLiteral(" x\\ty\\nz ")), qPrintable(describe(i)));
}

void TestCliStats::statsExactNumbersImpl() {
    // Integers' min and max are JSON integers, exactly as stored (I32
    // 2^31 - 1 was 2147483648.0); F64 results beyond double are null with a
    // warning naming the field.
    using testsupport::leBytes;
    constexpr int32_t i32hi = std::numeric_limits<int32_t>::max();
    constexpr int64_t i64lo = std::numeric_limits<int64_t>::min();
    constexpr uint64_t u64hi = std::numeric_limits<uint64_t>::max();
    constexpr double mx = std::numeric_limits<double>::max();
    const QString path = m_tmp.filePath(QStringLiteral("exact.safetensors"));
    testsupport::writeFile(
        path, testsupport::stFile({{"i32", "I32", {2}, leBytes<int32_t>({i32hi, -7})},
                                   {"u64", "U64", {2}, leBytes<uint64_t>({u64hi, 1})},
                                   {"i64", "I64", {2}, leBytes<int64_t>({i64lo, 0})},
                                   {"f32", "F32", {2}, leBytes<float>({1.5f, -2.0f})},
                                   {"f64", "F64", {3}, leBytes<double>({-mx, 0, mx})},
                                   {"f32b", "F32", {2}, leBytes<float>({-0.080078125f, 0.1f})},
                                   {"f64b", "F64", {2}, leBytes<double>({0.1234567891234, 2})}}));
    const Run r = runCli({QStringLiteral("stats"), path, QStringLiteral("--json"),
                          QStringLiteral("--bins"), QStringLiteral("4")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const json j = parseOut(r);
    const json& t = j.at("tensors");
    QVERIFY(t.at(0).at("max").is_number_integer());
    QVERIFY(t.at(0).at("max").get<int64_t>() == i32hi);
    QVERIFY(t.at(0).at("min").get<int64_t>() == -7);
    QVERIFY(t.at(1).at("max").is_number_unsigned());
    QVERIFY(t.at(1).at("max").get<uint64_t>() == u64hi);
    QVERIFY(t.at(2).at("min").get<int64_t>() == i64lo);
    QVERIFY(t.at(0).at("mean").get<double>() == (double(i32hi) - 7.0) / 2.0);
    // Floats as before: JSON floats.
    QVERIFY(t.at(3).at("min").is_number_float() && t.at(3).at("min").get<double>() == -2.0);
    const json& f = t.at(4);
    QVERIFY(f.at("mean").get<double>() == 0.0);
    QVERIFY(f.at("l2").is_null() && f.at("std").is_number_float());
    QVERIFY(f.at("histogram").at("counts") == json::array({1, 0, 1, 1}));
    QVERIFY2(j.at("warnings") == json::array({"f64: l2: overflows double"}),
             qPrintable(describe(r)));
    QCOMPARE(lines(r.errText()),
             QStringList{path + QStringLiteral(": warning: f64: l2: overflows double")});
    // The text table says so too: the L2 norm is finite, only too large to hold.
    const Run text =
        runCli({QStringLiteral("stats"), path, QStringLiteral("--tensor"), QStringLiteral("f64")});
    QVERIFY2(text.exitCode == 0, qPrintable(describe(text)));
    const QStringList rows = lines(text.outText());
    QCOMPARE(rows.size(), 2);
    QVERIFY2(rows[1].endsWith(QStringLiteral("overflows double")), qPrintable(rows[1]));
    QVERIFY2(!rows[1].contains(QStringLiteral("inf")), qPrintable(rows[1]));
    // The table's min and max are the stored values, not rounded to 7
    // digits: integers whole, floats as the shortest text that reads back
    // in the tensor's precision. A tensor named twice is one row.
    const Run table =
        runCli({QStringLiteral("stats"), path, QStringLiteral("--tensor"), QStringLiteral("i64"),
                QStringLiteral("--tensor"), QStringLiteral("u64"), QStringLiteral("--tensor"),
                QStringLiteral("f32b"), QStringLiteral("--tensor"), QStringLiteral("f64b"),
                QStringLiteral("--tensor"), QStringLiteral("i64")});
    QVERIFY2(table.exitCode == 0, qPrintable(describe(table)));
    const QStringList cells = lines(table.outText());
    QCOMPARE(cells.size(), 5);
    const auto minMax = [&](int row) {
        const QStringList c = cells[row].split(QLatin1Char(' '), Qt::SkipEmptyParts);
        return c.mid(6, 2);
    };
    QCOMPARE(minMax(1), (QStringList{QStringLiteral("-9223372036854775808"), QStringLiteral("0")}));
    QCOMPARE(minMax(2), (QStringList{QStringLiteral("1"), QStringLiteral("18446744073709551615")}));
    QCOMPARE(minMax(3), (QStringList{QStringLiteral("-0.080078125"), QStringLiteral("0.1")}));
    QCOMPARE(minMax(4), (QStringList{QStringLiteral("0.1234567891234"), QStringLiteral("2")}));
    // --csv too: integers whole, as --json gives them.
    const Run csv = runCli({QStringLiteral("stats"), path, QStringLiteral("--csv"),
                            QStringLiteral("--tensor"), QStringLiteral("u64")});
    QVERIFY2(csv.exitCode == 0, qPrintable(describe(csv)));
    QVERIFY2(csv.outText().contains(QStringLiteral(",1,18446744073709551615,")),
             qPrintable(describe(csv)));
}

// A Q8_1 tensor (ggml has no decoder for it) fails stats with exit 1 naming
// tensor and type, and leaves nothing on stdout: no CSV header, no table.
void TestCliStats::statsUndecodableTypeWritesNothingImpl() {
    testsupport::GgufBytes b;
    b.bytes = {'G', 'G', 'U', 'F'};
    b.u32(3);
    b.u64(2); // tensors
    b.u64(0); // metadata
    b.str("a");
    b.u32(1);
    b.u64(32);
    b.u32(0); // F32
    b.u64(0);
    b.str("q");
    b.u32(1);
    b.u64(32);
    b.u32(9);   // Q8_1: 36 bytes a block of 32
    b.u64(128); // after a's 128 bytes
    b.pad32();
    for (int i = 0; i < 32; ++i)
        b.u32(std::bit_cast<uint32_t>(float(i)));
    b.bytes.resize(b.bytes.size() + 36);
    b.pad32();
    const QString path = m_tmp.filePath(QStringLiteral("q8_1.gguf"));
    testsupport::writeFile(path, std::string(b.bytes.begin(), b.bytes.end()));
    for (const QString& mode : {QString(), QStringLiteral("--csv"), QStringLiteral("--json")}) {
        QStringList args{QStringLiteral("stats"), path};
        if (!mode.isEmpty())
            args << mode;
        const Run r = runCli(args);
        QVERIFY2(r.exitCode == 1, qPrintable(mode + QLatin1Char(' ') + describe(r)));
        QVERIFY2(r.out.isEmpty(), qPrintable(mode + QLatin1Char(' ') + describe(r)));
        QVERIFY2(r.errText().contains(QStringLiteral("tensor \"q\": Q8_1")),
                 qPrintable(describe(r)));
    }
    // The decodable tensor beside it still reads.
    const Run one = runCli({QStringLiteral("stats"), path, QStringLiteral("--csv"),
                            QStringLiteral("--tensor"), QStringLiteral("a")});
    QVERIFY2(one.exitCode == 0, qPrintable(describe(one)));
    QCOMPARE(lines(one.outText()).size(), 2);
}

// stats --optimizer on a Trainer folder the test wrote: every figure of
// --json equals Adam's formula computed here; the table names each
// parameter; --tensor picks one; a file without optimizer state is exit 1.
void TestCliStats::statsOptimizerImpl() {
    const testsupport::AdamFixture f =
        testsupport::AdamFixture::make({"layer.0.weight", "layer.1.weight", "head.weight"}, 256);
    const QString dir = m_tmp.filePath(QStringLiteral("checkpoint-50"));
    QVERIFY(QDir().mkpath(dir));
    f.writeTo(str(dir));
    const Run r = runCli(
        {QStringLiteral("stats"), QStringLiteral("--optimizer"), QStringLiteral("--json"), dir});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const json j = parseOut(r);
    QCOMPARE(j["tensors"].size(), size_t(3));
    QVERIFY(j["warnings"].empty());
    QVERIFY(j["model"].get<std::string>().ends_with("checkpoint-50/model.safetensors"));
    for (size_t k = 0; k < 3; ++k) {
        const json& t = j["tensors"][k];
        const json& o = t["optimizer"];
        const auto e = f.expected(k);
        QCOMPARE(t["name"].get<std::string>(), f.params[k].name);
        QCOMPARE(o["rule"].get<std::string>(), std::string("adam"));
        QCOMPARE(o["step"].get<double>(), 50.0);
        QCOMPARE(o["lr"].get<double>(), f.lr);
        QCOMPARE(o["elements"].get<uint64_t>(), uint64_t(256));
        const auto near = [](const json& got, double want) {
            return got.is_number() && std::abs(got.get<double>() - want) <= 1e-12 * want;
        };
        QVERIFY2(near(o["update_rms"], e.updateRms), qPrintable(describe(r)));
        QVERIFY(near(o["update_max"], e.updateMax));
        QVERIFY(near(o["update_to_weight"], e.updateToWeight));
        QVERIFY(near(o["exp_avg_rms"], e.expAvgRms));
        QVERIFY(near(o["exp_avg_sq_sqrt_rms"], e.sqrtVRms));
        QVERIFY(near(o["decay_rms"], e.decayRms));
        QCOMPARE(o["note"].get<std::string>(), std::string());
    }
    const Run text = runCli({QStringLiteral("stats"), QStringLiteral("--optimizer"), dir});
    QVERIFY2(text.exitCode == 0, qPrintable(describe(text)));
    for (const auto& p : f.params)
        QVERIFY2(text.outText().contains(qstr(p.name)), qPrintable(describe(text)));
    const Run one =
        runCli({QStringLiteral("stats"), QStringLiteral("--optimizer"), QStringLiteral("--json"),
                dir, QStringLiteral("--tensor"), QStringLiteral("head.weight")});
    QVERIFY2(one.exitCode == 0, qPrintable(describe(one)));
    QCOMPARE(parseOut(one)["tensors"].size(), size_t(1));
    const Run none = runCli({QStringLiteral("stats"), QStringLiteral("--optimizer"),
                             m_tmp.filePath(QStringLiteral("checkpoint-50/model.safetensors"))});
    QVERIFY2(none.exitCode == 1 && none.errText().contains(QStringLiteral("no optimizer state")),
             qPrintable(describe(none)));
    const Run usage = runCli(
        {QStringLiteral("stats"), QStringLiteral("--optimizer"), QStringLiteral("--csv"), dir});
    QVERIFY2(usage.exitCode == 2, qPrintable(describe(usage)));
}

// Slots: the checks, guarded.
void TestCliStats::statsJsonCorpus() {
    testsupport::guarded([this] { statsJsonCorpusImpl(); });
}
void TestCliStats::statsJsonKnownValues() {
    testsupport::guarded([this] { statsJsonKnownValuesImpl(); });
}
void TestCliStats::statsTensorSelection() {
    testsupport::guarded([this] { statsTensorSelectionImpl(); });
}
void TestCliStats::statsGradientBlobs() {
    testsupport::guarded([this] { statsGradientBlobsImpl(); });
}
void TestCliStats::statsWarningsAndEscapedNames() {
    testsupport::guarded([this] { statsWarningsAndEscapedNamesImpl(); });
}

void TestCliStats::statsExactNumbers() {
    testsupport::guarded([this] { statsExactNumbersImpl(); });
}

void TestCliStats::statsUndecodableTypeWritesNothing() {
    testsupport::guarded([this] { statsUndecodableTypeWritesNothingImpl(); });
}

void TestCliStats::statsOptimizer() {
    testsupport::guarded([this] { statsOptimizerImpl(); });
}

QTEST_GUILESS_MAIN(TestCliStats)
#include "tst_clistats.moc"
