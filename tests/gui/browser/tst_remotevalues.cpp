// A model opened by URL is read only where the user looks, and the window
// never waits for the server: against a server that answers every value
// request late (FaultServer's /delayed), nothing of the values is asked for
// until a tensor is selected, and the event loop keeps turning (a timer keeps
// firing) while the Values page waits for its chunk.
#include "browser/mainwindow.h"
#include "browser/overviewpage.h"
#include "httpservers.h"
#include "mainwindowsupport.h"
#include "safetensorsbuilder.h"
#include "tensor/tensorvaluesmodel.h"
#include "tensor/tensorvaluesview.h"
#include "testsupport.h"

#include <QElapsedTimer>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QtTest>

using namespace testsupport;
using guisupport::waitLoaded;

namespace {

// Ranges past the first request: values (the first answer, 64 KiB from byte
// 0, is the header).
size_t valueRequests(const FaultServer& server) {
    size_t n = 0;
    for (const FaultServer::Request& r : server.requests()) {
        const auto range = r.headers.find("range");
        if (range != r.headers.end() && range->second.rfind("bytes=0-", 0) != 0)
            ++n;
    }
    return n;
}

// The longest wait between two ticks of a 10 ms timer while `until` is
// false (at most `limitMs`): how long the GUI thread was busy at a stretch.
qint64 longestStall(const std::function<bool()>& until, int limitMs) {
    QElapsedTimer clock, sinceTick;
    clock.start();
    sinceTick.start();
    qint64 longest = 0;
    QTimer ticker;
    QObject::connect(&ticker, &QTimer::timeout,
                     [&] { longest = std::max(longest, sinceTick.restart()); });
    ticker.start(10);
    while (!until() && clock.elapsed() < limitMs)
        QTest::qWait(5);
    return std::max(longest, sinceTick.elapsed());
}

} // namespace

class TestRemoteValues : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("CkptscopeTest"));
        QSettings().clear();
    }

    void valuesAreReadOnlyWhenLookedAtAndNeverOnTheGuiThread() {
        // Two tensors whose values lie past the first 64 KiB the header read
        // fetches: 20,000 floats of padding first.
        std::vector<float> pad(20000, 0.5f), big(4096);
        for (size_t i = 0; i < big.size(); ++i)
            big[i] = float(i) * 0.25f;
        FaultServer server(
            stFile({{"pad", "F32", {20000}, leBytes(pad)}, {"big", "F32", {64, 64}, leBytes(big)}}),
            "");
        MainWindow w;
        w.show();
        w.openFile(qstr(server.url("/delayed")));
        QVERIFY(waitLoaded(w));
        // Opened: the index only. No NaN/Inf scan of a remote model unasked.
        QTest::qWait(300);
        QCOMPARE(valueRequests(server), size_t(0));
        QVERIFY(!w.isScanning());
        auto* overview = w.findChild<OverviewPage*>();
        QVERIFY(overview);
        QVERIFY2(overview->toPlainText().contains(QStringLiteral("Check every value")),
                 qPrintable(overview->toPlainText()));

        // The user selects a tensor and looks at its values.
        QVERIFY(w.selectTensor(QStringLiteral("big")));
        w.tabs()->setCurrentWidget(w.valuesView());
        TensorValuesModel* model = w.valuesView()->model();
        const QModelIndex cell = model->index(1, 3); // element 67
        QCOMPARE(cell.data().toString(), TensorValuesModel::placeholder());
        const qint64 stall =
            longestStall([&] { return cell.data().toString() != TensorValuesModel::placeholder(); },
                         4 * FaultServer::kDelayMs + 5000);
        QCOMPARE(cell.data().toString(), QStringLiteral("16.75"));
        // The server held each value request for 1.5 s; the window kept
        // turning its event loop meanwhile. A read on the GUI thread would
        // stall it the whole 1.5 s; under 1 s leaves room for slow painting
        // (sanitizers) and still catches one.
        QVERIFY2(stall < FaultServer::kDelayMs * 2 / 3,
                 qPrintable(QStringLiteral("the GUI thread stalled %1 ms").arg(stall)));
        QVERIFY(valueRequests(server) > 0);
    }

    void askedScanReadsEveryValue() {
        std::vector<float> values(20000, 1.0f);
        values[12345] = std::numeric_limits<float>::quiet_NaN();
        FaultServer server(stFile({{"w", "F32", {20000}, leBytes(values)}}), "");
        MainWindow w;
        w.show();
        w.openFile(qstr(server.url("/delayed")));
        QVERIFY(waitLoaded(w));
        auto* overview = w.findChild<OverviewPage*>();
        QVERIFY(!w.isScanning());
        // The Overview's link asks for the scan; its NaN is then named.
        Q_EMIT overview->anchorClicked(QUrl(QStringLiteral("scanvalues:")));
        QVERIFY(w.isScanning());
        QTRY_VERIFY_WITH_TIMEOUT(!w.isScanning(), 4 * FaultServer::kDelayMs + 5000);
        QTRY_VERIFY(overview->toPlainText().contains(QStringLiteral("NaN")));
        QVERIFY(!overview->toPlainText().contains(QStringLiteral("Check every value")));
    }
};

QTEST_MAIN(TestRemoteValues)
#include "tst_remotevalues.moc"
