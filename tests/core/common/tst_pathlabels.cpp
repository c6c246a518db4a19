// Labels that tell two files apart (issue 22, defect 4): the shortest
// trailing parts of the paths that differ.
#include "ckptscope/common/pathlabels.h"

#include <QTest>

using namespace ckptscope;

class TestPathLabels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void labels_data() {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::addColumn<QString>("labelA");
        QTest::addColumn<QString>("labelB");
        QTest::newRow("names differ") << "/x/small.oxck"
                                      << "/x/small2.oxck"
                                      << "small.oxck"
                                      << "small2.oxck";
        QTest::newRow("same name") << "/data/llama/model.safetensors"
                                   << "/data/llama-ft/model.safetensors"
                                   << "llama/model.safetensors"
                                   << "llama-ft/model.safetensors";
        QTest::newRow("two levels up") << "/r/a/run/model.st"
                                       << "/r/b/run/model.st"
                                       << "a/run/model.st"
                                       << "b/run/model.st";
        QTest::newRow("relative and shorter") << "model.st"
                                              << "ft/model.st"
                                              << "model.st"
                                              << "ft/model.st";
        QTest::newRow("doubled separators") << "/m//a/x.st"
                                            << "/m/b/x.st"
                                            << "a/x.st"
                                            << "b/x.st";
        QTest::newRow("the same file") << "/a/x.st"
                                       << "/a/x.st"
                                       << "/a/x.st"
                                       << "/a/x.st";
        QTest::newRow("bare names") << "x.st"
                                    << "y.st"
                                    << "x.st"
                                    << "y.st";
    }
    void labels() {
        QFETCH(QString, a);
        QFETCH(QString, b);
        QFETCH(QString, labelA);
        QFETCH(QString, labelB);
        const auto [la, lb] = distinguishingPaths(a.toStdString(), b.toStdString());
        QCOMPARE(QString::fromStdString(la), labelA);
        QCOMPARE(QString::fromStdString(lb), labelB);
    }
};

QTEST_APPLESS_MAIN(TestPathLabels)
#include "tst_pathlabels.moc"
