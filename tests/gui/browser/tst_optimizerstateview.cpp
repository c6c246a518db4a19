#include "browser/optimizerstateview.h"
#include "common/sizeformat.h"
#include "tensor/hexmodel.h"
#include "tensor/tensorpage.h"

#include "ckptscope/document/document.h"
#include "ckptscope/stats/tensorstats.h"

#include <QLabel>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTableView>
#include <QTest>

#include <cstring>

using namespace ckptscope;

class TestOptimizerStateView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void blobsHexAndF32Statistics() {
        auto doc = Document::open(std::string(CKPTSCOPE_SOURCE_DIR) +
                                  "/resources/samples/gradient_sample.json");
        const auto& state = doc->gradient()->optimizerState;
        QVERIFY(!state.empty());
        OptimizerStateView view;
        view.setDocument(doc);
        QCOMPARE(size_t(view.blobModel()->rowCount()), state.size());
        const std::string name = view.blobModel()->index(0, 0).data().toString().toStdString();
        const std::vector<uint8_t>& bytes = state.at(name);
        QCOMPARE(view.hexModel()->rowCount(), int((bytes.size() + 15) / 16));
        QCOMPARE(view.hexModel()->index(0, 0).data().toString(),
                 QStringLiteral("%1").arg(bytes[0], 2, 16, QLatin1Char('0')));

        // Selecting a blob whose length is a multiple of 4 shows it as f32.
        QSignalSpy ready(view.statsPage(), &TensorPage::statsReady);
        view.selectBlob(1);
        view.selectBlob(0);
        QVERIFY(QTest::qWaitFor([&] { return !ready.isEmpty(); }, 10000));
        std::vector<float> values(bytes.size() / 4);
        std::memcpy(values.data(), bytes.data(), bytes.size());
        const StatsResult direct =
            computeStats(values.data(), values.size(), view.statsPage()->bins());
        const auto got = ready.at(0).at(1).value<StatsResult>();
        QCOMPARE(got.stats.count, direct.stats.count);
        QCOMPARE(*got.stats.min, *direct.stats.min);
        QCOMPARE(*got.stats.max, *direct.stats.max);
        QCOMPARE(got.histogram.counts, direct.histogram.counts);
        // The max as stored: the shortest text that reads back to its f32.
        const QString max = view.statsPage()->statText(QStringLiteral("max"));
        QCOMPARE(max.toFloat(), float(*direct.stats.max));
        // The caption counts as the rest of the window does, with no "(s)".
        const QString caption =
            QStringLiteral("optimizer state read as %1 f32 values, little-endian")
                .arg(groupedNumber(values.size()));
        bool shown = false;
        for (const QLabel* label : view.statsPage()->findChildren<QLabel*>())
            shown = shown || label->text().contains(caption);
        QVERIFY2(shown, qPrintable(caption));
    }

    // Blob names in natural order: layers.2 before layers.10, as shown and
    // as the first selection; the size column still sorts by bytes.
    void blobsInNaturalOrder() {
        ComputationGraphStore g;
        g.insertNode(ComputationNode("n", "matmul", {}));
        GradientCheckpoint ck(std::move(g), 1);
        const std::vector<std::string> natural = {"layers.1.exp_avg", "layers.2.exp_avg",
                                                  "layers.10.exp_avg", "layers.10.exp_avg_sq",
                                                  "layers.100.exp_avg"};
        for (size_t i = 0; i < natural.size(); ++i)
            ck.setOptimizerState(natural[i], std::vector<uint8_t>(4 * (natural.size() - i), 0));
        const std::string json = ck.toJson();
        auto doc = Document::open(std::make_shared<MemorySource>(
            std::vector<uint8_t>(json.begin(), json.end()), "blobs.json"));
        OptimizerStateView view;
        view.setDocument(doc);
        QAbstractItemModel* shown = view.blobTable()->model();
        QCOMPARE(shown->rowCount(), int(natural.size()));
        for (int r = 0; r < shown->rowCount(); ++r) {
            QCOMPARE(shown->index(r, 0).data().toString().toStdString(), natural[size_t(r)]);
            QCOMPARE(view.blobModel()->index(r, 0).data().toString().toStdString(),
                     natural[size_t(r)]);
        }
        view.blobTable()->sortByColumn(1, Qt::AscendingOrder); // smallest first
        QCOMPARE(shown->index(0, 0).data().toString().toStdString(), natural.back());
        view.blobTable()->sortByColumn(0, Qt::DescendingOrder);
        QCOMPARE(shown->index(0, 0).data().toString().toStdString(), natural.back());
        QCOMPARE(shown->index(4, 0).data().toString().toStdString(), natural.front());
    }
};

QTEST_MAIN(TestOptimizerStateView)
#include "tst_optimizerstateview.moc"
