// The window registry: every window opens through it; asking again for what
// an open window shows brings that window forward instead of a second one;
// closed windows are forgotten.
#include "testsupport.h"

#include "browser/mainwindow.h"
#include "common/windowregistry.h"
#include "compare/comparewindow.h"
#include "run/runloader.h"
#include "run/runwindow.h"

#include "ckptscope/formats/oxck/checkpoint.h"

#include <QApplication>
#include <QDir>
#include <QPointer>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using testsupport::str;

namespace {

template <typename W> QList<W*> registered() {
    QList<W*> out;
    for (QWidget* w : WindowRegistry::instance().windows())
        if (auto* x = qobject_cast<W*>(w))
            out << x;
    return out;
}

bool loaded(MainWindow* w) {
    return QTest::qWaitFor([w] { return w->document() != nullptr; }, 10000);
}

// Closes every registered window and waits until each is deleted.
bool closeAll() {
    QList<QPointer<QWidget>> open;
    for (QWidget* w : WindowRegistry::instance().windows()) {
        open << w;
        w->close();
    }
    return QTest::qWaitFor(
        [&open] {
            return std::all_of(open.begin(), open.end(), [](const auto& p) { return p.isNull(); });
        },
        5000);
}

} // namespace

class TestWindowRegistry : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_a, m_b, m_run;

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true); // keep the user's settings and recent files
        QApplication::setOrganizationName(QStringLiteral("CkptscopeTest"));
        QVERIFY(m_dir.isValid());
        m_run = m_dir.filePath(QStringLiteral("run"));
        QVERIFY(QDir().mkpath(m_run));
        for (int step : {1, 2}) {
            ckptscope::Checkpoint c;
            c.setMetadata("step", std::to_string(step));
            c.addTensor({"w", {2}, {float(step), 2.0f}});
            c.save(str(m_run) + "/ckpt_" + std::to_string(step) + ".oxck");
        }
        m_a = m_run + QStringLiteral("/ckpt_1.oxck");
        m_b = m_run + QStringLiteral("/ckpt_2.oxck");
    }

    void cleanup() { QVERIFY(closeAll()); }

    void sameFileTwiceBringsTheFirstWindowForward() {
        WindowRegistry& registry = WindowRegistry::instance();
        MainWindow* first = registry.openFile(m_a);
        QVERIFY(first && first->isVisible());
        // Asked again while it is still opening: the same window.
        QCOMPARE(registry.openFile(m_a), first);
        QVERIFY(loaded(first));
        QCOMPARE(first->currentPath(), m_a);
        MainWindow* other = registry.openFile(m_b);
        QVERIFY(other != first);
        QVERIFY(loaded(other));
        // The same file by another spelling: still the first window, now in front.
        const QString spelled = m_run + QStringLiteral("/./../run/ckpt_1.oxck");
        QCOMPARE(registry.openFile(spelled), first);
        QTRY_COMPARE(QApplication::activeWindow(), static_cast<QWidget*>(first));
        QCOMPARE(registered<MainWindow>().size(), 2);
        // A second window for the same file only when asked for one.
        MainWindow* second = registry.openFileInNewWindow(m_a);
        QVERIFY(second != first);
        QCOMPARE(registered<MainWindow>().size(), 3);
    }

    void setupRunsOnlyOnANewWindowBeforeItShows() {
        WindowRegistry& registry = WindowRegistry::instance();
        int calls = 0;
        bool visibleInSetup = true;
        auto setup = [&](MainWindow* w) {
            ++calls;
            visibleInSetup = w->isVisible();
            w->resize(1111, 777);
        };
        MainWindow* w = registry.openFile(m_a, setup);
        QCOMPARE(calls, 1);
        QVERIFY(!visibleInSetup);
        QCOMPARE(w->size(), QSize(1111, 777));
        QCOMPARE(registry.openFile(m_a, setup), w);
        QCOMPARE(calls, 1);
        MainWindow* empty = registry.newWindow(setup);
        QCOMPARE(calls, 2);
        QVERIFY(empty->currentPath().isEmpty());
        QVERIFY(!empty->isLoading());
    }

    void comparisonOpensThroughTheRegistry() {
        WindowRegistry& registry = WindowRegistry::instance();
        CompareWindow* w = registry.openComparison(m_a, m_b);
        QVERIFY(w && w->isVisible());
        QCOMPARE(w->pathA(), m_a);
        QCOMPARE(w->pathB(), m_b);
        QVERIFY(QSignalSpy(w, &CompareWindow::comparisonFinished).wait(10000));
        QCOMPARE(registry.openComparison(m_a, m_b), w);
        // B against A is another comparison.
        CompareWindow* swapped = registry.openComparison(m_b, m_a);
        QVERIFY(swapped != w);
        QCOMPARE(registered<CompareWindow>().size(), 2);
    }

    void runOpensThroughTheRegistry() {
        WindowRegistry& registry = WindowRegistry::instance();
        RunWindow* w = registry.openRun({m_run});
        QVERIFY(w && w->isVisible());
        QCOMPARE(w->loader()->paths(), QStringList{m_run});
        QVERIFY(
            QTest::qWaitFor([w] { return w->run() && w->run()->checkpoints.size() == 2; }, 20000));
        QCOMPARE(registry.openRun({m_run + QStringLiteral("/")}), w);
        RunWindow* files = registry.openRun({m_a, m_b});
        QVERIFY(files != w);
        QCOMPARE(registered<RunWindow>().size(), 2);
        // A checkpoint of the run opens through the registry too, once.
        w->openCheckpoint(0);
        QCOMPARE(registered<MainWindow>().size(), 1);
        w->openCheckpoint(0);
        QCOMPARE(registered<MainWindow>().size(), 1);
    }

    void closedWindowsAreForgotten() {
        WindowRegistry& registry = WindowRegistry::instance();
        MainWindow* w = registry.openFile(m_a);
        RunWindow* run = registry.openRun({m_run});
        QCOMPARE(registry.windows().size(), 2);
        QPointer<MainWindow> gone(w);
        w->close();
        // Closed: no longer offered, even before it is deleted.
        QCOMPARE(registry.windows(), QList<QWidget*>{run});
        QTRY_VERIFY(gone.isNull());
        QCOMPARE(registry.windows(), QList<QWidget*>{run});
        // The same file again: a new window.
        MainWindow* again = registry.openFile(m_a);
        QVERIFY(again);
        QCOMPARE(registry.windows().size(), 2);
        QVERIFY(registry.windows().contains(again));
    }
};

QTEST_MAIN(TestWindowRegistry)
#include "tst_windowregistry.moc"
