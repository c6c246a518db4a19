// A title holding a long tensor name: shown whole, wrapped inside the word,
// and never wider than the window gives it (a 300-character name widened the
// main window to 3 312 px).
#include "widgets/wrapanywherelabel.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QStandardPaths>
#include <QTest>
#include <QVBoxLayout>

class TestWrapAnywhereLabel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void longWordWrapsInsideTheWindow() {
        const QString name =
            QStringLiteral("long.") + QString(300, QLatin1Char('x')) + QStringLiteral(".end");
        QWidget window;
        auto* layout = new QVBoxLayout(&window);
        auto* label = new WrapAnywhereLabel;
        label->setTextFormat(Qt::PlainText);
        label->setText(name);
        layout->addWidget(label);
        layout->addStretch();
        window.resize(400, 300);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY2(window.minimumSizeHint().width() < 400,
                 qPrintable(QString::number(window.minimumSizeHint().width())));
        QCOMPARE(window.width(), 400);
        // Every character laid out: several lines, as tall as they need.
        const int oneLine = label->heightForWidth(100000);
        QVERIFY(label->height() >= 3 * oneLine);
        QCOMPARE(label->heightForWidth(label->width()), label->height());
        QCOMPARE(label->plainText(), name);
    }

    void richTextAndCopy() {
        QStandardPaths::setTestModeEnabled(true);
        WrapAnywhereLabel label;
        label.setTextFormat(Qt::RichText);
        label.setText(QStringLiteral("<b>a&lt;b</b> — changed<br>in B: x"));
        QCOMPARE(label.plainText(), QStringLiteral("a<b — changed\nin B: x"));
        QCOMPARE(label.actions().size(), 1);
        label.actions().first()->trigger();
        QCOMPARE(QApplication::clipboard()->text(), label.plainText());
    }
};

QTEST_MAIN(TestWrapAnywhereLabel)
#include "tst_wrapanywherelabel.moc"
