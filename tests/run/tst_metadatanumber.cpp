// Metadata values read as numbers, and which keys of a run are numeric.
#include "testsupport.h"

#include "ckptscope/run/metadatanumber.h"

#include <QTest>

#include <cmath>

using namespace ckptscope;

class TestMetadataNumber : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parses() {
        QCOMPARE(*metadataNumber("0.25"), 0.25);
        QCOMPARE(*metadataNumber(" -3 "), -3.0);
        QCOMPARE(*metadataNumber("1e-4"), 1e-4);
        QCOMPARE(*metadataNumber("12345678901234567890"), 12345678901234567890.0);
        QVERIFY(std::isnan(*metadataNumber("nan")));
        QVERIFY(std::isinf(*metadataNumber("inf")));
        for (const char* bad : {"", "  ", "3 epochs", "0x10", "1,5", "adam", "1e999", "--1"})
            QVERIFY2(!metadataNumber(bad), bad);
    }

    void numericKeysOnly() {
        const std::vector<MetadataSeries> m = {
            {"loss", {"2.5", std::nullopt, "1.25"}},   {"lr", {"1e-3", "nan", "5e-4"}},
            {"optimizer", {"adam", "adam", "adam"}},   {"mixed", {"1", "two", "3"}},
            {"all_nan", {"nan", "nan", std::nullopt}},
        };
        const auto n = numericMetadata(m);
        QCOMPARE(n.size(), size_t(2));
        QCOMPARE(n[0].key, std::string("loss"));
        QCOMPARE(n[0].values.size(), size_t(3));
        QCOMPARE(*n[0].values[2], 1.25);
        QVERIFY(!n[0].values[1]);
        QCOMPARE(n[1].key, std::string("lr"));
        QVERIFY(std::isnan(*n[1].values[1]));
    }
};

QTEST_APPLESS_MAIN(TestMetadataNumber)
#include "tst_metadatanumber.moc"
