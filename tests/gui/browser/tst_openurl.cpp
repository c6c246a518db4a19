// Opening checkpoints by URL in the browser: File ▸ Open URL…, a pasted
// URL, a link dropped from a web browser, the recent list, several URLs as a
// run — against nginx on 127.0.0.1; s3:// objects and prefixes (a public
// bucket, a training run) against s3rver.
#include "awsenv.h"
#include "browser/mainwindow.h"
#include "browser/openurldialog.h"
#include "browser/recentfiles.h"
#include "common/filelocation.h"
#include "mainwindowsupport.h"
#include "run/runloader.h"
#include "run/runwindow.h"
#include "s3servers.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QLineEdit>
#include <QMenu>
#include <QMimeData>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolButton>
#include <QtTest>

using namespace testsupport;
using guisupport::waitLoaded;

namespace {

QAction* actionNamed(QWidget& w, const QString& text) {
    for (QAction* a : w.findChildren<QAction*>())
        if (a->text() == text)
            return a;
    return nullptr;
}

// Answers File ▸ Open URL… as a user would: types the text, ticks the
// public-bucket box if asked, presses OK.
void answerOpenUrl(QObject* context, const QString& text, bool publicBucket = false) {
    QTimer::singleShot(50, context, [text, publicBucket] {
        auto* dialog = qobject_cast<OpenUrlDialog*>(QApplication::activeModalWidget());
        QVERIFY(dialog);
        dialog->findChild<QLineEdit*>(QStringLiteral("urlEdit"))->setText(text);
        auto* box = dialog->findChild<QCheckBox*>(QStringLiteral("publicBucket"));
        QCOMPARE(box->isEnabled(), text.startsWith(QStringLiteral("s3://")));
        box->setChecked(publicBucket);
        dialog->accept();
    });
}

RunWindow* waitForRunWindow() {
    RunWindow* run = nullptr;
    const bool found = QTest::qWaitFor(
        [&] {
            for (QWidget* top : QApplication::topLevelWidgets())
                if (auto* r = qobject_cast<RunWindow*>(top); r && r->run())
                    run = r;
            return run != nullptr;
        },
        10000);
    return found ? run : nullptr;
}

} // namespace

class TestOpenUrl : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void locationsOfUrlsAreNotPaths();
    void openUrlDialogOpensTheModel();
    void pastedUrlOpens();
    void droppedLinkOpens();
    void failedUrlSaysTheStatus();
    void cancelStopsAStalledOpen();
    void severalUrlsOpenAsARun();
    void cancelledRunStopsAStalledUrl();
    void publicBucketOpensUnsigned();
    void s3PrefixOfARunOpensTheRunWindow();

private:
    QTemporaryDir m_dir;
    std::unique_ptr<NginxServer> m_nginx;
    QString m_url;
};

void TestOpenUrl::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName(QStringLiteral("CkptscopeTest"));
    QSettings().clear();
    QVERIFY(m_dir.isValid());
    writeFile(m_dir.filePath(QStringLiteral("model.safetensors")),
              stFile({{"w", "F32", {2, 2}, leBytes(std::vector<float>{1, 2, 3, 4})}}));
    m_nginx = std::make_unique<NginxServer>(m_dir.path());
    if (!m_nginx->start())
        QFAIL(qPrintable(m_nginx->why()));
    // A query string as presigned URLs carry: part of the address, not the name.
    m_url = qstr(m_nginx->url("model.safetensors")) + QStringLiteral("?sig=abc");
}

void TestOpenUrl::locationsOfUrlsAreNotPaths() {
    QCOMPARE(filelocation::displayName(m_url), QStringLiteral("model.safetensors"));
    QCOMPARE(filelocation::key(m_url), m_url);
    QVERIFY(filelocation::container(m_url).startsWith(QStringLiteral("http://127.0.0.1:")));
    QVERIFY(!filelocation::container(m_url).contains(QStringLiteral("sig=")));
    QVERIFY(!filelocation::isRemote(QStringLiteral("/tmp/http://x")));
    // Where a file is, for lists of files from anywhere (Open Recent).
    QVERIFY(filelocation::place(m_url).startsWith(QStringLiteral("http://127.0.0.1:")));
    QVERIFY(!filelocation::place(m_url).contains(QStringLiteral("model")));
    QCOMPARE(filelocation::place(QStringLiteral("s3://bucket/run/step-1/")),
             QStringLiteral("s3://bucket"));
    QCOMPARE(filelocation::displayName(QStringLiteral("s3://bucket/run/step-1/")),
             QStringLiteral("step-1"));
    QCOMPARE(filelocation::place(QDir::homePath() + QStringLiteral("/models/m.safetensors")),
             QStringLiteral("~/models"));
    QCOMPARE(filelocation::place(QStringLiteral("/srv/m.gguf")), QStringLiteral("/srv"));
}

void TestOpenUrl::openUrlDialogOpensTheModel() {
    MainWindow w;
    w.show();
    QAction* open = actionNamed(w, QStringLiteral("Open &URL…"));
    QVERIFY(open);
    QCOMPARE(open->shortcut(), QKeySequence(QStringLiteral("Ctrl+L")));
    answerOpenUrl(this, m_url);
    open->trigger();
    QVERIFY(waitLoaded(w));
    QCOMPARE(w.currentPath(), m_url);
    QCOMPARE(w.document()->tensors().size(), size_t(1));
    QCOMPARE(w.windowTitle(), QStringLiteral("model.safetensors — Ckptscope"));
    // The recent list keeps the URL as given, not a path made of it, and
    // shows where it is: a URL and a local file of one name look apart.
    QCOMPARE(RecentFiles().files().value(0), m_url);
    QMenu* recent = nullptr;
    for (QMenu* m : w.findChildren<QMenu*>())
        if (m->title() == QStringLiteral("Open &Recent"))
            recent = m;
    QVERIFY(recent && !recent->actions().isEmpty());
    QCOMPARE(recent->actions().first()->text(),
             QStringLiteral("model.safetensors — ") + filelocation::place(m_url));
    // File ▸ Open starts in no folder made of the URL ("…/127.0.0.1:8765"),
    // even where one of that name exists under the current folder.
    const QString cwd = QDir::currentPath();
    QDir::setCurrent(m_dir.path());
    const QString madeOfUrl = QFileInfo(m_url).absolutePath();
    QVERIFY(QDir().mkpath(madeOfUrl));
    QString startedIn;
    QTimer::singleShot(50, this, [&startedIn] {
        if (auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget())) {
            startedIn = dialog->directory().absolutePath();
            dialog->reject();
        }
    });
    actionNamed(w, QStringLiteral("&Open…"))->trigger();
    QDir(madeOfUrl).removeRecursively();
    QDir::setCurrent(cwd);
    QVERIFY(!startedIn.isEmpty());
    QVERIFY2(!startedIn.contains(QStringLiteral("127.0.0.1")), qPrintable(startedIn));
}

void TestOpenUrl::pastedUrlOpens() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QGuiApplication::clipboard()->setText(QStringLiteral("  ") + m_url + QStringLiteral("\n"));
    QTest::keySequence(&w, QKeySequence::Paste);
    QVERIFY(waitLoaded(w));
    QCOMPARE(w.currentPath(), m_url);
}

void TestOpenUrl::droppedLinkOpens() {
    MainWindow w;
    w.show();
    QMimeData mime;
    mime.setUrls({QUrl(m_url)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent dropped(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &dropped);
    QVERIFY(waitLoaded(w));
    QCOMPARE(w.currentPath(), m_url);
}

void TestOpenUrl::failedUrlSaysTheStatus() {
    MainWindow w;
    w.show();
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openFile(qstr(m_nginx->url("missing.safetensors")));
    QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty(); }, 10000));
    QVERIFY2(failed.first().at(1).toString().contains(QStringLiteral("404 Not Found")),
             qPrintable(failed.first().at(1).toString()));
}

void TestOpenUrl::cancelStopsAStalledOpen() {
    FaultServer server("never sent", "");
    MainWindow w;
    w.show();
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openFile(qstr(server.url("/slow")));
    auto* cancel = w.findChild<QToolButton*>(QStringLiteral("cancelLoad"));
    QVERIFY(cancel);
    QVERIFY(cancel->isVisible());
    QVERIFY(w.isLoading());
    QTest::qWait(200); // the request is under way
    cancel->click();
    QVERIFY(!cancel->isVisible());
    QVERIFY(QTest::qWaitFor([&] { return !w.isLoading(); }, 5000));
    QTest::qWait(100);
    QVERIFY(loaded.isEmpty());
    QVERIFY(failed.isEmpty());
    QVERIFY(w.currentPath().isEmpty());
    QVERIFY(!w.statusBar()->currentMessage().startsWith(QStringLiteral("Opening")));
}

void TestOpenUrl::severalUrlsOpenAsARun() {
    qputenv("XDG_CACHE_HOME", m_dir.filePath(QStringLiteral("cache")).toUtf8());
    const QString second = m_dir.filePath(QStringLiteral("ckpt-30.safetensors"));
    writeFile(second, stFile({{"w", "F32", {2, 2}, leBytes(std::vector<float>{5, 6, 7, -8})}},
                             {{"step", "10"}}));
    const QString secondUrl = qstr(m_nginx->url("ckpt-30.safetensors"));
    MainWindow w;
    w.show();
    answerOpenUrl(this, m_url + QStringLiteral("  ") + secondUrl);
    actionNamed(w, QStringLiteral("Open &URL…"))->trigger();
    RunWindow* run = waitForRunWindow();
    QVERIFY(run);
    ckptscope::RunOptions uncached;
    uncached.useCache = false;
    const ckptscope::Run local = ckptscope::readRun(
        {m_dir.filePath(QStringLiteral("model.safetensors")).toStdString(), second.toStdString()},
        uncached);
    QCOMPARE(run->run()->checkpoints.size(), size_t(2));
    QCOMPARE(local.checkpoints.size(), size_t(2));
    // By step: the second (10 from its metadata) first, then the first (no step).
    QCOMPARE(run->run()->checkpoints[0].path, secondUrl.toStdString());
    QCOMPARE(run->run()->checkpoints[1].path, m_url.toStdString());
    for (size_t i = 0; i < 2; ++i)
        QVERIFY(run->run()->checkpoints[i].summary == local.checkpoints[i].summary);
    delete run;
}

void TestOpenUrl::cancelledRunStopsAStalledUrl() {
    FaultServer server("never sent", "");
    QElapsedTimer clock;
    {
        RunLoader loader;
        loader.open({qstr(server.url("/slow"))});
        QTest::qWait(200); // the probe is under way
        QVERIFY(loader.isLoading());
        loader.cancel();
        clock.start();
    } // waits for its worker: stopped by the cancel, not by the 20 s stall timeout
    QVERIFY2(clock.elapsed() < 10000, qPrintable(QString::number(clock.elapsed())));
}

// A public bucket read with credentials it does not know: refused while
// requests are signed, opened once the box says the bucket is public (and
// the box remembers it for that bucket).
void TestOpenUrl::publicBucketOpensUnsigned() {
    S3Server server("open-data");
    QVERIFY2(server.start(), qPrintable(server.why()));
    QVERIFY(server.put("m/model.safetensors",
                       stFile({{"w", "F32", {2, 2}, leBytes(std::vector<float>{1, 2, 3, 4})}})));
    AwsEnv env({{"AWS_ACCESS_KEY_ID", "NOT-A-KEY-OF-THIS-SERVER"},
                {"AWS_SECRET_ACCESS_KEY", "x"},
                {"AWS_ENDPOINT_URL_S3", server.endpoint()}});
    const QString url = QStringLiteral("s3://open-data/m/model.safetensors");
    MainWindow w;
    w.show();
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    answerOpenUrl(this, url);
    actionNamed(w, QStringLiteral("Open &URL…"))->trigger();
    QVERIFY(failed.wait(10000));
    QVERIFY2(failed.first().at(1).toString().contains(QStringLiteral("403")),
             qPrintable(failed.first().at(1).toString()));
    answerOpenUrl(this, url, true);
    actionNamed(w, QStringLiteral("Open &URL…"))->trigger();
    QVERIFY(waitLoaded(w));
    QCOMPARE(w.currentPath(), url);
    QCOMPARE(w.document()->tensors().size(), size_t(1));
    OpenUrlDialog again(&w, url);
    QVERIFY(again.findChild<QCheckBox*>(QStringLiteral("publicBucket"))->isChecked());
    ckptscope::setPublicBucket("open-data", false);
}

// An s3:// prefix holding checkpoint-N/ folders is a run: listed off the
// GUI thread, shown in a run window with each checkpoint's step.
void TestOpenUrl::s3PrefixOfARunOpensTheRunWindow() {
    S3Server server("runs");
    QVERIFY2(server.start(), qPrintable(server.why()));
    for (int step : {100, 200})
        QVERIFY(
            server.put("exp/checkpoint-" + std::to_string(step) + "/model.safetensors",
                       stFile({{"w", "F32", {2}, leBytes(std::vector<float>{1, float(step)})}})));
    AwsEnv env({{"AWS_ACCESS_KEY_ID", S3Server::kKey},
                {"AWS_SECRET_ACCESS_KEY", "S3RVER"},
                {"AWS_ENDPOINT_URL_S3", server.endpoint()}});
    qputenv("XDG_CACHE_HOME", m_dir.filePath(QStringLiteral("s3cache")).toUtf8());
    MainWindow w;
    w.show();
    answerOpenUrl(this, QStringLiteral("s3://runs/exp/"));
    actionNamed(w, QStringLiteral("Open &URL…"))->trigger();
    RunWindow* run = waitForRunWindow();
    QVERIFY(run);
    QVERIFY(!w.document()); // the browser window stays as it was
    QCOMPARE(run->run()->checkpoints.size(), size_t(2));
    QCOMPARE(run->run()->checkpoints[0].step, std::optional<uint64_t>(100));
    QCOMPARE(run->run()->checkpoints[1].files.front(),
             std::string("s3://runs/exp/checkpoint-200/model.safetensors"));
    delete run;
}

QTEST_MAIN(TestOpenUrl)
#include "tst_openurl.moc"
