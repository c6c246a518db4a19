#include "common/naturalorder.h"

#include "ckptscope/common/naturalorder.h"

#include <QTest>

#include <algorithm>

class TestNaturalOrder : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sortsNumbersByValue() {
        QStringList names = {QStringLiteral("layers.10"), QStringLiteral("layers.2"),
                             QStringLiteral("layers.1"),  QStringLiteral("Layers.3"),
                             QStringLiteral("layers.02"), QStringLiteral("embed"),
                             QStringLiteral("layers.2a")};
        std::sort(names.begin(), names.end(), naturalLess);
        const QStringList expected = {QStringLiteral("embed"),     QStringLiteral("layers.1"),
                                      QStringLiteral("layers.02"), QStringLiteral("layers.2"),
                                      QStringLiteral("layers.2a"), QStringLiteral("Layers.3"),
                                      QStringLiteral("layers.10")};
        QCOMPARE(names, expected);
    }
    void isStrictWeakOrder() {
        const QString a = QStringLiteral("x2"), b = QStringLiteral("x02");
        QVERIFY(naturalLess(a, b) != naturalLess(b, a)); // total: equal values still ordered
        QVERIFY(!naturalLess(a, a));
        QVERIFY(naturalLess(QStringLiteral("a"), QStringLiteral("a1")));
        QVERIFY(naturalLess(QStringLiteral("a99999999999999999999"),
                            QStringLiteral("a100000000000000000000")));
    }
    // The GUI's order is the CLI's, non-ASCII names included: an accented
    // capital, Arabic-Indic digits (not a number to either), a character
    // past the BMP against one just below it (UTF-16 code units order them
    // the other way round).
    void nonAsciiSortsAsTheCore() {
        const std::vector<std::string> utf8 = {"\xc3\x84.1",
                                               "a.10",
                                               "a.2",
                                               "\xc3\xa9",
                                               "z",
                                               "layer.\xd9\xa3",
                                               "layer.\xd9\xa1\xd9\xa0",
                                               "layer.3",
                                               "\xf0\x9f\x98\x80",
                                               "\xef\xbd\x81",
                                               "A.2"};
        std::vector<std::string> core = utf8;
        std::sort(core.begin(), core.end(), [](const std::string& a, const std::string& b) {
            return ckptscope::naturalLess(a, b);
        });
        QStringList gui;
        for (const std::string& s : utf8)
            gui << QString::fromStdString(s);
        std::sort(gui.begin(), gui.end(), naturalLess);
        QStringList expected;
        for (const std::string& s : core)
            expected << QString::fromStdString(s);
        QCOMPARE(gui, expected);
        QVERIFY(
            naturalLess(QString::fromUtf8("\xef\xbd\x81"), QString::fromUtf8("\xf0\x9f\x98\x80")));
    }
};

QTEST_APPLESS_MAIN(TestNaturalOrder)
#include "tst_naturalorder.moc"
