// The browser's command line (app/main.cpp): --help and --version without a
// display, and --select/--tab applied to every window that opens a file or
// a comparison.
#include "testsupport.h"

#include "browser/mainwindow.h"
#include "common/windowregistry.h"
#include "compare/comparetensormodel.h"
#include "compare/comparewindow.h"
#include "graph/graphpage.h"
#include "graph/nodeinspector.h"
#include "shell/launchselection.h"
#include "tensor/tensortreemodel.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <QApplication>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QPointer>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
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

// Runs the browser offscreen and waits for it to quit.
// The GUI run offscreen; its settings in configHome when one is given.
QProcess* runOffscreen(const QStringList& args, const QString& configHome = {}) {
    auto* p = new QProcess;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    if (!configHome.isEmpty())
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), configHome);
    p->setProcessEnvironment(env);
    p->start(QStringLiteral(CKPTSCOPE_GUI_PATH), args);
    p->waitForFinished(60000);
    return p;
}

bool openAndWait(MainWindow& w, const QString& path) {
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    w.openFile(path);
    return QTest::qWaitFor([&] { return !loaded.isEmpty(); }, 20000);
}

// The graph's index is made off the GUI thread after the load.
bool waitIndexed(MainWindow& w) {
    return QTest::qWaitFor([&] { return !w.graphPage()->isIndexing(); }, 20000);
}

} // namespace

class TestLaunch : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_a, m_b; // two checkpoints to compare: "big" changes most, "small" a little

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true); // keep the user's settings out
        QApplication::setOrganizationName(QStringLiteral("CkptscopeTest"));
        ckptscope::Checkpoint a, b;
        a.addTensor({"layers.0.big", {4}, {1, 2, 3, 4}});
        a.addTensor({"layers.1.small", {4}, {1, 2, 3, 4}});
        b.addTensor({"layers.0.big", {4}, {9, 9, 9, 9}});
        b.addTensor({"layers.1.small", {4}, {1, 2, 3, 4.5f}});
        m_a = m_dir.filePath(QStringLiteral("a.oxck"));
        m_b = m_dir.filePath(QStringLiteral("b.oxck"));
        a.save(testsupport::str(m_a));
        b.save(testsupport::str(m_b));
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
            // Every format read, from the registry (issue 22, defect 12).
            for (const ckptscope::FormatModule& m : ckptscope::formatModules())
                QVERIFY2(out.contains(QString::fromLatin1(m.description)), m.description);
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
        w.show(); // the graph is laid out once its tab is on screen
        QVERIFY(openAndWait(w, kGradient));
        QVERIFY(waitIndexed(w));
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

    // A node id given on the command line waits for the index, which is
    // made after the load: main()'s way, and --screenshot's.
    void selectedNodeOnLoadWaitsForTheIndex() {
        MainWindow w;
        w.show();
        const auto doc = ckptscope::Document::open(kGradient.toStdString());
        const QString loss = QString::fromStdString(doc->gradient()->lossNode()->id);
        LaunchSelection{loss, QStringLiteral("Graph")}.applyOnLoad(&w);
        QVERIFY(openAndWait(w, kGradient));
        QVERIFY(waitIndexed(w));
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.graphPage()));
        QCOMPARE(w.graphPage()->inspector()->node(),
                 w.graphPage()->index()->indexOf(loss.toStdString()));
        const QString png = m_dir.filePath(QStringLiteral("node.png"));
        const QString config = m_dir.filePath(QStringLiteral("config"));
        std::unique_ptr<QProcess> p(
            runOffscreen({QStringLiteral("--screenshot"), png, QStringLiteral("--select"), loss,
                          QStringLiteral("--tab"), QStringLiteral("Graph"), kGradient},
                         config));
        QCOMPARE(p->exitCode(), 0);
        const QString err = QString::fromUtf8(p->readAllStandardError());
        QVERIFY2(!err.contains(QStringLiteral("screenshot:")), qPrintable(err));
        QVERIFY(QFileInfo::exists(png));
        // What a screenshot opens is not added to the user's recent files.
        QDirIterator settings(config, QDir::Files, QDirIterator::Subdirectories);
        while (settings.hasNext()) {
            QFile f(settings.next());
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray text = f.readAll();
            QVERIFY2(!text.contains(QFileInfo(kGradient).fileName().toUtf8()), text.constData());
        }
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

    // `--compare A B --select NAME --tab TITLE`: main() attaches the selection
    // through the registry's setup; it applies once the comparison is shown,
    // over the most changed tensor the window opens on.
    void selectAndTabApplyToAComparison() {
        const LaunchSelection selection{QStringLiteral("layers.1.small"), QStringLiteral("values")};
        QPointer<CompareWindow> w = WindowRegistry::instance().openComparison(
            m_a, m_b, [&selection](CompareWindow* cw) { selection.applyOnLoad(cw); });
        QVERIFY(w);
        QSignalSpy done(w.data(), &CompareWindow::comparisonFinished);
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 20000));
        QCOMPARE(w->tensorView()->currentIndex().data(CompareTensorModel::FullNameRole).toString(),
                 QStringLiteral("layers.1.small"));
        QCOMPARE(w->tabs()->tabText(w->tabs()->currentIndex()).remove(QLatin1Char('&')),
                 QStringLiteral("Values"));
        // Once: comparing again (a file rewritten, Reload) leaves the user's choice.
        w->tabs()->setCurrentIndex(0);
        w->recompare();
        QVERIFY(QTest::qWaitFor([&] { return done.size() == 2; }, 20000));
        QCOMPARE(w->tabs()->currentIndex(), 0);
        // Names neither side has, and tabs the window lacks, are told.
        const QStringList problems =
            LaunchSelection{QStringLiteral("no.such"), QStringLiteral("Optimizer State")}.applyTo(
                w.data());
        QCOMPARE(problems.size(), 2);
        QVERIFY(problems[0].contains(QStringLiteral("no.such")));
        QVERIFY(problems[1].contains(QStringLiteral("Metadata"))); // lists the tabs there are
        w->close();
    }

    // The whole command line: app/main.cpp hands --select and --tab to the
    // compare window, which reports what it cannot apply.
    void compareTakesSelectAndTab() {
        const QString png = m_dir.filePath(QStringLiteral("compare.png"));
        std::unique_ptr<QProcess> p(
            runOffscreen({QStringLiteral("--compare"), QStringLiteral("--screenshot"), png,
                          QStringLiteral("--select"), QStringLiteral("no.such"),
                          QStringLiteral("--tab"), QStringLiteral("Nope"), m_a, m_b}));
        QCOMPARE(p->exitStatus(), QProcess::NormalExit);
        QCOMPARE(p->exitCode(), 0);
        const QString err = QString::fromUtf8(p->readAllStandardError());
        QVERIFY2(err.contains(QStringLiteral("no tensor named 'no.such'")), qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("no tab 'Nope'")), qPrintable(err));
        QVERIFY(QFileInfo::exists(png));
        // Names that are there: nothing to report.
        p.reset(runOffscreen({QStringLiteral("--compare"), QStringLiteral("--screenshot"), png,
                              QStringLiteral("--select"), QStringLiteral("layers.1.small"),
                              QStringLiteral("--tab"), QStringLiteral("Metadata"), m_a, m_b}));
        QCOMPARE(p->exitCode(), 0);
        const QString quiet = QString::fromUtf8(p->readAllStandardError());
        QVERIFY2(!quiet.contains(QStringLiteral("ckptscope:")), qPrintable(quiet));
    }
};

QTEST_MAIN(TestLaunch)
#include "tst_launch.moc"
