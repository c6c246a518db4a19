#include "recentfiles.h"
#include "startpage.h"

#include <QApplication>
#include <QListWidget>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

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
};

QTEST_MAIN(TestStartPage)
#include "tst_startpage.moc"
