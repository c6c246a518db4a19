// The browser's export actions: Tensor ▸ Export Values (.npy, .csv), the
// tree's context menu, Export Selection of the Values page, the histogram as
// PNG/SVG/CSV, File ▸ Export Statistics and File ▸ Convert — written off the
// GUI thread with progress, cancellable, atomically; on a safetensors file.
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include "browser/mainwindow.h"
#include "export/exportactions.h"
#include "export/exportjob.h"
#include "mainwindowsupport.h"
#include "tensor/histogramview.h"
#include "tensor/tensorpage.h"
#include "tensor/tensortreemodel.h"
#include "tensor/tensorvaluesview.h"

#include "ckptscope/document/document.h"
#include "ckptscope/export/npywriter.h"
#include "ckptscope/export/samplegenerator.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QItemSelectionModel>
#include <QMenu>
#include <QMenuBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

#include <cstring>
#include <vector>

using namespace ckptscope;
using guisupport::waitLoaded;
using testsupport::leBytes;
using testsupport::str;

namespace {

// Waits for a job's end; true when it finished (not failed or cancelled).
bool waitFinished(ExportJob* job) {
    if (!job)
        return false;
    QSignalSpy done(job, &ExportJob::finished);
    QSignalSpy failed(job, &ExportJob::failed);
    if (!QTest::qWaitFor([&] { return !done.isEmpty() || !failed.isEmpty(); }, 30000))
        return false;
    if (!failed.isEmpty())
        qWarning() << failed.first().first().toString();
    return !done.isEmpty();
}

QByteArray readBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

const std::vector<int16_t> kInts = {-7, 0, 12, 300, -32768, 32767};
const std::vector<float> kFloats = {0.1f, -2.5f, 3.0f, 1e-3f};

} // namespace

class TestExportActions : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_st;

    QString path(const char* name) const { return m_dir.filePath(QString::fromUtf8(name)); }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("CkptscopeTest"));
        qputenv("CKPTSCOPE_NO_DIALOGS", "1");
        m_st = path("model.safetensors");
        testsupport::writeFile(m_st, testsupport::stFile({{"enc.w", "I16", {2, 3}, leBytes(kInts)},
                                                          {"enc.b", "F32", {4}, leBytes(kFloats)}},
                                                         {{"source", "test"}}));
    }

    void menusAndContextMenu() {
        MainWindow w;
        w.show();
        w.openFile(m_st);
        QVERIFY(waitLoaded(w));
        auto* actions = w.findChild<ExportActions*>();
        QVERIFY(actions);
        QMenu* tensorMenu = nullptr;
        for (QAction* a : w.menuBar()->actions())
            if (a->text().remove(QLatin1Char('&')) == QStringLiteral("Tensor"))
                tensorMenu = a->menu();
        QVERIFY(tensorMenu);
        QVERIFY(tensorMenu->actions().contains(actions->exportValuesAction()));
        QVERIFY(tensorMenu->actions().contains(actions->copyNameAction()));
        QCOMPARE(w.tensorTree()->contextMenuPolicy(), Qt::CustomContextMenu);
        QVERIFY(w.valuesView()->table()->actions().contains(actions->exportSelectionAction()));
        QVERIFY(w.selectTensor(QStringLiteral("enc.b")));
        QCOMPARE(actions->currentTensor(), 1); // tensors in data order: enc.w, enc.b
        // The tree shows each tensor's dtype.
        const QModelIndex b = w.tensorTree()->currentIndex();
        QCOMPARE(b.siblingAtColumn(TensorTreeModel::Dtype).data().toString(),
                 QStringLiteral("F32"));
        QVERIFY(w.selectTensor(QStringLiteral("enc.w")));
        QCOMPARE(w.tensorTree()
                     ->currentIndex()
                     .siblingAtColumn(TensorTreeModel::Dtype)
                     .data()
                     .toString(),
                 QStringLiteral("I16"));
        QVERIFY(w.selectTensor(QStringLiteral("enc.w")));
        QCOMPARE(actions->currentTensor(), 0);
        actions->copyNameAction()->trigger();
        QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("enc.w"));
    }

    // A safetensors I16 tensor exported from the browser keeps its dtype.
    void exportValuesNpyAndCsv() {
        MainWindow w;
        w.openFile(m_st);
        QVERIFY(waitLoaded(w));
        auto* actions = w.findChild<ExportActions*>();
        const QString npy = path("w.npy");
        QVERIFY(waitFinished(actions->exportValues(0, npy)));
        const QByteArray bytes = readBytes(npy);
        const std::string header = npyHeader("<i2", {2, 3});
        QCOMPARE(bytes.left(int(header.size())).toStdString(), header);
        QCOMPARE(bytes.mid(int(header.size())).toStdString(), leBytes(kInts));
        const QString csv = path("w.csv");
        QVERIFY(waitFinished(actions->exportValues(0, csv)));
        QCOMPARE(readBytes(csv), QByteArray("-7,0,12\r\n300,-32768,32767\r\n"));
        QVERIFY(!actions->exportValues(5, csv)); // no such tensor
    }

    void exportStatisticsAndConvert() {
        MainWindow w;
        w.openFile(m_st);
        QVERIFY(waitLoaded(w));
        auto* actions = w.findChild<ExportActions*>();
        const QString stats = path("stats.csv");
        QVERIFY(waitFinished(actions->exportStatistics(stats)));
        const QList<QByteArray> lines = readBytes(stats).split('\n');
        QCOMPARE(lines.size(), 4); // header, two tensors, the end
        QVERIFY(lines[0].startsWith("name,count,finite"));
        QVERIFY(lines[1].startsWith("enc.w,6,6,0,0,0,0,1,-32768,32767,"));
        const QString oxck = path("converted.oxck");
        QVERIFY(waitFinished(actions->convert(oxck)));
        const auto doc = Document::open(str(oxck));
        QCOMPARE(doc->format(), Format::Oxck);
        QCOMPARE(doc->tensors().size(), size_t(2));
        float v[6];
        doc->readValues(0, 0, 6, v);
        QCOMPARE(v[4], -32768.0f);
        // Converting onto the open file is refused and leaves it intact.
        const QByteArray before = readBytes(m_st);
        QVERIFY(!waitFinished(actions->convert(m_st)));
        QCOMPARE(readBytes(m_st), before);
    }

    void histogramExports() {
        MainWindow w;
        w.resize(1200, 800);
        w.show();
        w.openFile(m_st);
        QVERIFY(waitLoaded(w));
        auto* actions = w.findChild<ExportActions*>();
        QSignalSpy ready(w.tensorPage(), &TensorPage::statsReady);
        QVERIFY(w.selectTensor(QStringLiteral("enc.b")));
        QVERIFY(QTest::qWaitFor([&] { return !ready.isEmpty(); }, 10000));
        QString error;
        const QString png = path("h.png");
        QVERIFY2(actions->exportHistogram(png, &error), qPrintable(error));
        QImage image;
        QVERIFY(image.load(png));
        QVERIFY(image.width() > 10 && image.height() > 10);
        const QString svg = path("h.svg");
        QVERIFY2(actions->exportHistogram(svg, &error), qPrintable(error));
        QVERIFY(readBytes(svg).contains("<svg"));
        const QString csv = path("h.csv");
        QVERIFY2(actions->exportHistogram(csv, &error), qPrintable(error));
        const QList<QByteArray> lines = readBytes(csv).trimmed().split('\n');
        const int bins = w.tensorPage()->bins();
        QCOMPARE(lines.size(), 1 + bins + 3);
        quint64 sum = 0;
        for (int k = 1; k <= bins; ++k)
            sum += lines[k].trimmed().split(',').last().toULongLong();
        QCOMPARE(sum, quint64(kFloats.size()));
        QVERIFY(lines[1].startsWith("0,-2.5,")); // the first bin starts at the minimum
    }

    void exportSelection() {
        MainWindow w;
        w.show();
        w.openFile(m_st);
        QVERIFY(waitLoaded(w));
        auto* actions = w.findChild<ExportActions*>();
        QVERIFY(w.selectTensor(QStringLiteral("enc.w")));
        QTableView* table = w.valuesView()->table();
        QTRY_COMPARE(table->model()->rowCount(), 2);
        QString error;
        QVERIFY(!actions->exportSelection(path("none.csv"), &error));
        QVERIFY(!error.isEmpty());
        table->selectionModel()->select(table->model()->index(0, 1), QItemSelectionModel::Select);
        table->selectionModel()->select(table->model()->index(1, 2), QItemSelectionModel::Select);
        const QString out = path("sel.csv");
        QVERIFY2(actions->exportSelection(out, &error), qPrintable(error));
        QCOMPARE(readBytes(out), QByteArray("0,\r\n,32767\r\n"));
    }

    // A long conversion shows progress and stops on cancel, leaving no file.
    void cancelLongConversion() {
        const QString big = path("big.oxck");
        SyntheticModelSpec spec;
        spec.tensorCount = 8;
        spec.totalBytes = uint64_t(64) << 20;
        writeSyntheticModel(str(big), spec);
        MainWindow w;
        w.openFile(big);
        QVERIFY(waitLoaded(w));
        auto* actions = w.findChild<ExportActions*>();
        const QString out = path("big.safetensors");
        ExportJob* job = actions->convert(out);
        QVERIFY(job);
        QVERIFY(job->dialog());
        QVERIFY(!actions->convertAction()->isEnabled() || job->isRunning());
        QSignalSpy cancelled(job, &ExportJob::cancelled);
        job->cancel();
        QCOMPARE(cancelled.size(), 1);
        QVERIFY(QTest::qWaitFor([&] { return actions->currentJob() == nullptr; }, 30000));
        QTest::qWait(200);
        QVERIFY(!QFile::exists(out));
        // No temporary left behind either.
        QCOMPARE(QDir(m_dir.path())
                     .entryList({QStringLiteral(".big.safetensors*")}, QDir::Files | QDir::Hidden)
                     .size(),
                 0);
    }
};

QTEST_MAIN(TestExportActions)
#include "tst_exportactions.moc"
