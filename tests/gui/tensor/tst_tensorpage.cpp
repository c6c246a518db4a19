#include "guisupport.h"
#include "picklewriter.h"
#include "tensor/histogramview.h"
#include "tensor/tensorpage.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/io/bytesource.h"

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace ckptscope;
using guisupport::shownLabels;
using testsupport::qstr;

namespace {

int tensorIndex(const Document& doc, const std::string& name) {
    for (size_t i = 0; i < doc.tensors().size(); ++i)
        if (doc.tensors()[i].name == name)
            return int(i);
    return -1;
}

bool anyContains(const QStringList& texts, const QString& needle) {
    for (const QString& t : texts)
        if (t.contains(needle))
            return true;
    return false;
}

} // namespace

class TestTensorPage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A PyTorch tensor says where its elements lie (storage, offset,
    // strides), what else views that storage, the same object under another
    // name, and the parameter an optimizer tensor belongs to.
    void pickledTensorsSayWhatTheyView() {
        REQUIRE_CONFORMANCE();
        const auto views = Document::open(
            testsupport::corpus(QStringLiteral("pytorch/valid/views.pt")).toStdString());
        TensorPage page;
        page.setTensor(views, tensorIndex(*views, "column_2"));
        QStringList shown = shownLabels(&page);
        QVERIFY2(anyContains(shown, QStringLiteral(
                                        "A view of storage 0 (F32, 96 B) from element 2, "
                                        "strides [6] (not contiguous); 5 other tensors view it.")),
                 qPrintable(shown.join(QLatin1Char('|'))));
        page.setTensor(views, tensorIndex(*views, "base_again"));
        shown = shownLabels(&page);
        QVERIFY2(anyContains(shown, QStringLiteral("The same tensor object as base")),
                 qPrintable(shown.join(QLatin1Char('|'))));
        QVERIFY(!anyContains(shown, QStringLiteral("strides")));
        const auto opt = Document::open(
            testsupport::corpus(QStringLiteral("pytorch/valid/checkpoint-50/optimizer.pt"))
                .toStdString());
        page.setTensor(opt, tensorIndex(*opt, "state.16.exp_avg"));
        shown = shownLabels(&page);
        QVERIFY2(anyContains(shown, QStringLiteral("Optimizer state of the parameter "
                                                   "model.layers.0.input_layernorm.weight")),
                 qPrintable(shown.join(QLatin1Char('|'))));
    }

    // A name is shown as it is in the file: HTML-special characters neither
    // interpreted nor shown as entities.
    void namesShownExactly() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("names.oxck"));
        const std::string name = "<b>&\"'x</b> &lt; &quot;";
        Checkpoint c;
        c.addTensor({name, {2}, {1.0f, 2.0f}});
        c.save(path.toStdString());
        TensorPage page;
        page.setTensor(Document::open(path.toStdString()), 0);
        const QStringList shown = shownLabels(&page);
        QVERIFY2(shown.contains(qstr(name)), qPrintable(shown.join(QLatin1Char('|'))));
    }

    // The warning about a tensor quotes its name with real quotes.
    void warningsShownExactly_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("tensor");
        QTest::newRow("mismatch") << QStringLiteral("valid/edge_cases.oxck")
                                  << QStringLiteral("mismatch_shape_2x3_data_4");
        QTest::newRow("overflow") << QStringLiteral("invalid/shape_product_overflow.oxck")
                                  << QStringLiteral("x");
    }
    void warningsShownExactly() {
        REQUIRE_CONFORMANCE();
        QFETCH(QString, file);
        QFETCH(QString, tensor);
        auto doc =
            Document::open((testsupport::conformanceDir() + QLatin1Char('/') + file).toStdString());
        const int index = tensorIndex(*doc, tensor.toStdString());
        QVERIFY(index >= 0);
        TensorPage page;
        page.setTensor(doc, index);
        const QStringList shown = shownLabels(&page);
        const QString all = shown.join(QLatin1Char('|'));
        QVERIFY2(anyContains(shown, QLatin1Char('"') + tensor + QLatin1Char('"')), qPrintable(all));
        QVERIFY2(!all.contains(QLatin1Char('&')), qPrintable(all)); // no entity left undecoded
        QVERIFY(anyContains(shown, QStringLiteral("⚠")));
    }

    // A read that fails (the file shrank) leaves no statistics and no
    // histogram of the tensor selected before.
    // An empty tensor (issue 22, defect 11): "empty tensor", no share of
    // zeros (their count 0, as the CLI gives it).
    void emptyTensorSaysSo() {
        QTemporaryDir dir;
        Checkpoint c;
        c.addTensor({"empty", {0}, {}});
        const std::string path = dir.filePath(QStringLiteral("e.oxck")).toStdString();
        c.save(path);
        auto doc = Document::open(path);
        TensorPage page;
        QSignalSpy ready(&page, &TensorPage::statsReady);
        page.setTensor(doc, 0);
        QVERIFY(QTest::qWaitFor([&] { return !ready.isEmpty(); }, 10000));
        QCOMPARE(page.statText(QStringLiteral("zeros")), QStringLiteral("0"));
        const QStringList labels = guisupport::shownLabels(&page);
        QVERIFY2(labels.contains(QStringLiteral("empty tensor")),
                 qPrintable(labels.join(QLatin1Char('|'))));
        for (const QString& l : labels)
            QVERIFY2(!l.contains(QStringLiteral("0.00%")), qPrintable(l));
    }
    // A complex tensor: every statistic says "not computed", no statistics
    // run (none fails), no histogram, and the page says why (after a real
    // tensor whose figures must not stay).
    void complexTensorSaysStatisticsAreNotComputed() {
        REQUIRE_CONFORMANCE();
        const auto doc = Document::open(
            testsupport::corpus(QStringLiteral("pytorch/valid/dtypes.pt")).toStdString());
        TensorPage page;
        QSignalSpy ready(&page, &TensorPage::statsReady);
        QSignalSpy failed(&page, &TensorPage::statsFailed);
        page.setTensor(doc, tensorIndex(*doc, "float32"));
        QVERIFY(QTest::qWaitFor([&] { return !ready.isEmpty(); }, 10000));
        QVERIFY(!page.histogramView()->histogram().counts.empty());
        page.setTensor(doc, tensorIndex(*doc, "complex64"));
        QTest::qWait(100);
        QCOMPARE(ready.size(), 1);
        QVERIFY(failed.isEmpty());
        QVERIFY(page.histogramView()->histogram().counts.empty());
        for (const char* key : {"min", "max", "mean", "std", "l2", "zeros", "nan", "+inf", "-inf"})
            QCOMPARE(page.statText(QString::fromLatin1(key)), QStringLiteral("not computed"));
        const QStringList shown = shownLabels(&page);
        QVERIFY2(anyContains(shown, QStringLiteral("C64: each value is a (real, imaginary) pair "
                                                   "of float32; statistics and the histogram "
                                                   "are not computed for complex values.")),
                 qPrintable(shown.join(QLatin1Char('|'))));
    }

    // A meta tensor (saved while on the meta device) says it holds no
    // values; no note promises values converted to f32.
    void metaTensorSaysItHoldsNoValues() {
        const std::string zip = picklewriter::metaTensorZip();
        const auto doc = Document::open(
            std::make_shared<MemorySource>(std::vector<uint8_t>(zip.begin(), zip.end()), "m.pt"));
        TensorPage page;
        page.setTensor(doc, 0);
        const QStringList shown = shownLabels(&page);
        QVERIFY2(anyContains(shown, QStringLiteral("A meta tensor: torch saved its dtype and "
                                                   "shape, no values")),
                 qPrintable(shown.join(QLatin1Char('|'))));
        QVERIFY2(!anyContains(shown, QStringLiteral("converted to f32")),
                 qPrintable(shown.join(QLatin1Char('|'))));
        QVERIFY(anyContains(shown, QStringLiteral("(0 B stored)")));
        QVERIFY(!anyContains(shown, QStringLiteral("quantized")));
        for (const char* key : {"min", "max", "mean", "std", "l2", "zeros", "nan", "+inf", "-inf"})
            QCOMPARE(page.statText(QString::fromLatin1(key)), QStringLiteral("not computed"));
    }

    void failedReadClearsHistogramAndStatistics() {
        REQUIRE_CONFORMANCE();
        QTemporaryDir dir;
        const QString copy = dir.filePath(QStringLiteral("mlp.oxck"));
        QVERIFY(
            QFile::copy(testsupport::conformanceDir() + QStringLiteral("/valid/mlp.oxck"), copy));
        auto doc = Document::open(copy.toStdString());
        const int fc1 = tensorIndex(*doc, "fc1.weight"), fc2 = tensorIndex(*doc, "fc2.weight");
        QVERIFY(fc1 >= 0 && fc2 >= 0);
        const auto& t2 = doc->tensors()[size_t(fc2)];
        QVERIFY(t2.dataOffset + t2.dataLen * 4 > 9000); // cut off below
        TensorPage page;
        QSignalSpy ready(&page, &TensorPage::statsReady);
        page.setTensor(doc, fc1);
        QVERIFY(QTest::qWaitFor([&] { return !ready.isEmpty(); }, 10000));
        QVERIFY(!page.histogramView()->histogram().counts.empty());
        QVERIFY(page.statText(QStringLiteral("min")) != QStringLiteral("–"));

        QVERIFY(QFile::resize(copy, 9000));
        QSignalSpy failed(&page, &TensorPage::statsFailed);
        page.setTensor(doc, fc2);
        QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty(); }, 10000));
        QVERIFY2(failed.at(0).at(0).toString().contains(QStringLiteral("changed on disk")),
                 qPrintable(failed.at(0).at(0).toString()));
        QVERIFY(page.histogramView()->histogram().counts.empty());
        for (const char* key : {"min", "max", "mean", "std", "l2", "zeros", "nan", "+inf", "-inf"})
            QCOMPARE(page.statText(QString::fromLatin1(key)), QStringLiteral("–"));
    }
};

QTEST_MAIN(TestTensorPage)
#include "tst_tensorpage.moc"
