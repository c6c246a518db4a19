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

    // A long text is shown by its first characters and its length, cut at a
    // character's end; a short one whole; a byte that is not UTF-8 shows as
    // \xNN either way, as shownText writes it, never as U+FFFD.
    void excerptsKeepCharactersAndBytes_data() {
        QTest::addColumn<std::string>("text");
        QTest::addColumn<QString>("shown");
        QTest::newRow("short") << std::string("os.system") << QStringLiteral("os.system");
        QTest::newRow("long") << std::string("abcdefghijk")
                              << QStringLiteral("abcdefghi… (11 characters)");
        QTest::newRow("two-byte") << std::string("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                                                 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9")
                                  << QStringLiteral("ééééééééé… (10 characters)");
        QTest::newRow("not UTF-8")
            << std::string("os\xff.system(1)") << QStringLiteral("os\\xff.syste… (13 characters)");
        QTest::newRow("not UTF-8, short") << std::string("os\xff.f") << QStringLiteral("os\\xff.f");
    }
    void excerptsKeepCharactersAndBytes() {
        QFETCH(std::string, text);
        QFETCH(QString, shown);
        QCOMPARE(shownExcerpt(text, 9), shown);
    }
};

QTEST_MAIN(TestPlainText)
#include "tst_plaintext.moc"
