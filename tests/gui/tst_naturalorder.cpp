#include "common/naturalorder.h"

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
};

QTEST_APPLESS_MAIN(TestNaturalOrder)
#include "tst_naturalorder.moc"
