#include "tensor/hexmodel.h"

#include <QAbstractItemModelTester>
#include <QTest>

class TestHexModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void dumpsSixteenBytesPerRow() {
        HexModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        std::vector<uint8_t> bytes(35);
        for (size_t i = 0; i < bytes.size(); ++i)
            bytes[i] = uint8_t(0x41 + i);
        bytes[1] = 0x00;
        model.setBytes(&bytes);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), 17);
        QCOMPARE(model.index(0, 0).data().toString(), QStringLiteral("41"));
        QCOMPARE(model.index(0, 1).data().toString(), QStringLiteral("00"));
        QCOMPARE(model.index(2, 2).data().toString(), QStringLiteral("63"));
        QVERIFY(model.index(2, 3).data().isNull()); // past the end
        QCOMPARE(model.index(0, HexModel::AsciiColumn).data().toString().left(3),
                 QStringLiteral("A·C"));
        QCOMPARE(model.headerData(2, Qt::Vertical).toString(), QStringLiteral("00000020"));
        model.setBytes(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(TestHexModel)
#include "tst_hexmodel.moc"
