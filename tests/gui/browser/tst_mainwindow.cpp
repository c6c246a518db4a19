#include "browser/mainwindow.h"
#include "browser/overviewpage.h"
#include "common/filelocation.h"
#include "common/helpdialogs.h"
#include "common/windowregistry.h"
#include "dcpfixture.h"
#include "deepspeedfixture.h"
#include "dropsupport.h"
#include "gguf/blockpanel.h"
#include "graph/graphpage.h"
#include "graph/nodelist.h"
#include "graph/nodetablemodel.h"
#include "guisupport.h"
#include "launch/runlauncher.h"
#include "mainwindowsupport.h"
#include "metadata/metadatamodel.h"
#include "metadata/metadatatext.h"
#include "optimizerfixture.h"
#include "shardedfixture.h"
#include "testsupport.h"
#include "tensor/histogramview.h"
#include "tensor/tensorpage.h"
#include "tensor/tensortreemodel.h"
#include "tensor/tensorvaluesview.h"
#include "widgets/notificationbar.h"

#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/stats/tensorstats.h"

#include <algorithm>

#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDockWidget>
#include <QFile>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTreeView>
#include <QUrl>

#include <QDateTime>

#include <cmath>
#include <numeric>

using namespace ckptscope;
using guisupport::waitLoaded;

namespace {

const auto kSample = QStringLiteral(":/samples/model_sample.oxck");

// A plain drop; the drop menu (a single file onto a window with a document)
// is answered with Enter, its default: open here, as before.
void drop(MainWindow& w, const QStringList& files) {
    const bool asks = files.size() == 1 && !w.currentPath().isEmpty();
    dropsupport::MenuAnswer answer({Qt::Key_Return});
    QVERIFY(dropsupport::drop(&w, files));
    QCOMPARE(answer.seen(), asks);
}

const auto kGradient = QStringLiteral(":/samples/gradient_sample.json");

// Shown, active and settled, so shortcuts reach it as a user's keys would.
bool showActive(MainWindow& w) {
    w.show();
    w.activateWindow();
    return QTest::qWaitForWindowActive(&w);
}

QAction* actionWithShortcut(QWidget& w, QKeySequence::StandardKey key) {
    for (QAction* a : w.findChildren<QAction*>())
        if (a->shortcuts().contains(QKeySequence(key)))
            return a;
    return nullptr;
}

QAction* menuAction(MainWindow& w, const QString& text) {
    for (QAction* a : w.menuBar()->findChildren<QAction*>())
        if (a->text().remove(QLatin1Char('&')) == text)
            return a;
    return nullptr;
}

Checkpoint smallCheckpoint(float scale) {
    Checkpoint c;
    c.setMetadata("step", "5");
    c.addTensor({"a", {2}, {1 * scale, 2 * scale}});
    c.addTensor({"b", {3}, {3 * scale, 4 * scale, 5 * scale}});
    return c;
}

// The small checkpoint and a third tensor, "bad", holding a NaN, saved in
// `dir`: its path.
QString savedWithNaN(const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("nan.oxck"));
    Checkpoint c = smallCheckpoint(1);
    c.addTensor({"bad", {3}, {1.0f, std::nanf(""), 2.0f}});
    c.save(path.toStdString());
    return path;
}

// `c` saved as NAME in `dir` and opened in `w`, shown at the default size.
bool openSaved(MainWindow& w, const Checkpoint& c, const QTemporaryDir& dir, const char* name) {
    const QString path = dir.filePath(QString::fromLatin1(name));
    c.save(path.toStdString());
    w.resize(1400, 860);
    w.show();
    w.openFile(path);
    return waitLoaded(w);
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true); // keep the user's settings out
        QApplication::setOrganizationName(QStringLiteral("CkptscopeTest"));
        QSettings().clear(); // layouts of an earlier run must not leak in
    }

    void openSampleShowsTreeAndMetadata() {
        MainWindow w;
        w.show();
        w.openFile(kSample);
        QVERIFY(waitLoaded(w));
        auto doc = w.document();
        QVERIFY(doc);
        QVERIFY(w.tensorProxy()->rowCount() > 0);
        // Every tensor has a leaf in the tree.
        for (size_t i = 0; i < doc->tensors().size(); ++i)
            QVERIFY(w.tensorModel()->indexOfTensor(int(i)).isValid());
        QCOMPARE(size_t(w.metadataModel()->rowCount()), doc->metadata().size());
        QCOMPARE(w.metadataModel()->index(0, MetadataModel::Key).data().toString(),
                 QString::fromStdString(doc->metadata()[0].first));
    }

    void filterKeepsMatchingBranch() {
        MainWindow w;
        w.openFile(kSample);
        QVERIFY(waitLoaded(w));
        w.filterEdit()->setText(QStringLiteral("layers.3.attn.q"));
        QSortFilterProxyModel* proxy = w.tensorProxy();
        // Applied after a pause in typing.
        QVERIFY(QTest::qWaitFor([&] { return proxy->rowCount() == 1; }, 5000));
        const QModelIndex layers = proxy->index(0, 0);
        QCOMPARE(layers.data().toString(), QStringLiteral("layers"));
        QCOMPARE(proxy->rowCount(layers), 1);
        w.filterEdit()->clear();
        w.applyFilter();
        QVERIFY(proxy->rowCount() > 1);
        // Sorting by size puts the larger group first; by name, natural order.
        w.tensorTree()->sortByColumn(TensorTreeModel::Size, Qt::DescendingOrder);
        QCOMPARE(proxy->index(0, 0).data().toString(), QStringLiteral("layers"));
        w.tensorTree()->sortByColumn(TensorTreeModel::Name, Qt::AscendingOrder);
        const QModelIndex layersRow = proxy->index(1, 0);
        QCOMPARE(layersRow.data().toString(), QStringLiteral("layers"));
        QCOMPARE(proxy->index(2, 0, layersRow).data().toString(), QStringLiteral("2"));
    }

    // Every name in the tensor tree whole as its branches open (a deep
    // "post_attention_layernorm" once showed as "post_attention_layern…"):
    // the names take the room the other columns leave, and where that is
    // too little the tree scrolls sideways rather than cut one.
    void deepNamesWhole() {
        QTemporaryDir dir;
        Checkpoint c;
        // A NaN: the background scan adds a warning icon to the name later.
        c.addTensor({"model.layers.1.post_attention_layernorm_of_a_long_model.weight",
                     {2},
                     {1, std::nanf("")}});
        c.addTensor({"model.layers.1.mlp.down_proj.weight", {2}, {1, 2}});
        // A narrow Tensors panel, remembered for OXCK files: the next window
        // lays it out so as the file opens, before the scan's icon arrives.
        {
            MainWindow first;
            first.resize(1400, 860);
            first.show();
            first.openFile(kSample);
            QVERIFY(waitLoaded(first));
            first.resizeDocks({first.findChild<QDockWidget*>(QStringLiteral("tensorDock"))}, {260},
                              Qt::Horizontal);
            first.close();
        }
        MainWindow w;
        QVERIFY(openSaved(w, c, dir, "deep.oxck"));
        auto* dock = w.findChild<QDockWidget*>(QStringLiteral("tensorDock"));
        QVERIFY(dock);
        QSettings().remove(QStringLiteral("window/state/oxck")); // no other test inherits it
        QVERIFY(w.selectTensor(
            QStringLiteral("model.layers.1.post_attention_layernorm_of_a_long_model.weight")));
        QTreeView* tree = w.tensorTree();
        QTRY_VERIFY(!w.tensorModel()->indexOfTensor(0).data(Qt::DecorationRole).isNull());
        QTRY_VERIFY(tree->horizontalScrollBar()->maximum() > 0);
        QTRY_VERIFY(guisupport::cutCells(tree).isEmpty());
        const QStringList cut = guisupport::cutCells(tree);
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1Char('\n'))));
        // Wide again: the names fill the room, no sideways scrolling.
        w.resizeDocks({dock}, {900}, Qt::Horizontal);
        QTRY_COMPARE(tree->horizontalScrollBar()->maximum(), 0);
    }

    // A name far longer than any column (300 characters) does not push the
    // shapes and sizes out of sight: it ends in the middle with "…", whole
    // in its tooltip.
    void overlongNameEndsInTheMiddle() {
        QTemporaryDir dir;
        const std::string longName(300, 'x');
        Checkpoint c;
        c.addTensor({longName, {2}, {1, 2}});
        c.addTensor({"layers.0.w", {2}, {1, 2}});
        MainWindow w;
        QVERIFY(openSaved(w, c, dir, "long.oxck"));
        QTreeView* tree = w.tensorTree();
        QCOMPARE(tree->textElideMode(), Qt::ElideMiddle);
        QTRY_VERIFY(tree->columnViewportPosition(TensorTreeModel::Shape) <
                    tree->viewport()->width());
        const QModelIndex leaf = w.tensorProxy()->mapFromSource(w.tensorModel()->indexOfTensor(0));
        QVERIFY(leaf.data(Qt::ToolTipRole).toString().contains(QString::fromStdString(longName)));
    }

    // Names are measured over the rows of a large model, not only the
    // first thousand: a long name 1 500 rows down is not cut.
    void namesMeasuredBeyondAThousandRows() {
        QTemporaryDir dir;
        Checkpoint c;
        for (int i = 0; i < 1500; ++i)
            c.addTensor({"t" + std::to_string(10000 + i), {1}, {1}});
        c.addTensor({"zz_a_long_name_far_down_the_list_of_tensors", {1}, {1}});
        MainWindow w;
        QVERIFY(openSaved(w, c, dir, "many.oxck"));
        const QStringList cut = guisupport::cutCells(w.tensorTree(), 2000);
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1Char('\n'))));
    }

    void selectingATensorComputesItsHistogram() {
        MainWindow w;
        w.show();
        w.openFile(kSample);
        QVERIFY(waitLoaded(w));
        auto doc = w.document();
        const std::string name = doc->tensors()[3].name;
        TensorPage* page = w.tensorPage();
        QSignalSpy ready(page, &TensorPage::statsReady);
        page->setBins(64);
        QVERIFY(w.selectTensor(QString::fromStdString(name)));
        QVERIFY(QTest::qWaitFor([&] { return !ready.isEmpty(); }, 10000));
        std::vector<float> values(size_t(doc->tensors()[3].dataLen));
        doc->readValues(3, 0, values.size(), values.data());
        const StatsResult direct = computeStats(values.data(), values.size(), 64);
        const auto& counts = page->histogramView()->histogram().counts;
        QCOMPARE(counts.size(), size_t(64));
        QCOMPARE(std::accumulate(counts.begin(), counts.end(), uint64_t(0)), direct.stats.finite);
        QCOMPARE(counts, direct.histogram.counts);
        // The min as stored: the shortest text that reads back to its f32.
        QCOMPARE(page->statText(QStringLiteral("min")).toFloat(), float(*direct.stats.min));
        // The bin control recomputes.
        ready.clear();
        page->setBins(10);
        QVERIFY(QTest::qWaitFor([&] { return !ready.isEmpty(); }, 10000));
        QCOMPARE(page->histogramView()->histogram().counts.size(), size_t(10));
    }

    // A Trainer folder's model: a parameter's Tensor page shows the update
    // the optimizer.pt beside it gives (the formula's figures), a buffer
    // none; a state tensor's link opens optimizer.pt with it selected.
    void tensorPageShowsTheOptimizersLastUpdate() {
        QTemporaryDir dir;
        testsupport::AdamFixture f =
            testsupport::AdamFixture::make({"a.weight", "b.weight"}, 128, {1, 0.01});
        f.writeTo(dir.path().toStdString());
        MainWindow w;
        w.show();
        w.openFile(dir.filePath(QStringLiteral("model.safetensors")));
        QVERIFY(waitLoaded(w));
        TensorPage* page = w.tensorPage();
        QVERIFY(w.selectTensor(QStringLiteral("b.weight")));
        QTRY_VERIFY_WITH_TIMEOUT(!page->optimizerText(QStringLiteral("update_to_weight")).isEmpty(),
                                 10000);
        const auto e = f.expected(1);
        const auto near = [](const QString& text, double want) {
            return std::abs(text.toDouble() - want) <= 1e-6 * want;
        };
        QVERIFY2(near(page->optimizerText(QStringLiteral("update_to_weight")), e.updateToWeight),
                 qPrintable(page->optimizerText(QStringLiteral("update_to_weight"))));
        QVERIFY(near(page->optimizerText(QStringLiteral("update_rms")), e.updateRms));
        QVERIFY(near(page->optimizerText(QStringLiteral("exp_avg_sq_sqrt_rms")), e.sqrtVRms));
        QVERIFY(near(page->optimizerText(QStringLiteral("decay_rms")), e.decayRms));
        // The link to a moment: optimizer.pt opens in its own window with it.
        Q_EMIT page->stateTensorRequested(dir.filePath(QStringLiteral("optimizer.pt")),
                                          QStringLiteral("state.1.exp_avg"));
        MainWindow* other = nullptr;
        const auto opened = [&] {
            for (QWidget* x : WindowRegistry::instance().windows())
                if (auto* m = qobject_cast<MainWindow*>(x); m && m != &w && m->document())
                    other = m;
            return other && other->tensorPage()->tensor() >= 0;
        };
        QTRY_VERIFY_WITH_TIMEOUT(opened(), 10000);
        QVERIFY(other->document()->path().ends_with("/optimizer.pt"));
        QCOMPARE(other->document()->tensors()[size_t(other->tensorPage()->tensor())].name,
                 std::string("state.1.exp_avg"));
        // There the state tensor shows its parameter's figures too.
        QTRY_VERIFY_WITH_TIMEOUT(
            near(other->tensorPage()->optimizerText(QStringLiteral("update_to_weight")),
                 e.updateToWeight),
            10000);
        other->close();
    }

    // A DeepSpeed folder opens as one model, not a run: its master weight's
    // page says where its pieces are and shows the optimizer's figures.
    void deepSpeedFolderOpensAsOneModel() {
        QTemporaryDir dir;
        const testsupport::DeepSpeedFixture f =
            testsupport::DeepSpeedFixture::make(2, 2, {{{4, 6}, {5}}});
        f.write(dir.path().toStdString());
        QVERIFY(!RunLauncher::isRunFolder(dir.path()));
        MainWindow w;
        w.show();
        w.openFile(dir.path());
        QVERIFY(waitLoaded(w));
        QCOMPARE(w.document()->formatModule().name, "deepspeed");
        TensorPage* page = w.tensorPage();
        QVERIFY(w.selectTensor(QStringLiteral("fp32.layers.0.weight")));
        QTRY_VERIFY_WITH_TIMEOUT(!page->optimizerText(QStringLiteral("update_rms")).isEmpty(),
                                 10000);
        bool piecesNamed = false;
        for (const QLabel* l : page->findChildren<QLabel*>())
            piecesNamed =
                piecesNamed || (l->text().contains(QStringLiteral("Made of 2 pieces")) &&
                                l->text().contains(QStringLiteral("zero_pp_rank_1_mp_rank_00")));
        QVERIFY(piecesNamed);
    }

    // A DCP folder opens as one model (a dropped folder is not a run); the
    // Tensor page lists each chunk's box and file, and the optimizer's
    // figures of a parameter come from optim.state.
    void dcpFolderOpensAsOneModel() {
        QTemporaryDir dir;
        const testsupport::DcpFixture f = testsupport::DcpFixture::make(2, {{4, 6}, {5}});
        f.write(dir.path().toStdString());
        QVERIFY(!RunLauncher::isRunFolder(dir.path()));
        MainWindow w;
        w.show();
        w.openFile(dir.path());
        QVERIFY(waitLoaded(w));
        QCOMPARE(w.document()->formatModule().name, "dcp");
        TensorPage* page = w.tensorPage();
        QVERIFY(w.selectTensor(QStringLiteral("model.layers.0.weight")));
        QTRY_VERIFY_WITH_TIMEOUT(!page->optimizerText(QStringLiteral("update_rms")).isEmpty(),
                                 10000);
        bool chunksListed = false;
        for (const QLabel* l : page->findChildren<QLabel*>())
            chunksListed =
                chunksListed ||
                (l->text().contains(QStringLiteral("Made of 2 pieces")) &&
                 l->text().contains(QStringLiteral("at [2, 0], sizes [2, 6]: __1_0.distcp")));
        QVERIFY(chunksListed);
    }

    void droppedFileOpensAndDamagedDropKeepsDocument() {
        QTemporaryDir dir;
        const QString good = dir.filePath(QStringLiteral("good.oxck"));
        smallCheckpoint(1).save(good.toStdString());
        const QString bad = dir.filePath(QStringLiteral("bad.oxck"));
        {
            std::string bytes = smallCheckpoint(1).encode();
            bytes.resize(bytes.size() - 3); // cut inside the last tensor
            QFile f(bad);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(bytes.data(), qint64(bytes.size()));
        }
        MainWindow w;
        w.show();
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        drop(w, {good});
        QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty(); }, 10000));
        QCOMPARE(w.currentPath(), good);
        const auto before = w.document();

        QSignalSpy failed(&w, &MainWindow::loadFailed);
        drop(w, {bad});
        QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty(); }, 10000));
        QCOMPARE(w.document(), before); // the open document stays
        QCOMPARE(w.currentPath(), good);
        QVERIFY(w.notificationBar()->isVisible());
        QCOMPARE(w.notificationBar()->kind(), NotificationBar::Kind::Error);
        QVERIFY(w.notificationBar()->text().contains(QStringLiteral("bad.oxck")));
        QVERIFY(w.notificationBar()->text().contains(QStringLiteral("truncated")));
    }

    void fileChangedOnDiskIsReloadedKeepingSelection() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("live.oxck"));
        smallCheckpoint(1).save(path.toStdString());
        MainWindow w;
        w.show();
        w.openFile(path);
        QVERIFY(waitLoaded(w));
        QVERIFY(w.selectTensor(QStringLiteral("b")));
        w.tabs()->setCurrentWidget(w.valuesView());
        const auto before = w.document();

        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        Checkpoint next = smallCheckpoint(10);
        next.addTensor({"c", {1}, {7}});
        next.save(path.toStdString()); // rename over the watched file
        QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty(); }, 10000));
        QVERIFY(w.document() != before);
        QCOMPARE(w.document()->tensors().size(), size_t(3));
        QCOMPARE(w.tensorTree()->currentIndex().data(TensorTreeModel::FullNameRole).toString(),
                 QStringLiteral("b"));
        QCOMPARE(w.notificationBar()->kind(), NotificationBar::Kind::Info);
        QVERIFY(w.notificationBar()->isVisible());
        QCOMPARE(w.notificationBar()->text(),
                 QStringLiteral("The file changed on disk and was reloaded."));
        QCOMPARE(w.tabs()->currentWidget(), w.valuesView()); // the user stays where they were
    }

    // A sharded model opened as its folder: a shard rewritten in place (not
    // the index, not the folder) reloads the model with the new values.
    void shardRewrittenInPlaceIsReloaded() {
        QTemporaryDir dir;
        testsupport::ShardedFixture f;
        f.writeTo(dir.path().toStdString());
        MainWindow w;
        w.show();
        w.openFile(dir.path());
        QVERIFY(waitLoaded(w));
        QVERIFY(w.document()->isSharded());
        QVERIFY(w.selectTensor(QStringLiteral("b.weight")));
        const auto before = w.document();

        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        f.bWeight = {4.0f, 8.0f, -16.0f, 0.25f};
        testsupport::ShardedFixture::write(
            dir.filePath(QString::fromStdString(testsupport::ShardedFixture::shardName(2)))
                .toStdString(),
            testsupport::stFile(f.shard2(), f.meta2));
        QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty(); }, 10000));
        QVERIFY(w.document() != before);
        const auto& tensors = w.document()->tensors();
        const auto b = std::find_if(tensors.begin(), tensors.end(),
                                    [](const auto& t) { return t.name == "b.weight"; });
        QVERIFY(b != tensors.end());
        std::vector<float> values(4);
        w.document()->readValues(size_t(b - tensors.begin()), 0, 4, values.data());
        QCOMPARE(values, f.bWeight);
        QCOMPARE(w.tensorTree()->currentIndex().data(TensorTreeModel::FullNameRole).toString(),
                 QStringLiteral("b.weight"));
        QCOMPARE(w.notificationBar()->text(),
                 QStringLiteral("model-00002-of-00002.safetensors changed on disk; the model was "
                                "reloaded."));
    }

    void theLastOpenWins() {
        QTemporaryDir dir;
        const QString small = dir.filePath(QStringLiteral("small.oxck"));
        smallCheckpoint(1).save(small.toStdString());
        MainWindow w;
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openFile(QStringLiteral(":/samples/gradient_sample.json")); // slower to parse
        w.openFile(small);
        QVERIFY(QTest::qWaitFor([&] { return !w.isLoading(); }, 10000));
        QCOMPARE(w.currentPath(), small);
        QCOMPARE(loaded.count(), 1); // the superseded result is dropped, not shown
    }

    void backgroundScanFlagsNonFiniteTensors() {
        QTemporaryDir dir;
        const QString path = savedWithNaN(dir);
        MainWindow w;
        w.openFile(path);
        QVERIFY(waitLoaded(w));
        QVERIFY(QTest::qWaitFor([&] { return !w.isScanning(); }, 10000));
        // Flagged without being selected; the clean ones are not.
        QVERIFY(!w.tensorModel()->indexOfTensor(2).data(Qt::DecorationRole).isNull());
        QVERIFY(w.tensorModel()->indexOfTensor(0).data(Qt::DecorationRole).isNull());
        QVERIFY(w.tensorModel()->indexOfTensor(1).data(Qt::DecorationRole).isNull());
    }

    // The Overview's link to a tensor holding NaN shows it even while the
    // tree's filter hides it: the filter is cleared and the tensor selected
    // (it did nothing before).
    void nanLinkShowsATensorTheFilterHides() {
        QTemporaryDir dir;
        const QString path = savedWithNaN(dir);
        MainWindow w;
        QVERIFY(showActive(w));
        w.openFile(path);
        QVERIFY(waitLoaded(w));
        QVERIFY(QTest::qWaitFor([&] { return !w.isScanning(); }, 10000));
        QTest::keyClicks(w.filterEdit(), QStringLiteral("no tensor is called this"));
        w.applyFilter();
        QCOMPARE(w.tensorProxy()->rowCount(), 0);
        Q_EMIT w.findChild<OverviewPage*>()->tensorLinkActivated(2);
        QCOMPARE(w.filterEdit()->text(), QString());
        QCOMPARE(w.tensorTree()->currentIndex().data(TensorTreeModel::FullNameRole).toString(),
                 QStringLiteral("bad"));
    }

    void timestampReadsTheSameOnOverviewAndMetadata() {
        MainWindow w;
        w.openFile(kGradient);
        QVERIFY(waitLoaded(w));
        const qint64 ts = qint64(w.document()->gradient()->timestamp);
        const QString expected = timestampText(ts);
        // One format, with the zone: local time and its UTC offset.
        static const QRegularExpression shape(
            QStringLiteral("^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d [+-]\\d\\d:\\d\\d \\(%1\\)$")
                .arg(ts));
        QVERIFY2(shape.match(expected).hasMatch(), qPrintable(expected));
        // It names the same instant: date, time and offset read back as ISO 8601.
        const QString iso =
            expected.left(10) + QLatin1Char('T') + expected.mid(11, 8) + expected.mid(20, 6);
        QCOMPARE(QDateTime::fromString(iso, Qt::ISODate).toSecsSinceEpoch(), ts);
        QString metadata;
        for (int r = 0; r < w.metadataModel()->rowCount(); ++r)
            if (w.metadataModel()->index(r, 0).data().toString() == QStringLiteral("timestamp"))
                metadata = w.metadataModel()->index(r, 1).data().toString();
        QCOMPARE(metadata, expected);
        const QString overview = w.findChild<OverviewPage*>()->toPlainText();
        QVERIFY2(overview.contains(expected), qPrintable(overview));
    }

    // At 1024 × 700 the Graph tab fits the window: its status and legend
    // wrap rather than widen it to 1180 px, and the Nodes panel keeps its
    // "#" and Op columns whole.
    void graphTabFitsA1024PxWindow() {
        MainWindow w;
        w.resize(1024, 700);
        w.show();
        QSignalSpy laidOut(w.graphPage(), &GraphPage::layoutFinished);
        w.openFile(QStringLiteral(":/samples/gradient_sample.json"));
        QVERIFY(waitLoaded(w));
        w.tabs()->setCurrentWidget(w.graphPage());
        QVERIFY(QTest::qWaitFor([&] { return !laidOut.isEmpty(); }, 20000));
        QTest::qWait(50);
        QVERIFY2(w.minimumSizeHint().width() <= 1024,
                 qPrintable(QString::number(w.minimumSizeHint().width())));
        QCOMPARE(w.width(), 1024);
        NodeList* list = w.nodeList();
        for (int c = 0; c < 2; ++c)
            QVERIFY2(list->columnViewportPosition(c) + list->columnWidth(c) <=
                         list->viewport()->width(),
                     qPrintable(QStringLiteral("column %1 cut").arg(c)));
    }

    // At 1024 × 700 the Values tab of a Q4_K tensor shows three value
    // columns or more whole, with the Block panel below them, every row of
    // it whole; at 1400 px the panel stands beside the table.
    void valuesAndBlockPanelAtA1024PxWindow() {
        REQUIRE_CONFORMANCE();
        MainWindow w;
        w.resize(1024, 700);
        w.show();
        w.openFile(testsupport::corpus(QStringLiteral("gguf/valid/tiny-llama-Q4_K_M.gguf")));
        QVERIFY(waitLoaded(w));
        QVERIFY(w.selectTensor(QStringLiteral("blk.0.attn_q.weight")));
        w.tabs()->setCurrentWidget(w.valuesView());
        BlockPanel* panel = w.valuesView()->blockPanel();
        QTRY_VERIFY(panel->isVisible() && !panel->fieldText(QStringLiteral("value")).isEmpty());
        QTest::qWait(50);
        QCOMPARE(w.width(), 1024);
        const QTableView* table = w.valuesView()->table();
        int whole = 0;
        for (int c = 0; c < table->model()->columnCount(); ++c)
            if (table->columnViewportPosition(c) >= 0 &&
                table->columnViewportPosition(c) + table->columnWidth(c) <=
                    table->viewport()->width())
                ++whole;
        QVERIFY2(whole >= 3, qPrintable(QStringLiteral("%1 whole columns").arg(whole)));
        const QRect inWindow(panel->mapTo(&w, QPoint(0, 0)), panel->size());
        QVERIFY(table->mapTo(&w, QPoint(0, table->height())).y() <= inWindow.top());
        for (const QLabel* label : panel->findChildren<QLabel*>())
            if (label->isVisible())
                QVERIFY2(label->width() >= label->sizeHint().width() &&
                             label->height() >= label->sizeHint().height(),
                         qPrintable(label->text()));
        w.resize(1400, 860);
        QTRY_VERIFY(panel->mapTo(&w, QPoint(0, 0)).x() >=
                    table->mapTo(&w, QPoint(table->width(), 0)).x());
    }

    void nodeListIsTheWindowsAndFollowsTheGraph() {
        MainWindow w;
        w.show();
        QSignalSpy laidOut(w.graphPage(), &GraphPage::layoutFinished);
        w.openFile(QStringLiteral(":/samples/gradient_sample.json"));
        QVERIFY(waitLoaded(w));
        NodeList* list = w.nodeList();
        QVERIFY(list->isVisible()); // its dock is shown for gradient checkpoints
        QVERIFY(!w.graphPage()->isAncestorOf(list));
        QVERIFY(QTest::qWaitFor([&] { return !w.graphPage()->isIndexing(); }, 20000));
        QCOMPARE(size_t(list->model()->rowCount()), w.document()->gradient()->graph.nodeCount());
        // Nothing of the drawing is made while the Graph tab is hidden.
        QTest::qWait(50);
        QVERIFY(laidOut.isEmpty());
        QCOMPARE(w.graphPage()->scene()->nodeCount(), 0);
        w.tabs()->setCurrentWidget(w.graphPage());
        QVERIFY(QTest::qWaitFor([&] { return !laidOut.isEmpty(); }, 20000));
        // A row chosen in the list selects its node in the graph...
        const QModelIndex row = list->model()->index(5, 0);
        list->setCurrentIndex(row);
        QCOMPARE(w.graphPage()->selectedNode(), row.data(NodeTableModel::NodeIndexRole).toInt());
        // ...and a node selected in the graph moves the list.
        w.graphPage()->goToLoss();
        QVERIFY(w.graphPage()->selectedNode() != row.data(NodeTableModel::NodeIndexRole).toInt());
        QCOMPARE(list->currentIndex().data(NodeTableModel::NodeIndexRole).toInt(),
                 w.graphPage()->selectedNode());
        // An OXCK file empties it.
        w.openFile(kSample);
        QVERIFY(waitLoaded(w));
        QCOMPARE(list->model()->rowCount(), 0);
    }

    void findFocusesTheSearchOfThePageShowing() {
        MainWindow w;
        QVERIFY(showActive(w));
        QAction* find = actionWithShortcut(w, QKeySequence::Find);
        QVERIFY(find);
        w.openFile(kGradient);
        QVERIFY(waitLoaded(w));
        // A gradient checkpoint has no tensor filter: Ctrl+F is the graph's search.
        QCOMPARE(find->text().remove(QLatin1Char('&')), QStringLiteral("Find Node in Graph"));
        QTest::keyClick(&w, Qt::Key_F, Qt::ControlModifier);
        QCOMPARE(w.tabs()->currentWidget(), w.graphPage());
        QCOMPARE(QApplication::focusWidget(), w.graphPage()->searchEdit());
        QTest::keyClicks(QApplication::focusWidget(), QStringLiteral("gelu"));
        QCOMPARE(w.graphPage()->searchEdit()->text(), QStringLiteral("gelu"));

        w.openFile(kSample);
        QVERIFY(waitLoaded(w));
        QCOMPARE(find->text().remove(QLatin1Char('&')), QStringLiteral("Filter Tensors"));
        QTest::keyClick(&w, Qt::Key_F, Qt::ControlModifier);
        QCOMPARE(QApplication::focusWidget(), w.filterEdit());
    }

    void escapeClearsTheFilter() {
        MainWindow w;
        QVERIFY(showActive(w));
        w.openFile(kSample);
        QVERIFY(waitLoaded(w));
        const int all = w.tensorProxy()->rowCount();
        w.filterEdit()->setFocus();
        QTest::keyClicks(w.filterEdit(), QStringLiteral("layers.3.attn.q"));
        w.applyFilter();
        QCOMPARE(w.tensorProxy()->rowCount(), 1);
        QTest::keyClick(w.filterEdit(), Qt::Key_Escape);
        QCOMPARE(w.filterEdit()->text(), QString());
        QCOMPARE(w.tensorProxy()->rowCount(), all);
    }

    // Esc anywhere in the Tensors panel (as the shortcut list says), and the
    // tensor chosen stays chosen and in view, whether the filter showed it
    // or hid it.
    void escapeInTheTensorsPanelKeepsTheTensor() {
        MainWindow w;
        QVERIFY(showActive(w));
        w.openFile(kSample);
        QVERIFY(waitLoaded(w));
        const int all = w.tensorProxy()->rowCount();
        const QString chosen = QStringLiteral("layers.2.attn.v.weight");
        QVERIFY(w.selectTensor(chosen));
        QTreeView* tree = w.tensorTree();
        auto shown = [&] {
            const QModelIndex i = tree->currentIndex();
            if (i.data(TensorTreeModel::FullNameRole).toString() != chosen ||
                !tree->selectionModel()->isSelected(i))
                return false;
            for (QModelIndex p = i.parent(); p.isValid(); p = p.parent())
                if (!tree->isExpanded(p))
                    return false;
            return tree->viewport()->rect().intersects(tree->visualRect(i));
        };
        // Shown by the filter, Esc in the tree; hidden by it, Esc in the box.
        const QList<std::pair<QString, QWidget*>> cases = {
            {QStringLiteral("attn.v"), tree}, {QStringLiteral("layers.3.attn.q"), w.filterEdit()}};
        for (const auto& [filter, where] : cases) {
            w.filterEdit()->setText(filter);
            w.applyFilter();
            where->setFocus();
            QTest::keyClick(where, Qt::Key_Escape);
            QCOMPARE(w.filterEdit()->text(), QString());
            QCOMPARE(w.tensorProxy()->rowCount(), all);
            QVERIFY2(shown(), qPrintable(filter));
        }
    }

    void layoutsAreRememberedPerFileKind() {
        MainWindow w;
        w.resize(1400, 900);
        QVERIFY(showActive(w));
        auto* tensors = w.findChild<QDockWidget*>(QStringLiteral("tensorDock"));
        auto* nodes = w.findChild<QDockWidget*>(QStringLiteral("nodeDock"));
        QVERIFY(tensors && nodes);
        auto open = [&](const QString& path) {
            w.openFile(path);
            QVERIFY(waitLoaded(w));
            QTest::qWait(50); // docks settle
        };
        open(kSample);
        const int oxckWidth = tensors->width();
        QVERIFY2(oxckWidth >= 450, qPrintable(QString::number(oxckWidth)));
        open(kGradient);
        w.resizeDocks({nodes}, {230}, Qt::Horizontal); // the user narrows the node list
        QTest::qWait(50);
        const int gradientWidth = nodes->width();
        QVERIFY(std::abs(gradientWidth - 230) < 40);
        open(kSample); // the tree comes back as wide as it was
        QVERIFY2(std::abs(tensors->width() - oxckWidth) < 10,
                 qPrintable(QStringLiteral("%1 vs %2").arg(tensors->width()).arg(oxckWidth)));
        QVERIFY(tensors->isVisible() && !nodes->isVisible());
        open(kGradient);
        QVERIFY(std::abs(nodes->width() - gradientWidth) < 10);
    }

    void keyboardShortcutsListEveryShortcut() {
        MainWindow w;
        w.show();
        // One more action after construction: the list is read, not written.
        auto* extra = new QAction(QStringLiteral("Frobnicate"), w.graphPage());
        extra->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_J));
        w.graphPage()->addAction(extra);
        QAction* help = menuAction(w, QStringLiteral("Keyboard Shortcuts"));
        QVERIFY(help);
        help->trigger();
        auto* dialog = w.findChild<QDialog*>(QStringLiteral("keyboardShortcuts"));
        QVERIFY(dialog);
        auto* table = dialog->findChild<QTableWidget*>();
        QVERIFY(table);
        // Window, where, action, shortcut; this window's rows first.
        QCOMPARE(table->columnCount(), 4);
        QSet<QString> rows, windows;
        int own = 0;
        for (int r = 0; r < table->rowCount(); ++r) {
            const QString window = table->item(r, 0)->text();
            windows << window;
            if (window != QStringLiteral("Browser window"))
                continue;
            QCOMPARE(r, own++);
            rows << table->item(r, 2)->text() + QLatin1Char('|') + table->item(r, 3)->text();
        }
        // Every window's shortcuts, not only this one's.
        QCOMPARE(windows,
                 (QSet<QString>{QStringLiteral("Browser window"), QStringLiteral("Compare window"),
                                QStringLiteral("Run window")}));
        int withShortcut = 0;
        for (QAction* a : w.findChildren<QAction*>()) {
            if (a->shortcut().isEmpty() || a->text().isEmpty())
                continue;
            ++withShortcut;
            const QString key = a->text().remove(QLatin1Char('&')) + QLatin1Char('|') +
                                a->shortcut().toString(QKeySequence::NativeText);
            bool listed = false;
            for (const QString& row : rows)
                listed = listed || row.startsWith(key);
            QVERIFY2(listed, qPrintable(key));
        }
        QCOMPARE(own, withShortcut);
        QVERIFY(rows.contains(QStringLiteral("Frobnicate|") +
                              extra->shortcut().toString(QKeySequence::NativeText)));
        // Where each lives, as the user finds it.
        QVERIFY(!table->findItems(QStringLiteral("Open…"), Qt::MatchExactly).isEmpty());
        const int fit = table->findItems(QStringLiteral("Fit"), Qt::MatchExactly).first()->row();
        QCOMPARE(table->item(fit, 1)->text(), QStringLiteral("Graph"));
        const int swap =
            table->findItems(QStringLiteral("Swap A ↔ B"), Qt::MatchExactly).first()->row();
        QCOMPARE(table->item(swap, 0)->text(), QStringLiteral("Compare window"));
    }

    void userGuideIsBundledAndOpensFromHelp() {
        MainWindow w;
        w.show();
        QAction* guide = menuAction(w, QStringLiteral("User Guide"));
        QVERIFY(guide);
        guide->trigger();
        auto* dialog = w.findChild<QDialog*>(QStringLiteral("userGuide"));
        QVERIFY(dialog);
        auto* browser = dialog->findChild<QTextBrowser*>();
        QVERIFY(browser);
        const QString text = browser->toPlainText();
        QVERIFY2(text.contains(QStringLiteral("Ckptscope User Guide")), qPrintable(text.left(200)));
        for (const char* section : {"Opening files", "Tensor files", "PyTorch checkpoints",
                                    "Gradient checkpoints", "Copying"})
            QVERIFY2(text.contains(QLatin1String(section)), section);
        // Every format the registry reads is named (by what front ends call it).
        for (const ckptscope::FormatModule& m : ckptscope::formatModules())
            QVERIFY2(text.contains(QString::fromUtf8(m.description), Qt::CaseInsensitive),
                     m.description);
        QCOMPARE(browser->source(), QUrl(QStringLiteral("qrc:/help/guide.html")));
    }

    void fileTruncatedWhileOpenReportsAndKeepsTheView() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("cut.oxck"));
        smallCheckpoint(1).save(path.toStdString());
        MainWindow w;
        w.show();
        w.openFile(path);
        QVERIFY(waitLoaded(w));
        const auto before = w.document();
        QFile f(path);
        QVERIFY(f.resize(40)); // truncated in place, as the reference writer does
        QVERIFY(QTest::qWaitFor(
            [&] {
                return w.notificationBar()->isVisible() &&
                       w.notificationBar()->kind() == NotificationBar::Kind::Error;
            },
            10000));
        QCOMPARE(w.document(), before);
        // Values of the old document now fail loudly rather than mixing files.
        std::vector<float> v(2);
        QVERIFY_THROWS_EXCEPTION(std::exception, before->readValues(0, 0, 2, v.data()));
    }

    // A file name is shown as it is: in the status bar (not taken for a
    // "%2" placeholder) and in Open Recent (an '&' is no mnemonic).
    void fileNameShownExactly() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("odd%2&name.json"));
        QVERIFY(QFile::copy(QStringLiteral(":/samples/gradient_sample.json"), path));
        MainWindow w;
        w.openFile(path);
        QVERIFY(waitLoaded(w));
        QVERIFY2(w.statusBar()->currentMessage().startsWith(
                     QStringLiteral("odd%2&name.json: gradient checkpoint, step ")),
                 qPrintable(w.statusBar()->currentMessage()));
        const auto menus = w.findChildren<QMenu*>();
        const auto recent = std::find_if(menus.begin(), menus.end(), [](QMenu* m) {
            return m->title() == QStringLiteral("Open &Recent");
        });
        QVERIFY(recent != menus.end());
        QVERIFY(!(*recent)->actions().isEmpty());
        // What QAction shows: "&&" is a literal '&'; then where the file is.
        QCOMPARE(
            (*recent)->actions().first()->text().replace(QStringLiteral("&&"), QStringLiteral("&")),
            QStringLiteral("odd%2&name.json — ") + filelocation::place(path));
    }

    void failedOpenKeepsTheStatusLineOfTheFileShown() {
        QTemporaryDir dir;
        const QString good = dir.filePath(QStringLiteral("good.oxck"));
        smallCheckpoint(1).save(good.toStdString());
        const QString bad = dir.filePath(QStringLiteral("bad.oxck"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("OXCX not a checkpoint");
        f.close();
        MainWindow w;
        w.show();
        w.openFile(good);
        QVERIFY(waitLoaded(w));
        const QString line = w.statusBar()->currentMessage();
        QCOMPARE(line, QStringLiteral("good.oxck: OXCK checkpoint, 2 tensors"));
        QSignalSpy failed(&w, &MainWindow::loadFailed);
        w.openFile(bad);
        QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty(); }, 10000));
        // good.oxck is still shown, so its line stays (not blank, not "Opening bad.oxck…").
        QCOMPARE(w.statusBar()->currentMessage(), line);
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
