// The fuzz targets' own checks (tests/fuzz/fuzzchecks.h) over every corpus
// file (the fuzzers' seeds) and over the inputs the fuzzers found
// (tests/data/regressions/), so a fixed crash stays fixed under `make test`.
#include "fuzzchecks.h"
#include "testsupport.h"

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QTest>

#include <string>

using namespace testsupport;

class TestFuzzRegressions : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void corpusHoldsFuzzInvariants();
    void dcpPlanAndItsMutations();
    void regressionInputs_data();
    void regressionInputs();
};

void TestFuzzRegressions::corpusHoldsFuzzInvariants() {
    REQUIRE_CONFORMANCE();
    // Every seed the fuzzers start from (the folders run-fuzzers.sh names)
    // through every fuzz check: a seed that breaks a check fails here, in
    // ctest, before the fuzz smoke run meets it.
    int files = 0;
    for (const QString& sub :
         {QStringLiteral("valid"), QStringLiteral("invalid"), QStringLiteral("safetensors/valid"),
          QStringLiteral("safetensors/invalid"), QStringLiteral("gguf/valid"),
          QStringLiteral("gguf/invalid"), QStringLiteral("pytorch/valid"),
          QStringLiteral("pytorch/invalid")}) {
        QDirIterator it(testsupport::conformanceDir() + QLatin1Char('/') + sub, QDir::Files,
                        QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            const std::string bytes = testsupport::readFile(path);
            const std::string_view view(bytes);
            try {
                fuzzchecks::checkOxck(view);
                fuzzchecks::checkMetadata(view.substr(0, 4096)); // the fuzzer's -max_len
                fuzzchecks::checkGradient(view);
                fuzzchecks::checkDocument(view);
                fuzzchecks::checkSafetensors(view);
                fuzzchecks::checkGguf(view);
                fuzzchecks::checkLayout(view.substr(0, 1024));
                fuzzchecks::checkPickle(view);
                fuzzchecks::checkPytorch(view);
                fuzzchecks::checkS3Xml(view);
            } catch (const fuzzchecks::InvariantViolation& e) {
                QFAIL(qPrintable(path + QStringLiteral(": ") + QString::fromUtf8(e.what())));
            }
            ++files;
        }
    }
    QVERIFY(files > 100);
}

void TestFuzzRegressions::dcpPlanAndItsMutations() {
    // fuzz_dcp's starting point: no input is the valid folder, which opens
    // and reads (checkDcp requires tensors then); mutations of its plan (a
    // byte flipped at every 7th place of its first kilobyte) are refused
    // naming the folder or read the same in pieces as whole.
    try {
        fuzzchecks::checkDcp({});
        for (size_t at = 0; at < 1024; at += 7) {
            std::string flip(at + 1, '\0');
            flip[at] = '\x5a';
            fuzzchecks::checkDcp(flip);
        }
    } catch (const fuzzchecks::InvariantViolation& e) {
        QFAIL(e.what());
    }
}

void TestFuzzRegressions::regressionInputs_data() {
    // tests/data/regressions/TARGET-NAME: an input fuzz_TARGET crashed on.
    QTest::addColumn<QString>("path");
    const QDir dir(QStringLiteral(CKPTSCOPE_SOURCE_DIR "/tests/data/regressions"));
    int rows = 0;
    for (const QFileInfo& fi : dir.entryInfoList(QDir::Files, QDir::Name)) {
        if (fi.fileName() == QStringLiteral("README.md"))
            continue;
        QTest::newRow(qPrintable(fi.fileName())) << fi.filePath();
        ++rows;
    }
    if (rows == 0)
        QTest::newRow("none") << QString();
}

void TestFuzzRegressions::regressionInputs() {
    QFETCH(QString, path);
    if (path.isEmpty())
        QSKIP("no regression inputs");
    const QString name = QFileInfo(path).fileName();
    const std::string bytes = testsupport::readFile(path);
    const QString target = name.section(QLatin1Char('-'), 0, 0);
    void (*check)(std::string_view) = nullptr;
    if (target == QStringLiteral("oxck"))
        check = fuzzchecks::checkOxck;
    else if (target == QStringLiteral("metadata"))
        check = fuzzchecks::checkMetadata;
    else if (target == QStringLiteral("gradient"))
        check = fuzzchecks::checkGradient;
    else if (target == QStringLiteral("document"))
        check = fuzzchecks::checkDocument;
    else if (target == QStringLiteral("layout"))
        check = fuzzchecks::checkLayout;
    else if (target == QStringLiteral("safetensors"))
        check = fuzzchecks::checkSafetensors;
    else if (target == QStringLiteral("gguf"))
        check = fuzzchecks::checkGguf;
    else if (target == QStringLiteral("pickle"))
        check = fuzzchecks::checkPickle;
    else if (target == QStringLiteral("pytorch"))
        check = fuzzchecks::checkPytorch;
    else if (target == QStringLiteral("s3xml"))
        check = fuzzchecks::checkS3Xml;
    else if (target == QStringLiteral("dcp"))
        check = fuzzchecks::checkDcp;
    QVERIFY2(check, qPrintable(name + QStringLiteral(": name must start with a fuzz target")));
    try {
        check(bytes);
    } catch (const fuzzchecks::InvariantViolation& e) {
        QFAIL(e.what());
    }
}

QTEST_GUILESS_MAIN(TestFuzzRegressions)
#include "tst_fuzzregressions.moc"
