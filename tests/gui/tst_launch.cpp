// The browser's command line (app/main.cpp): --help and --version without a
// display, and --select/--tab applied to every window that opens a file.
#include "browser/launchselection.h"
#include "browser/mainwindow.h"
#include "graph/graphpage.h"
#include "graph/nodeinspector.h"
#include "tensor/tensortreemodel.h"

#include "ckptscope/document/document.h"

#include <QApplication>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>
#include <QTreeView>

namespace {

const QString kModel = QStringLiteral(CKPTSCOPE_SOURCE_DIR "/resources/samples/model_sample.oxck");
const QString kGradient =
    QStringLiteral(CKPTSCOPE_SOURCE_DIR "/resources/samples/gradient_sample.json");

// Runs the browser as over ssh: no display, no platform chosen.
QProcess* runWithoutDisplay(const QStringList& args) {
    auto* p = new QProcess;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* var : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
        env.remove(QString::fromLatin1(var));
    p->setProcessEnvironment(env);
    p->start(QStringLiteral(CKPTSCOPE_GUI_PATH), args);
    p->waitForFinished(30000);
    return p;
}

bool openAndWait(MainWindow& w, const QString& path) {
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    w.openFile(path);
    return QTest::qWaitFor([&] { return !loaded.isEmpty(); }, 20000);
}

} // namespace

class TestLaunch : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true); // keep the user's settings out
        QApplication::setOrganizationName(QStringLiteral("CkptscopeTest"));
    }

    void helpAndVersionNeedNoDisplay() {
        for (const QString& flag : {QStringLiteral("--help"), QStringLiteral("-h")}) {
            std::unique_ptr<QProcess> p(runWithoutDisplay({flag}));
            QCOMPARE(p->exitStatus(), QProcess::NormalExit);
            QCOMPARE(p->exitCode(), 0);
            const QString out = QString::fromUtf8(p->readAllStandardOutput());
            QVERIFY2(out.contains(QStringLiteral("--select <name>")), qPrintable(out));
            QVERIFY(out.contains(QStringLiteral("--tab <title>")));
            QVERIFY(out.contains(QStringLiteral("every launch")));
        }
        std::unique_ptr<QProcess> p(runWithoutDisplay({QStringLiteral("--version")}));
        QCOMPARE(p->exitStatus(), QProcess::NormalExit);
        QCOMPARE(p->exitCode(), 0);
        QCOMPARE(QString::fromUtf8(p->readAllStandardOutput()).trimmed(),
                 QStringLiteral("Ckptscope " CKPTSCOPE_VERSION));
    }

    // What main() does for every window: the selection waits for the load.
    void selectAndTabApplyOnLoad() {
        MainWindow w;
        w.show();
        LaunchSelection{QStringLiteral("layers.2.attn.v.weight"), QStringLiteral("values")}
            .applyOnLoad(&w);
        QVERIFY(openAndWait(w, kModel));
        QCOMPARE(w.tensorTree()->currentIndex().data(TensorTreeModel::FullNameRole).toString(),
                 QStringLiteral("layers.2.attn.v.weight"));
        QCOMPARE(w.tabs()->tabText(w.tabs()->currentIndex()).remove(QLatin1Char('&')),
                 QStringLiteral("Values"));
        // Once: a later load (another file) is left alone.
        w.tabs()->setCurrentIndex(0);
        QVERIFY(openAndWait(w, kModel));
        QCOMPARE(w.tabs()->currentIndex(), 0);
    }

    void selectTakesAGraphNodeId() {
        MainWindow w;
        QVERIFY(openAndWait(w, kGradient));
        const auto doc = w.document();
        const std::string loss = doc->gradient()->lossNode()->id;
        const QStringList problems =
            LaunchSelection{QString::fromStdString(loss), QStringLiteral("Graph")}.applyTo(&w);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.graphPage()));
        const int node = w.graphPage()->index()->indexOf(loss);
        QCOMPARE(w.graphPage()->inspector()->node(), node);
        // Chosen before or after the drawing exists: drawn selected once it does.
        QVERIFY(QTest::qWaitFor([&] { return w.graphPage()->layout() != nullptr; }, 20000));
        QTest::qWait(0);
        QCOMPARE(w.graphPage()->selectedNode(), node);
    }

    void unknownNamesAreReported() {
        MainWindow w;
        QVERIFY(openAndWait(w, kModel));
        const QStringList problems =
            LaunchSelection{QStringLiteral("no.such"), QStringLiteral("Nope")}.applyTo(&w);
        QCOMPARE(problems.size(), 2);
        QVERIFY(problems[0].contains(QStringLiteral("no.such")));
        QVERIFY(problems[1].contains(QStringLiteral("Nope")));
        QVERIFY(problems[1].contains(QStringLiteral("Values"))); // lists the tabs there are
    }
};

QTEST_MAIN(TestLaunch)
#include "tst_launch.moc"
