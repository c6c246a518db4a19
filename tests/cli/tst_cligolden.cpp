// Golden outputs: every ckptscope-cli command, in text and --json form, run
// on small fixtures and compared byte for byte (exit code, stdout, stderr and
// any file it writes) with tests/golden/. The fixtures are the bundled samples
// and files `generate` writes deterministically; the commands run inside a
// temporary folder with relative paths, so no path varies (what is left of
// the folder's absolute path is replaced by "<tmp>").
// CKPTSCOPE_UPDATE_GOLDEN=1 writes the files instead (tools/update-golden.sh).
// Floating-point figures made of sums (std, L2, rel_l2) may differ in their
// last digits between machines: the statistics kernels add in as many lanes
// as the CPU has (AVX-512, AVX2 or scalar), so the order of the additions
// differs. Such figures match within kRelativeSlack; every other character,
// integers included, matches exactly.
#include "clirunner.h"
#include "testsupport.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QTimeZone>

#include <algorithm>
#include <cmath>

using namespace clirunner;

namespace {

const QString kGoldenDir = QStringLiteral(CKPTSCOPE_SOURCE_DIR "/tests/golden");

// One command; `written` is a file it writes (relative), compared too, as
// golden/NAME.<its extension>.
struct Case {
    QString name;
    QStringList args;
    QString written;
};

QStringList split(const char* args) {
    return QString::fromUtf8(args).split(QLatin1Char(' '), Qt::SkipEmptyParts);
}

// The first tensor of the generated small.oxck (see initTestCase).
constexpr const char* kTensor = "layers.0.attn.q.weight";

std::vector<Case> cases() {
    const QString t = QString::fromLatin1(kTensor);
    std::vector<Case> c = {
        {QStringLiteral("help"), split("--help"), {}},
        {QStringLiteral("no-args"), {}, {}},
        {QStringLiteral("unknown-command"), split("frobnicate model.oxck"), {}},
        {QStringLiteral("generate-oxck"),
         split("generate oxck gen.oxck --tensors 3 --size 2K --seed 5"),
         QStringLiteral("gen.oxck")},
        {QStringLiteral("generate-gradient"),
         split("generate gradient gen.json --nodes 9 --optimizer-bytes 32 --seed 5"),
         QStringLiteral("gen.json")},
        {QStringLiteral("generate-bad-kind"), split("generate frob x.bin"), {}},
        {QStringLiteral("generate-bad-size"), split("generate oxck x.oxck --size 3Q"), {}},
        {QStringLiteral("generate-wrong-option"), split("generate oxck x.oxck --nodes 5"), {}},
        {QStringLiteral("generate-gguf-bad-type"),
         split("generate gguf x.gguf --type IQ2_XXS"),
         {}},
        {QStringLiteral("generate-gguf-oxck-option"),
         split("generate gguf x.gguf --tensors 3"),
         {}},
        {QStringLiteral("info-model"), split("info model.oxck"), {}},
        {QStringLiteral("info-model-json"), split("info model.oxck --json"), {}},
        {QStringLiteral("info-gradient"), split("info gradient.json"), {}},
        {QStringLiteral("info-gradient-json"), split("info gradient.json --json"), {}},
        {QStringLiteral("info-small"), split("info small.oxck"), {}},
        {QStringLiteral("info-safetensors-json"), split("info small.safetensors --json"), {}},
        {QStringLiteral("info-grad-json"), split("info grad.json --json"), {}},
        {QStringLiteral("info-no-file"), split("info"), {}},
        {QStringLiteral("info-unknown-option"), split("info model.oxck --frob"), {}},
        {QStringLiteral("info-two-files"), split("info model.oxck model.oxck"), {}},
        {QStringLiteral("info-missing-file"), split("info nothing.oxck"), {}},
        {QStringLiteral("stats-model"), split("stats model.oxck"), {}},
        {QStringLiteral("stats-model-json"), split("stats model.oxck --json --bins 4"), {}},
        {QStringLiteral("stats-model-csv"), split("stats model.oxck --csv"), {}},
        {QStringLiteral("stats-small-tensor-json"),
         split("stats small.oxck --json --bins 8 --tensor") << t,
         {}},
        {QStringLiteral("stats-gradient"), split("stats gradient.json"), {}},
        {QStringLiteral("stats-gradient-json"), split("stats gradient.json --json --bins 3"), {}},
        {QStringLiteral("stats-bins-zero"), split("stats model.oxck --bins 0"), {}},
        {QStringLiteral("stats-bins-missing"), split("stats model.oxck --bins"), {}},
        {QStringLiteral("stats-bins-table"), split("stats model.oxck --bins 4"), {}},
        {QStringLiteral("stats-json-csv"), split("stats model.oxck --json --csv"), {}},
        {QStringLiteral("stats-unknown-tensor"), split("stats small.oxck --tensor nope"), {}},
        {QStringLiteral("diff-same"), split("diff small.oxck small.oxck"), {}},
        {QStringLiteral("diff-tensors"), split("diff small.oxck small2.oxck"), {}},
        {QStringLiteral("diff-tensors-json"),
         split("diff small.oxck small2.oxck --json --bins 4"),
         {}},
        {QStringLiteral("diff-tolerance-json"),
         split("diff small.oxck small2.oxck --json --atol 0.5 --rtol 0.1 --bins 2 --tensor") << t,
         {}},
        {QStringLiteral("diff-gradient"), split("diff grad.json grad2.json"), {}},
        {QStringLiteral("diff-gradient-json"), split("diff grad.json grad2.json --json"), {}},
        {QStringLiteral("diff-mixed"), split("diff small.oxck grad.json"), {}},
        {QStringLiteral("diff-one-file"), split("diff small.oxck"), {}},
        {QStringLiteral("diff-bad-atol"), split("diff small.oxck small2.oxck --atol -1"), {}},
        {QStringLiteral("diff-unknown-option"), split("diff small.oxck small2.oxck --frob"), {}},
        {QStringLiteral("diff-unknown-tensor"),
         split("diff small.oxck small2.oxck --tensor nope"),
         {}},
        {QStringLiteral("export-npy"), split("export small.oxck -o out.npy --tensor") << t,
         QStringLiteral("out.npy")},
        {QStringLiteral("export-csv"), split("export small.oxck --output out.csv --tensor") << t,
         QStringLiteral("out.csv")},
        {QStringLiteral("export-raw"),
         split("export small.oxck --format raw -o out.bin --tensor") << t,
         QStringLiteral("out.bin")},
        {QStringLiteral("export-stdout-csv"),
         split("export small.oxck --format csv -o - --tensor") << t,
         {}},
        {QStringLiteral("export-no-tensor"), split("export small.oxck -o out.npy"), {}},
        {QStringLiteral("export-no-output"), split("export small.oxck --tensor") << t, {}},
        {QStringLiteral("export-bad-format"),
         split("export small.oxck -o out.x --format xyz --tensor") << t,
         {}},
        {QStringLiteral("convert-safetensors"), split("convert small.oxck conv.safetensors"),
         QStringLiteral("conv.safetensors")},
        {QStringLiteral("convert-oxck"), split("convert small.safetensors conv.oxck"),
         QStringLiteral("conv.oxck")},
        {QStringLiteral("convert-no-out"), split("convert small.oxck"), {}},
        {QStringLiteral("convert-bad-ext"), split("convert small.oxck conv.txt"), {}},
        {QStringLiteral("layout-gradient"), split("layout gradient.json"), {}},
        {QStringLiteral("layout-grad-json"), split("layout grad.json --json"), {}},
        {QStringLiteral("layout-model"), split("layout model.oxck"), {}},
        {QStringLiteral("layout-safetensors"), split("layout small.safetensors"), {}},
        {QStringLiteral("layout-dot-not-allowed"), split("layout grad.json --dot"), {}},
        {QStringLiteral("graph-dot"), split("graph grad.json --dot"), {}},
        {QStringLiteral("graph-json-not-allowed"), split("graph grad.json --json"), {}},
        {QStringLiteral("render-no-output"), split("render grad.json"), {}},
        {QStringLiteral("render-model"), split("render model.oxck -o out.svg"), {}},
        {QStringLiteral("timeline-help"), split("timeline --help"), {}},
        {QStringLiteral("timeline-run"), split("timeline run"), {}},
        {QStringLiteral("timeline-run-json"), split("timeline run --json"), {}},
        {QStringLiteral("timeline-run-tensor-json"),
         split("timeline run --no-cache --json --tensor") << t,
         {}},
        {QStringLiteral("timeline-gradrun"), split("timeline gradrun --no-cache"), {}},
        {QStringLiteral("timeline-gradrun-json"), split("timeline gradrun --no-cache --json"), {}},
        {QStringLiteral("timeline-no-path"), split("timeline"), {}},
        {QStringLiteral("timeline-unknown-tensor"), split("timeline run --tensor nope"), {}},
    };
    // Every command's own --help (timeline's is above).
    for (const char* command : {"info", "stats", "export", "convert", "layout", "graph", "render",
                                "diff", "generate", "scan"})
        c.push_back({QString::fromLatin1(command) + QStringLiteral("-help"),
                     {QString::fromLatin1(command), QStringLiteral("--help")},
                     {}});
    return c;
}

bool updating() {
    return qEnvironmentVariableIntValue("CKPTSCOPE_UPDATE_GOLDEN") == 1;
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A few hundred ulps of a double: far below any difference a defect makes,
// far above what a different order of additions makes.
constexpr double kRelativeSlack = 1e-13;

// A number with a fraction or an exponent: a figure that may come from a sum.
const QRegularExpression& floatToken() {
    static const QRegularExpression re(
        QStringLiteral("-?[0-9]+(\\.[0-9]+([eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+)"));
    return re;
}

// The line with each float replaced by "#", and the floats in order.
std::pair<QString, std::vector<double>> splitFloats(const QByteArray& line) {
    const QString text = QString::fromUtf8(line);
    QString skeleton;
    std::vector<double> values;
    qsizetype at = 0;
    for (const QRegularExpressionMatch& m : floatToken().globalMatch(text)) {
        skeleton += text.mid(at, m.capturedStart() - at) + QLatin1Char('#');
        values.push_back(m.captured().toDouble());
        at = m.capturedEnd();
    }
    skeleton += text.mid(at);
    return {skeleton, values};
}

// Equal lines, or lines that differ only in the last digits of floats.
bool sameLine(const QByteArray& expected, const QByteArray& actual) {
    if (expected == actual)
        return true;
    const auto [e, ev] = splitFloats(expected);
    const auto [a, av] = splitFloats(actual);
    if (e != a || ev.size() != av.size())
        return false;
    for (size_t i = 0; i < ev.size(); ++i)
        if (!(std::abs(ev[i] - av[i]) <=
              kRelativeSlack * std::max(std::abs(ev[i]), std::abs(av[i]))))
            return false;
    return true;
}

// The line where two texts first differ (beyond the slack of sums), both
// versions, for the failure message; empty when they match.
QString firstDifference(const QByteArray& expected, const QByteArray& actual) {
    const QList<QByteArray> e = expected.split('\n'), a = actual.split('\n');
    for (qsizetype i = 0; i < std::max(e.size(), a.size()); ++i) {
        const QByteArray x = i < e.size() ? e[i] : QByteArray("<end>");
        const QByteArray y = i < a.size() ? a[i] : QByteArray("<end>");
        if (!sameLine(x, y))
            return QStringLiteral("line %1:\n  golden: %2\n  actual: %3")
                .arg(i + 1)
                .arg(QString::fromUtf8(x.left(300)), QString::fromUtf8(y.left(300)));
    }
    return {};
}

// Writes (when updating) or compares one golden file.
void check(const QString& goldenName, const QByteArray& actual) {
    const QString path = kGoldenDir + QLatin1Char('/') + goldenName;
    if (updating()) {
        QFile f(path);
        QVERIFY2(f.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
        f.write(actual);
        return;
    }
    QVERIFY2(QFileInfo::exists(path),
             qPrintable(path + QStringLiteral(" is missing; run tools/update-golden.sh")));
    const QString difference = firstDifference(readAll(path), actual);
    QVERIFY2(difference.isEmpty(),
             qPrintable(goldenName + QStringLiteral(" differs, ") + difference));
}

} // namespace

class TestCliGolden : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void golden_data();
    void golden();
    void slackCoversOnlyTheLastDigitsOfFloats();
    void cleanupTestCase();

private:
    void generate(const QString& args);
    void setModified(const QString& path);

    QTemporaryDir m_tmp;
    QString m_oldCwd;
};

void TestCliGolden::generate(const QString& args) {
    const Run r = runCli(args.split(QLatin1Char(' ')));
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
}

// The run's files carry a fixed time, as the timeline prints it.
void TestCliGolden::setModified(const QString& path) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadWrite));
    const QDateTime when(QDate(2026, 1, 2), QTime(3, 4, 5), QTimeZone::utc());
    QVERIFY(f.setFileTime(when, QFileDevice::FileModificationTime));
}

void TestCliGolden::initTestCase() {
    requireCli();
    QVERIFY(m_tmp.isValid());
    if (updating())
        QVERIFY(QDir().mkpath(kGoldenDir));
    m_oldCwd = QDir::currentPath();
    QVERIFY(QDir::setCurrent(m_tmp.path()));
    qputenv("XDG_CACHE_HOME", m_tmp.filePath(QStringLiteral("cache")).toUtf8());
    qunsetenv("CKPTSCOPE_CACHE_MAX_BYTES");
    const QString samples = QStringLiteral(CKPTSCOPE_SOURCE_DIR "/resources/samples/");
    QVERIFY(
        QFile::copy(samples + QStringLiteral("model_sample.oxck"), QStringLiteral("model.oxck")));
    QVERIFY(QFile::copy(samples + QStringLiteral("gradient_sample.json"),
                        QStringLiteral("gradient.json")));
    generate(QStringLiteral("generate oxck small.oxck --tensors 4 --size 4K --seed 7"));
    generate(QStringLiteral("generate oxck small2.oxck --tensors 4 --size 4K --seed 8"));
    generate(
        QStringLiteral("generate gradient grad.json --nodes 12 --optimizer-bytes 64 --seed 3"));
    generate(
        QStringLiteral("generate gradient grad2.json --nodes 14 --optimizer-bytes 64 --seed 3"));
    generate(QStringLiteral("convert small.oxck small.safetensors"));
    QVERIFY(QDir().mkpath(QStringLiteral("run")));
    QVERIFY(QDir().mkpath(QStringLiteral("gradrun")));
    generate(QStringLiteral("generate oxck run/step_100.oxck --tensors 4 --size 4K --seed 1"));
    generate(QStringLiteral("generate oxck run/step_200.oxck --tensors 4 --size 4K --seed 2"));
    generate(QStringLiteral("generate gradient gradrun/a.json --nodes 10 --optimizer-bytes 32"));
    generate(QStringLiteral("generate gradient gradrun/b.json --nodes 12 --optimizer-bytes 32 "
                            "--seed 2"));
    for (const char* f :
         {"run/step_100.oxck", "run/step_200.oxck", "gradrun/a.json", "gradrun/b.json"})
        setModified(QString::fromLatin1(f));
}

void TestCliGolden::cleanupTestCase() {
    QDir::setCurrent(m_oldCwd);
}

void TestCliGolden::golden_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("written");
    for (const Case& c : cases())
        QTest::newRow(qPrintable(c.name)) << c.args << c.written;
}

void TestCliGolden::golden() {
    QFETCH(QStringList, args);
    QFETCH(QString, written);
    const Run r = runCli(args);
    QVERIFY2(r.exitCode >= 0, qPrintable(describe(r))); // not a crash
    QByteArray text = "$ ckptscope-cli " + args.join(QLatin1Char(' ')).toUtf8() + "\n--- exit " +
                      QByteArray::number(r.exitCode) + "\n--- stdout\n" + r.out + "--- stderr\n" +
                      r.err;
    text.replace(QDir(m_tmp.path()).canonicalPath().toUtf8(), "<tmp>");
    text.replace(m_tmp.path().toUtf8(), "<tmp>");
    const QString name = QString::fromUtf8(QTest::currentDataTag());
    check(name + QStringLiteral(".txt"), text);
    if (!written.isEmpty()) {
        QVERIFY2(QFileInfo::exists(written), qPrintable(written + QStringLiteral(" not written")));
        check(name + QLatin1Char('.') + QFileInfo(written).suffix(), readAll(written));
    }
}

// The slack lets a sum's last digits differ and nothing else: not an
// integer, not a float beyond its last digits, not the text around them.
void TestCliGolden::slackCoversOnlyTheLastDigitsOfFloats() {
    QVERIFY(sameLine("\"std\": 0.05716393219599122,", "\"std\": 0.05716393219599114,"));
    QVERIFY(sameLine("a,3.1440521317678476,1e-300", "a,3.144052131767842,1.0000000000000002e-300"));
    QVERIFY(!sameLine("\"std\": 0.0571639321959,", "\"std\": 0.0571639321960,"));
    QVERIFY(!sameLine("\"count\": 3025,", "\"count\": 3026,"));
    QVERIFY(!sameLine("\"std\": 0.5,", "\"mean\": 0.5,"));
    QVERIFY(!sameLine("0.5,0.25", "0.5"));
    QVERIFY(!sameLine("nan", "0.5"));
    QVERIFY(!firstDifference("x\n0.5\n", "x\n0.5\n0.5\n").isEmpty());
    QVERIFY(firstDifference("x\n0.5\n", "x\n0.5000000000000001\n").isEmpty());
}

QTEST_GUILESS_MAIN(TestCliGolden)
#include "tst_cligolden.moc"
