#include "browser/mainwindow.h"
#include "browser/overviewpage.h"
#include "common/windowregistry.h"
#include "dcpfixture.h"
#include "dropsupport.h"
#include "ggufbuilder.h"
#include "picklewriter.h"
#include "shardedfixture.h"
#include "tensor/tensortreemodel.h"
#include "widgets/notificationbar.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "testsupport.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>

#include <QTest>
#include <QTreeView>
#include <QUrl>

#include <cmath>
#include <fstream>
#include <map>

using namespace ckptscope;

namespace {

// A torch.save file of `pickle` in `dir`, opened in `w`.
bool openPickleIn(MainWindow& w, const QTemporaryDir& dir, const std::string& pickle) {
    const QString path = dir.filePath(QStringLiteral("calls.pt"));
    {
        std::ofstream out(path.toStdString(), std::ios::binary);
        out << picklewriter::torchZip("archive", pickle, {});
    }
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    w.openFile(path);
    return QTest::qWaitFor([&] { return !loaded.isEmpty(); }, 20000);
}

std::shared_ptr<const Document> fromJson(const std::string& json) {
    return Document::open(std::make_shared<MemorySource>(
        std::vector<uint8_t>(json.begin(), json.end()), "odd<&>.json"));
}

// A checkpoint whose second tensor holds one NaN (nan) or none.
QString writeModel(const QTemporaryDir& dir, const QString& name, bool nan) {
    Checkpoint c;
    c.addTensor({"layers.0.w", {3}, {1, 2, 3}});
    c.addTensor({"layers.1.q_proj", {3}, {1, nan ? std::nanf("") : 2.f, 3}});
    const QString path = dir.filePath(name);
    c.save(path.toStdString());
    return path;
}

const QString kConsistent = QStringLiteral("No warnings: the file is consistent");

} // namespace

class TestOverviewPage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true); // keep the user's settings out
    }

    // A model holding a NaN is not called consistent: the page names the
    // tensors known to hold NaN/Inf, each a link, and says "No warnings"
    // only once every value was read.
    void nonFiniteTensorsAreNamed() {
        QTemporaryDir dir;
        OverviewPage page;
        page.setDocument(
            Document::open(writeModel(dir, QStringLiteral("n.oxck"), true).toStdString()));
        QVERIFY2(!page.toPlainText().contains(kConsistent), qPrintable(page.toPlainText()));
        QVERIFY(page.toPlainText().contains(QStringLiteral("not yet all checked")));
        page.markNonFinite(1);
        page.markNonFinite(1); // statistics and the scan may both find it
        page.setValuesScanned();
        QTRY_VERIFY(page.toPlainText().contains(QStringLiteral("1 tensor holds NaN or Inf")));
        const QString text = page.toPlainText();
        QVERIFY(text.contains(QStringLiteral("layers.1.q_proj")));
        QVERIFY2(!text.contains(kConsistent) && !text.contains(QStringLiteral("not yet")),
                 qPrintable(text));
        QVERIFY(page.toHtml().contains(QStringLiteral("tensor:1")));
        QSignalSpy link(&page, &OverviewPage::tensorLinkActivated);
        Q_EMIT page.anchorClicked(QUrl(QStringLiteral("tensor:1")));
        QCOMPARE(link.size(), 1);
        QCOMPARE(link.first().first().toInt(), 1);
    }

    // The browser's Overview after the background scan: the NaN is told
    // (and its link selects the tensor); a clean model is called consistent.
    void browserOverviewTellsTheNaN() {
        QTemporaryDir dir;
        MainWindow w;
        QWidget* overview = w.tabs()->widget(0);
        auto* page = qobject_cast<OverviewPage*>(overview);
        QVERIFY(page);
        for (const bool nan : {true, false}) {
            QSignalSpy loaded(&w, &MainWindow::documentLoaded);
            w.openFile(
                writeModel(dir, nan ? QStringLiteral("nan.oxck") : QStringLiteral("ok.oxck"), nan));
            QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty(); }, 20000));
            QVERIFY(QTest::qWaitFor([&] { return !w.isScanning(); }, 20000));
            const QString expected =
                nan ? QStringLiteral("1 tensor holds NaN or Inf") : kConsistent;
            QTRY_VERIFY2(page->toPlainText().contains(expected), qPrintable(page->toPlainText()));
            QCOMPARE(page->toPlainText().contains(kConsistent), !nan);
            if (!nan)
                continue;
            Q_EMIT page->anchorClicked(QUrl(QStringLiteral("tensor:1")));
            QCOMPARE(w.tensorTree()->currentIndex().data(TensorTreeModel::FullNameRole).toString(),
                     QStringLiteral("layers.1.q_proj"));
            QCOMPARE(w.tabs()->tabText(w.tabs()->currentIndex()).remove(QLatin1Char('&')),
                     QStringLiteral("Tensor"));
        }
    }
    // A pickle that would run code: the window says what it would run, in a
    // red banner, and that nothing ran; the Overview lists the imports with
    // their risk and the call's arguments. Another file takes the banner away.
    void unsafePickleIsToldAndNotRun() {
        REQUIRE_CONFORMANCE();
        MainWindow w;
        auto* page = qobject_cast<OverviewPage*>(w.tabs()->widget(0));
        QVERIFY(page);
        const bool markerBefore = QFile::exists(QStringLiteral("/tmp/x"));
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openFile(
            testsupport::corpus(QStringLiteral("pytorch/invalid/malicious-getattr-chain.pt")));
        QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty(); }, 20000));
        QVERIFY(!w.unsafeBanner()->isHidden());
        const QString banner = w.unsafeBanner()->text();
        QVERIFY2(banner.contains(QStringLiteral(
                     "__builtin__.getattr(__builtin__.__import__('os'), 'system')('echo pwned "
                     "&gt; /tmp/x')")),
                 qPrintable(banner));
        QVERIFY2(!banner.contains(QStringLiteral(" and ")),
                 qPrintable(banner)); // one call, outermost
        QVERIFY(banner.contains(QStringLiteral("Ckptscope did not run it")));
        const QString text = page->toPlainText();
        QVERIFY2(text.contains(QStringLiteral("__builtin__.__import__ × 1")), qPrintable(text));
        QVERIFY2(text.indexOf(QStringLiteral("unsafe")) < text.indexOf(QStringLiteral("safe\n")) ||
                     !text.contains(QStringLiteral("safe\n")),
                 qPrintable(text)); // unsafe imports listed first
        QVERIFY2(text.contains(QStringLiteral("called with [\"echo pwned > /tmp/x\"]")),
                 qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("torch._utils._rebuild_tensor_v2 × 1")),
                 qPrintable(text));
        QCOMPARE(QFile::exists(QStringLiteral("/tmp/x")), markerBefore);
        w.openFile(testsupport::corpus(QStringLiteral("pytorch/valid/bare-tensor.pt")));
        QVERIFY(QTest::qWaitFor([&] { return loaded.size() == 2; }, 20000));
        QVERIFY(w.unsafeBanner()->isHidden());
        QVERIFY(page->toPlainText().contains(QStringLiteral("Pickle imports")));
        QVERIFY(!page->toPlainText().contains(QStringLiteral("unsafe")));
    }

    // A pickle of many unsafe calls: the banner names the first eight and
    // how many more, the Overview the first twenty arguments and how many
    // more (a pickle of 100 000 calls must not hold the window up).
    void manyUnsafeCallsAreCounted() {
        picklewriter::Pickle p;
        p.proto(2).global("posix", "system").binput(0).op('0').emptyList().mark();
        for (int i = 0; i < 30; ++i)
            p.binget(0).unicode("echo " + std::to_string(i)).op(uint8_t(0x85)).reduce();
        p.appends().stop();
        QTemporaryDir dir;
        MainWindow w;
        auto* page = qobject_cast<OverviewPage*>(w.tabs()->widget(0));
        QVERIFY(openPickleIn(w, dir, p.bytes));
        const QString banner = w.unsafeBanner()->text();
        QVERIFY2(banner.contains(QStringLiteral("posix.system('echo 7')</b> and 22 more")),
                 qPrintable(banner));
        QVERIFY2(!banner.contains(QStringLiteral("echo 8'")), qPrintable(banner));
        const QString text = page->toPlainText();
        QVERIFY2(text.contains(QStringLiteral("called with [\"echo 19\"]")), qPrintable(text));
        QVERIFY2(!text.contains(QStringLiteral("\"echo 20\"")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("and 10 more calls")), qPrintable(text));
        // The file's warning (the Overview shows it too) the same way.
        QVERIFY2(text.contains(QStringLiteral("and with [\"echo 19\"] and 10 more times")),
                 qPrintable(text));
    }

    // 400 different unsafe globals each called with one shared 64 KiB string
    // (a 40 KB file): the window opens at once — it laid out 26 MB of text,
    // a minute and a half for 2 000 such calls. The banner spells 8 calls in
    // their first 120 characters, with each one's length; the Overview lists
    // 100 imports and counts the rest, each call's arguments in their first
    // 1 000 characters.
    void manyLongCallsAreShortenedAndCounted() {
        picklewriter::Pickle p;
        p.proto(2).unicode(std::string(65536, 'y')).longBinput(0).op('0').emptyList().mark();
        for (int i = 0; i < 400; ++i)
            p.global("os", "f" + std::to_string(i)).longBinget(0).op(uint8_t(0x85)).reduce();
        p.appends().stop();
        QTemporaryDir dir;
        MainWindow w;
        auto* page = qobject_cast<OverviewPage*>(w.tabs()->widget(0));
        QVERIFY(openPickleIn(w, dir, p.bytes));
        const QString banner = w.unsafeBanner()->text();
        // os.f0('yyy…') is 65 545 characters: its first 120 and its length.
        QVERIFY2(banner.contains(QStringLiteral("os.f0('") + QString(113, QLatin1Char('y')) +
                                 QStringLiteral("… (65,545 characters)")),
                 qPrintable(banner.left(2000)));
        QVERIFY2(banner.contains(QStringLiteral("and 392 more calls")),
                 qPrintable(banner.left(2000)));
        QVERIFY2(banner.size() < 4000, qPrintable(QString::number(banner.size())));
        const QString text = page->toPlainText();
        QVERIFY2(text.contains(QStringLiteral(
                     "and 300 more imports (300 unsafe; ckptscope-cli scan lists every one)")),
                 qPrintable(text.right(3000)));
        QVERIFY2(text.contains(QStringLiteral("called with [\"") + QString(998, QLatin1Char('y')) +
                               QStringLiteral("… (65,540 characters)")),
                 qPrintable(text.left(3000)));
        QVERIFY2(text.size() < 2000000, qPrintable(QString::number(text.size())));
    }

    // A pickle whose object is a class's instance (a Trainer's
    // training_args.bin) names that class; a state dict names none.
    void pickledObjectNamesItsClass() {
        REQUIRE_CONFORMANCE();
        OverviewPage page;
        page.setDocument(Document::open(
            testsupport::corpus(QStringLiteral("pytorch/valid/checkpoint-50/training_args.bin"))
                .toStdString()));
        QVERIFY2(page.toPlainText().contains(
                     QStringLiteral("Object\ntransformers.training_args.TrainingArguments")),
                 qPrintable(page.toPlainText()));
        page.setDocument(Document::open(
            testsupport::corpus(QStringLiteral("pytorch/valid/dtypes.pt")).toStdString()));
        QVERIFY2(!page.toPlainText().contains(QStringLiteral("Object")),
                 qPrintable(page.toPlainText()));
    }

    // Op names, ids, CIDs and metadata read exactly as in the file: escaped
    // once, and never taken for a placeholder ("%2") of the page's text.
    void fileTextShownExactly() {
        const std::string op = "<b>mat%2mul</b>&amp;", cid = "cid<1>&\"";
        ComputationGraphStore g;
        ComputationNode n("id<&>", op, {});
        n.outputCid = cid;
        g.insertNode(std::move(n));
        GradientCheckpoint ck(std::move(g), 7);
        ck = std::move(ck).withLossCid(cid);
        OverviewPage page;
        page.setDocument(fromJson(ck.toJson()));
        const QString text = page.toPlainText();
        QVERIFY2(text.contains(QString::fromStdString(op) + QStringLiteral(" × 1")),
                 qPrintable(text));
        QVERIFY(text.contains(QString::fromStdString(cid)));
        QVERIFY(text.contains(QStringLiteral("id<&> (") + QString::fromStdString(op) +
                              QLatin1Char(')')));
        QVERIFY(text.contains(QStringLiteral("odd<&>.json")));
    }

    // A gradient checkpoint's loss node, progress and ops, against the
    // core's lossNode() and counts made here, ops in name order.
    void gradientFiguresMatchTheGraph() {
        const auto doc = Document::open(std::string(CKPTSCOPE_SOURCE_DIR) +
                                        "/resources/samples/gradient_sample.json");
        const GradientCheckpoint& g = *doc->gradient();
        size_t forward = 0, backward = 0;
        std::map<std::string, size_t> ops;
        for (const auto& [id, n] : g.graph.nodes()) {
            forward += n.outputCid.has_value();
            backward += n.gradientCid.has_value();
            ++ops[n.op];
        }
        QVERIFY(forward > 0 && g.graph.nodeCount() < 1000); // no digit grouping below
        QVERIFY(ops.size() > 1);
        OverviewPage page;
        page.setDocument(doc);
        const QString text = page.toPlainText();
        const QString nodes = QString::number(g.graph.nodeCount());
        QVERIFY2(
            text.contains(QStringLiteral("Forward done\n%1 of %2 nodes").arg(forward).arg(nodes)),
            qPrintable(text));
        QVERIFY(text.contains(
            QStringLiteral("Backward done\n%1 of %2 nodes").arg(backward).arg(nodes)));
        const ComputationNode* loss = g.lossNode();
        QVERIFY(loss);
        QVERIFY(text.contains(
            QString::fromStdString("Loss node\n" + loss->id + " (" + loss->op + ")")));
        QStringList opList;
        for (const auto& [op, count] : ops)
            opList << QString::fromStdString(op) + QStringLiteral(" × ") + QString::number(count);
        QVERIFY2(text.contains(QStringLiteral("Ops\n") + opList.join(QStringLiteral(", "))),
                 qPrintable(text));
    }

    // A GGUF model: its architecture and name from metadata, bits per weight
    // overall and per type (computed here from the tensors), the share of
    // the file its tensor data takes.
    void ggufFacts() {
        REQUIRE_CONFORMANCE();
        const auto doc = Document::open(
            testsupport::corpus(QStringLiteral("gguf/valid/tiny-llama-Q4_K_M.gguf")).toStdString());
        OverviewPage page;
        page.setDocument(doc);
        const QString text = page.toPlainText();
        QVERIFY2(text.contains(QStringLiteral("Architecture")) &&
                     text.contains(QStringLiteral("llama")),
                 qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("tiny-llama-test")), qPrintable(text));
        // The file stores general.file_type 15, llama.cpp's Q4_K_M.
        QVERIFY2(text.contains(QStringLiteral("File type\nQ4_K_M (general.file_type 15)")),
                 qPrintable(text));
        std::map<std::string, std::pair<uint64_t, uint64_t>> bitsAndCount;
        for (const TensorEntry& t : doc->tensors()) {
            auto& [bits, elements] = bitsAndCount[dtypeName(t.dtype)];
            bits += *tensorSizeBytes(t) * 8;
            elements += *t.elementCount;
        }
        QCOMPARE(bitsAndCount.size(), size_t(4)); // F32, Q4_K, Q6_K, Q8_0
        for (const auto& [name, be] : bitsAndCount) {
            size_t tensors = 0;
            for (const TensorEntry& t : doc->tensors())
                tensors += dtypeName(t.dtype) == name;
            // Exact, as the CLI gives it: Q6_K 6.5625, not 6.56.
            const QString line = QStringLiteral("%1: %2 bpw, %3 tensor")
                                     .arg(QString::fromStdString(name))
                                     .arg(double(be.first) / double(be.second), 0, 'g', 7)
                                     .arg(tensors);
            QVERIFY2(text.contains(line), qPrintable(line + QStringLiteral("\n") + text));
        }
        QVERIFY2(text.contains(QStringLiteral("Tensor data")), qPrintable(text));
    }

    // A file opened by a relative path is named by its absolute one.
    void pathShownAbsolute() {
        QTemporaryDir dir;
        writeModel(dir, QStringLiteral("rel.oxck"), false);
        const QString before = QDir::currentPath();
        QVERIFY(QDir::setCurrent(dir.path()));
        OverviewPage page;
        page.setDocument(Document::open("rel.oxck"));
        const QString text = page.toPlainText();
        QVERIFY(QDir::setCurrent(before));
        QVERIFY2(
            text.contains(QStringLiteral("Path\n") +
                          QFileInfo(dir.filePath(QStringLiteral("rel.oxck"))).absoluteFilePath()),
            qPrintable(text));
    }

    // A shape whose element count overflows leaves no true total: said so,
    // not the saturated 18,446,744,073,709,551,615.
    void overflowingTotalsSaid() {
        REQUIRE_CONFORMANCE();
        const auto doc = Document::open(
            testsupport::corpus(QStringLiteral("invalid/shape_product_overflow.oxck"))
                .toStdString());
        OverviewPage page;
        page.setDocument(doc);
        const QString text = page.toPlainText();
        QVERIFY2(text.contains(QStringLiteral("Parameters\noverflows 64 bits")) &&
                     text.contains(QStringLiteral("Parameter bytes\noverflows 64 bits")),
                 qPrintable(text));
        QVERIFY2(!text.contains(QStringLiteral("18,446,744")), qPrintable(text));
    }

    // A GGUF split model lists its files as llama.cpp names them: splits.
    void ggufSplitsListed() {
        QTemporaryDir dir;
        const auto path = [&](int n) {
            return dir.filePath(QStringLiteral("m-0000%1-of-00002.gguf").arg(n));
        };
        testsupport::writeFile(
            path(1), testsupport::ggufOf({{"split.no", 0}, {"split.count", 2}}, {{"a", {1.0f}}}));
        testsupport::writeFile(
            path(2), testsupport::ggufOf({{"split.no", 1}, {"split.count", 2}}, {{"b", {2.0f}}}));
        OverviewPage page;
        page.setDocument(Document::open(path(1).toStdString()));
        const QString text = page.toPlainText();
        QVERIFY2(text.contains(
                     QStringLiteral("Splits\n2: m-00001-of-00002.gguf, m-00002-of-00002.gguf")),
                 qPrintable(text));
        QVERIFY2(!text.contains(QStringLiteral("Shards")), qPrintable(text));
    }

    // A folder format's files are named as its module names them (a DCP
    // checkpoint's rank files), not shards.
    void folderFormatFilesListed() {
        QTemporaryDir dir;
        testsupport::DcpFixture::make(2, {{4, 3}}, false).write(dir.path().toStdString());
        OverviewPage page;
        page.setDocument(Document::open(dir.path().toStdString()));
        const QString text = page.toPlainText();
        QVERIFY2(text.contains(QStringLiteral("Files\n2: __0_0.distcp, __1_0.distcp")),
                 qPrintable(text));
        QVERIFY2(!text.contains(QStringLiteral("Shards")), qPrintable(text));
    }

    // A Hugging Face model with its config.json beside it: the model's
    // architecture and sizes in the Overview, as config.json writes them.
    void configBesideTheModel() {
        QTemporaryDir dir;
        Checkpoint c;
        c.addTensor({"t", {1}, {1}});
        const QString path = dir.filePath(QStringLiteral("model.oxck"));
        c.save(path.toStdString());
        OverviewPage page;
        page.setDocument(Document::open(path.toStdString()));
        QVERIFY(!page.toPlainText().contains(QStringLiteral("hidden_size")));
        testsupport::writeFile(dir.filePath(QStringLiteral("config.json")),
                               R"({"architectures": ["Qwen3ForCausalLM"], "hidden_size": 1024,
                                   "num_hidden_layers": 28, "torch_dtype": "bfloat16"})");
        page.setDocument(Document::open(path.toStdString()));
        const QString text = page.toPlainText();
        for (const char* fact :
             {"Qwen3ForCausalLM", "hidden_size", "1024", "num_hidden_layers", "28", "bfloat16"})
            QVERIFY2(text.contains(QString::fromLatin1(fact)), qPrintable(text));
    }

    void metadataShownExactly() {
        QTemporaryDir dir;
        Checkpoint c;
        c.setMetadata("step", "<i>12</i> &lt; %1");
        c.addTensor({"t", {1}, {1}});
        const QString path = dir.filePath(QStringLiteral("m.oxck"));
        c.save(path.toStdString());
        OverviewPage page;
        page.setDocument(Document::open(path.toStdString()));
        QVERIFY2(page.toPlainText().contains(QStringLiteral("<i>12</i> &lt; %1")),
                 qPrintable(page.toPlainText()));
    }

    // A shard opened alone says which model it belongs to, and the link in
    // the warning's place opens that model in the window; the model's
    // Overview lists its shards and the index's total_size. A folder
    // holding the model, dropped, opens as the model (not as a run).
    void shardAloneOpensItsWholeModel() {
        QTemporaryDir dir;
        const testsupport::ShardedFixture f;
        const std::string index = f.writeTo(dir.path().toStdString());
        MainWindow w;
        auto* page = qobject_cast<OverviewPage*>(w.tabs()->widget(0));
        QVERIFY(page);
        QSignalSpy loaded(&w, &MainWindow::documentLoaded);
        w.openFile(dir.filePath(QString::fromStdString(testsupport::ShardedFixture::shardName(1))));
        QVERIFY(QTest::qWaitFor([&] { return loaded.size() == 1; }, 10000));
        QVERIFY(!w.document()->isSharded());
        QVERIFY(page->toPlainText().contains(
            QStringLiteral("one of 2 shards of a sharded model; the whole model is "
                           "model.safetensors.index.json")));
        QVERIFY(page->toPlainText().contains(QStringLiteral("Open the whole model")));
        Q_EMIT page->anchorClicked(QUrl(QStringLiteral("openwarning:0")));
        QVERIFY(QTest::qWaitFor([&] { return loaded.size() == 2; }, 10000));
        QCOMPARE(w.currentPath(), QString::fromStdString(index));
        QVERIFY(w.document()->isSharded());
        QCOMPARE(w.document()->tensors().size(), size_t(4));
        const QString text = page->toPlainText();
        QVERIFY2(
            text.contains(QStringLiteral("Shards")) &&
                text.contains(QString::fromStdString(testsupport::ShardedFixture::shardName(2))) &&
                text.contains(QStringLiteral("Index total_size")) &&
                text.contains(QStringLiteral("sharded safetensors model")),
            qPrintable(text));

        MainWindow empty;
        QSignalSpy emptyLoaded(&empty, &MainWindow::documentLoaded);
        const auto runsBefore = WindowRegistry::instance().windows().size();
        QVERIFY(dropsupport::drop(&empty, {dir.path()}));
        QVERIFY(QTest::qWaitFor([&] { return !emptyLoaded.isEmpty(); }, 10000));
        QVERIFY(empty.document()->isSharded());
        QCOMPARE(WindowRegistry::instance().windows().size(), runsBefore); // no run window
    }
};

QTEST_MAIN(TestOverviewPage)
#include "tst_overviewpage.moc"
