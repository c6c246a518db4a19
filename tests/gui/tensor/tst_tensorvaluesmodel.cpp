#include "tensor/tensorvaluesmodel.h"

#include "picklewriter.h"

#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/io/bytesource.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

using namespace ckptscope;

namespace {

std::vector<float> iota(size_t n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = float(i) * 0.5f;
    return v;
}

// A cell's data once its chunk is read (the model answers at once with a
// placeholder and reads off the GUI thread); "(never read)" when it is not.
QVariant settled(const QModelIndex& index, int role = Qt::DisplayRole) {
    index.data(role); // asks for the chunk
    if (!QTest::qWaitFor([&] {
            return index.data(Qt::DisplayRole).toString() != TensorValuesModel::placeholder();
        }))
        return QStringLiteral("(never read)");
    return index.data(role);
}

} // namespace

class TestTensorValuesModel : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::shared_ptr<const Document> m_doc;
    std::string m_path;

private Q_SLOTS:
    void initTestCase() {
        Checkpoint c;
        c.addTensor({"vec", {10000}, iota(10000)});     // 1-D, several chunks
        c.addTensor({"mat", {3, 4}, iota(12)});         // 2-D
        c.addTensor({"cube", {2, 3, 4, 5}, iota(120)}); // 4-D
        c.addTensor({"odd", {2, 3}, iota(4)});          // mismatch: shown as stored
        m_path = m_dir.filePath(QStringLiteral("v.oxck")).toStdString();
        c.save(m_path);
        m_doc = Document::open(m_path);
    }
    void oneDimensionalIsAColumn() {
        TensorValuesModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTensor(m_doc, 0);
        QCOMPARE(model.rowCount(), 10000);
        QCOMPARE(model.columnCount(), 1);
        // Not read yet: a placeholder, and nothing to copy.
        QCOMPARE(model.index(9999, 0).data().toString(), TensorValuesModel::placeholder());
        QVERIFY(!model.index(9999, 0).data(Qt::EditRole).isValid());
        QCOMPARE(settled(model.index(9999, 0), Qt::EditRole).toDouble(), 9999 * 0.5);
        QCOMPARE(settled(model.index(4097, 0)).toString(), QStringLiteral("2048.5"));
        QCOMPARE(model.pendingReads(), size_t(0));
    }
    void twoDimensionalIsAGrid() {
        TensorValuesModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTensor(m_doc, 1);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), 4);
        QCOMPARE(settled(model.index(2, 1), Qt::EditRole).toDouble(), 9 * 0.5);
        QVERIFY(model.leadingDimensions().empty());
    }
    void higherDimensionsAreSliced() {
        TensorValuesModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTensor(m_doc, 2);
        QCOMPARE(model.leadingDimensions(), (std::vector<uint64_t>{2, 3}));
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.columnCount(), 5);
        model.setLeadingIndices({1, 2});
        // element [1][2][3][4] = ((1*3 + 2)*4 + 3)*5 + 4 = 119
        QCOMPARE(settled(model.index(3, 4), Qt::EditRole).toDouble(), 119 * 0.5);
        QCOMPARE(model.linearIndex(0, 0), uint64_t(100));
        model.setLeadingIndices({9, 9}); // clamped
        QCOMPARE(model.leadingIndices(), (std::vector<uint64_t>{1, 2}));
    }
    void mismatchShowsStoredValues() {
        TensorValuesModel model;
        model.setTensor(m_doc, 3);
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.columnCount(), 1);
    }
    // A meta tensor has no values: no rows, and the note says why (not
    // that the file stores fewer values than the shape holds).
    void metaTensorHasNoValues() {
        const std::string zip = picklewriter::metaTensorZip("float32");
        const auto doc = Document::open(
            std::make_shared<MemorySource>(std::vector<uint8_t>(zip.begin(), zip.end()), "m.pt"));
        TensorValuesModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTensor(doc, 0);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.layoutNote(),
                 QStringLiteral("A meta tensor: torch saved its dtype and shape, no values."));
        model.setTensor(m_doc, 3); // a stored count that differs from the shape's
        QVERIFY(model.layoutNote().contains(QStringLiteral("the file stores 4 values")));
    }
    void anotherTensorDropsTheReadsOfTheLast() {
        TensorValuesModel model;
        model.setTensor(m_doc, 0);
        for (int row = 0; row < 10000; row += 4096)
            model.index(row, 0).data(); // three chunks asked
        model.setTensor(m_doc, 1);
        QCOMPARE(model.pendingReads(), size_t(0));
        QCOMPARE(settled(model.index(0, 1)).toString(), QStringLiteral("0.5"));
    }
    void fileChangedIsReportedOnce() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("c.oxck")).toStdString();
        Checkpoint c;
        c.addTensor({"vec", {20000}, iota(20000)});
        c.save(path);
        auto doc = Document::open(path);
        TensorValuesModel model;
        QSignalSpy failed(&model, &TensorValuesModel::readFailed);
        model.setTensor(doc, 0);
        QVERIFY(::truncate(path.c_str(), 100) == 0);
        model.index(15000, 0).data();
        QVERIFY(failed.wait(10000));
        QCOMPARE(model.index(15000, 0).data().toString(), QStringLiteral("?"));
        QCOMPARE(model.index(15001, 0).data().toString(), QStringLiteral("?"));
        QTest::qWait(50);
        QCOMPARE(failed.count(), 1);
        QVERIFY(failed.at(0).at(0).toString().contains(QStringLiteral("changed on disk")));
    }
};

QTEST_MAIN(TestTensorValuesModel)
#include "tst_tensorvaluesmodel.moc"
