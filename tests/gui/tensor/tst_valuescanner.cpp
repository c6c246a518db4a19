// The background NaN/Inf scan (ValueScanner): it flags exactly the tensors
// `stats` finds holding NaN or ±Inf — an F64 tensor at ±1e300 is finite (it
// was flagged once, read through f32), a NaN anywhere is found.
#include "safetensorsbuilder.h"
#include "tensor/valuescanner.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <limits>

using namespace testsupport;

class TestValueScanner : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void flagsWhatStatsFlags() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("wide.safetensors"));
        const double nan = std::numeric_limits<double>::quiet_NaN();
        writeFile(path,
                  stFile({{"huge", "F64", {3}, leBytes(std::vector<double>{1e300, -1e300, 0})},
                          {"max", "F64", {1}, leBytes(std::vector<double>{1.7976931348623157e308})},
                          {"nan", "F64", {2}, leBytes(std::vector<double>{1.0, nan})},
                          {"inf",
                           "F32",
                           {1},
                           leBytes(std::vector<float>{-std::numeric_limits<float>::infinity()})},
                          {"fine", "F32", {2}, leBytes(std::vector<float>{1, 2})}}));
        ValueScanner scanner;
        QSignalSpy flagged(&scanner, &ValueScanner::nonFinite);
        QSignalSpy finished(&scanner, &ValueScanner::finished);
        const auto doc = ckptscope::Document::open(path.toStdString());
        scanner.start(doc);
        QVERIFY(finished.wait(10000));
        QStringList names;
        for (const QList<QVariant>& args : flagged)
            names << qstr(doc->tensors().at(size_t(args.first().toInt())).name);
        names.sort();
        QCOMPARE(names, (QStringList{QStringLiteral("inf"), QStringLiteral("nan")}));
    }
};

QTEST_MAIN(TestValueScanner)
#include "tst_valuescanner.moc"
