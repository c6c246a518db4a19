#include "common/plaintext.h"
#include "guisupport.h"

#include <QTest>

class TestPlainText : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Whatever the text, a tooltip shows it exactly: HTML-looking text is
    // escaped once, text Qt shows as plain is left as it is.
    void toolTipShowsTextExactly_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("plain") << QStringLiteral("layers.0.weight");
        QTest::newRow("tags") << QStringLiteral("<b>bold</b> & <i>x</i>");
        QTest::newRow("entities") << QStringLiteral("&quot;q&quot; &amp; &lt;");
        QTest::newRow("quotes") << QStringLiteral("\"a\" 'b' <c>");
        QTest::newRow("lines") << QStringLiteral("<p>one</p>\nsecond <br> line");
        QTest::newRow("spaces") << QStringLiteral("<b>a   b</b>");
        QTest::newRow("html doc") << QStringLiteral("<html><body>x</body></html>");
    }
    void toolTipShowsTextExactly() {
        QFETCH(QString, text);
        QCOMPARE(guisupport::shownText(plainToolTip(text)), text);
        if (!Qt::mightBeRichText(text))
            QCOMPARE(plainToolTip(text), text);
        QCOMPARE(guisupport::shownText(plainToHtml(text), Qt::RichText), text);
    }
};

QTEST_MAIN(TestPlainText)
#include "tst_plaintext.moc"
