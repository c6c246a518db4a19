#include "browser/mainwindow.h"
#include "browser/recentfiles.h"
#include "browser/startpage.h"
#include "compare/comparewindow.h"
#include "launch/comparelauncher.h"

#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

class TestStartPage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true); // keep the user's recent files out
        QApplication::setOrganizationName(QStringLiteral("CkptscopeTest"));
        QSettings().clear();
    }

    void recentFileOpensOnSingleClickAndEnter() {
        RecentFiles recent;
        recent.clear();
        recent.add(QStringLiteral("/data/first.oxck"));
        recent.add(QStringLiteral("/data/second.oxck")); // most recent first
        StartPage page(&recent);
        page.resize(800, 700);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        auto* list = page.findChild<QListWidget*>();
        QVERIFY(list);
        QCOMPARE(list->count(), 2);
        QSignalSpy open(&page, &StartPage::openRequested);

        const QRect second = list->visualItemRect(list->item(1));
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, second.center());
        QCOMPARE(open.count(), 1);
        QCOMPARE(open.takeFirst().first().toString(), QStringLiteral("/data/first.oxck"));

        // Enter on the current row opens it too.
        list->setFocus();
        list->setCurrentRow(0);
        QTest::keyClick(list, Qt::Key_Return);
        QCOMPARE(open.count(), 1);
        QCOMPARE(open.takeFirst().first().toString(), QStringLiteral("/data/second.oxck"));
    }

    void doubleClickOpensOnce() {
        RecentFiles recent;
        recent.clear();
        recent.add(QStringLiteral("/data/only.oxck"));
        StartPage page(&recent);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        auto* list = page.findChild<QListWidget*>();
        QSignalSpy open(&page, &StartPage::openRequested);
        const QPoint at = list->visualItemRect(list->item(0)).center();
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, at);
        QTest::mouseDClick(list->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(open.count(), 1);
    }

    void placeholderOpensNothing() {
        RecentFiles recent;
        recent.clear();
        StartPage page(&recent);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        auto* list = page.findChild<QListWidget*>();
        QCOMPARE(list->count(), 1); // "(none yet)"
        QSignalSpy open(&page, &StartPage::openRequested);
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                          list->visualItemRect(list->item(0)).center());
        QCOMPARE(open.count(), 0);
    }

    void entriesForFolderAndCompare() {
        RecentFiles recent;
        StartPage page(&recent);
        auto* folder = page.findChild<QPushButton*>(QStringLiteral("openFolder"));
        auto* compare = page.findChild<QPushButton*>(QStringLiteral("compareTwo"));
        QVERIFY(folder);
        QVERIFY(compare);
        QVERIFY(folder->text().contains(QStringLiteral("Folder")));
        QVERIFY(compare->text().contains(QStringLiteral("Compare")));
        QSignalSpy folderAsked(&page, &StartPage::openFolderRequested);
        QSignalSpy compareAsked(&page, &StartPage::compareRequested);
        QSignalSpy openAsked(&page, &StartPage::openDialogRequested);
        folder->click();
        QCOMPARE(folderAsked.count(), 1);
        QCOMPARE(compareAsked.count(), 0);
        compare->click();
        QCOMPARE(compareAsked.count(), 1);
        QCOMPARE(folderAsked.count(), 1);
        QCOMPARE(openAsked.count(), 0);
    }

    // In the main window: "Compare two checkpoints…" asks for A, then B (in
    // A's folder), and compares them; a cancelled question compares nothing.
    void compareEntryAsksForAThenB() {
        QTemporaryDir dir;
        const QString a = dir.filePath(QStringLiteral("a.oxck"));
        const QString b = dir.filePath(QStringLiteral("b.oxck"));
        ckptscope::Checkpoint ca, cb;
        ca.addTensor({"w", {2}, {1, 2}});
        cb.addTensor({"w", {2}, {1, 3}});
        ca.save(a.toStdString());
        cb.save(b.toStdString());
        QStringList asked, folders;
        QStringList answers{a, b};
        CompareLauncher::setFileChooser([&](QWidget*, const QString& title, const QString& folder) {
            asked << title;
            folders << folder;
            return answers.isEmpty() ? QString() : answers.takeFirst();
        });
        MainWindow main;
        main.show();
        auto* compare = main.findChild<QPushButton*>(QStringLiteral("compareTwo"));
        QVERIFY(compare && compare->isVisible());
        compare->click();
        CompareLauncher::setFileChooser({});
        QCOMPARE(asked.size(), 2);
        QVERIFY(asked[0].contains(QStringLiteral("A")));
        QVERIFY(asked[1].contains(QStringLiteral("a.oxck")));
        QCOMPARE(folders[1], dir.path());
        CompareWindow* window = nullptr;
        for (QWidget* top : QApplication::topLevelWidgets())
            if (auto* c = qobject_cast<CompareWindow*>(top); c && c->isVisible())
                window = c;
        QVERIFY(window);
        QCOMPARE(window->pathA(), a);
        QCOMPARE(window->pathB(), b);
        QSignalSpy done(window, &CompareWindow::comparisonFinished);
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 10000));
        window->close();

        // A cancelled at the first question: nothing more is asked.
        asked.clear();
        answers = {QString()};
        CompareLauncher::setFileChooser([&](QWidget*, const QString& title, const QString&) {
            asked << title;
            return answers.isEmpty() ? QString() : answers.takeFirst();
        });
        compare->click();
        CompareLauncher::setFileChooser({});
        QCOMPARE(asked.size(), 1);
        for (QWidget* top : QApplication::topLevelWidgets())
            QVERIFY(!qobject_cast<CompareWindow*>(top) || !top->isVisible());
    }

    // The start page names every format read, from the registry (issue 22,
    // defect 12): a new module appears by itself.
    void namesEveryFormat() {
        RecentFiles recent;
        StartPage page(&recent);
        auto* title = page.findChild<QLabel*>(QStringLiteral("startTitle"));
        QVERIFY(title);
        for (const ckptscope::FormatModule& m : ckptscope::formatModules())
            QVERIFY2(title->text().contains(QString::fromLatin1(m.description) + QLatin1Char('s')),
                     qPrintable(title->text()));
    }

    // "Open a training run folder…" is File ▸ Open Folder… itself.
    void folderEntryIsOpenFolder() {
        MainWindow main;
        main.show();
        QAction* openFolder = nullptr;
        for (QAction* a : main.findChildren<QAction*>())
            if (a->text() == MainWindow::tr("Open &Folder…"))
                openFolder = a;
        QVERIFY(openFolder);
        QSignalSpy triggered(openFolder, &QAction::triggered);
        // Its folder dialog is dismissed as soon as it shows.
        bool dialogSeen = false;
        QTimer poll;
        poll.setInterval(10);
        connect(&poll, &QTimer::timeout, this, [&] {
            if (auto* d = qobject_cast<QDialog*>(QApplication::activeModalWidget())) {
                dialogSeen = true;
                d->reject();
            }
        });
        poll.start();
        auto* folder = main.findChild<QPushButton*>(QStringLiteral("openFolder"));
        QVERIFY(folder && folder->isVisible());
        folder->click();
        poll.stop();
        QCOMPARE(triggered.count(), 1);
        QVERIFY(dialogSeen);
    }
};

QTEST_MAIN(TestStartPage)
#include "tst_startpage.moc"
