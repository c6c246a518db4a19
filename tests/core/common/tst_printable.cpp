// A file's text made readable as it is, for the CLI's lines and the GUI's
// labels (printable): what would break, hide or reorder a line is spelled
// as an escape; everything else, any script, stays as it is.
#include "ckptscope/common/printable.h"

#include <QTest>

#include <string>

using namespace ckptscope;

class TestPrintable : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void escapes_data() {
        QTest::addColumn<QByteArray>("in");
        QTest::addColumn<QByteArray>("out");
        QTest::addColumn<QByteArray>("keepingLines");
        const auto row = [](const char* name, const std::string& in, const char* out,
                            const char* lines) {
            QTest::newRow(name) << QByteArray::fromStdString(in) << QByteArray(out)
                                << QByteArray(lines);
        };
        row("plain", "model.layers.0.weight", "model.layers.0.weight", "model.layers.0.weight");
        row("other scripts", "重み.вес", "重み.вес", "重み.вес");
        row("newline and tab", "a\nb\tc", "a\\nb\\tc", "a\nb\tc");
        row("carriage return", "a\r\n", "a\\r\\n", "a\\r\n");
        row("backslash", "k\\n", "k\\\\n", "k\\\\n");
        row("C0 control", std::string("a\x01", 2), "a\\x01", "a\\x01");
        row("DEL", "a\x7f", "a\\x7f", "a\\x7f");
        row("invalid UTF-8", "a\xff\xc3", "a\\xff\\xc3", "a\\xff\\xc3");
        row("overlong", "\xc0\xaf", "\\xc0\\xaf", "\\xc0\\xaf");
        row("C1 control", "a\xc2\x85", "a\\u{0085}", "a\\u{0085}");
        row("right-to-left override",
            "bidi\xe2\x80\xae"
            "evil",
            "bidi\\u{202e}evil", "bidi\\u{202e}evil");
        row("isolate", "\xe2\x81\xa6x", "\\u{2066}x", "\\u{2066}x");
        row("zero-width space", "zero\xe2\x80\x8bwidth", "zero\\u{200b}width",
            "zero\\u{200b}width");
        row("right-to-left mark", "\xe2\x80\x8f", "\\u{200f}", "\\u{200f}");
        row("line separator",
            "a\xe2\x80\xa8"
            "b",
            "a\\u{2028}b", "a\\u{2028}b");
        row("word joiner", "\xe2\x81\xa0", "\\u{2060}", "\\u{2060}");
        row("byte order mark", "\xef\xbb\xbfk", "\\u{feff}k", "\\u{feff}k");
        row("arabic letter mark", "\xd8\x9c", "\\u{061c}", "\\u{061c}");
        row("NBSP kept",
            "a\xc2\xa0"
            "b",
            "a\xc2\xa0"
            "b",
            "a\xc2\xa0"
            "b");
        row("emoji kept", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");
    }

    void escapes() {
        QFETCH(QByteArray, in);
        QFETCH(QByteArray, out);
        QFETCH(QByteArray, keepingLines);
        QCOMPARE(QByteArray::fromStdString(printable(in.toStdString())), out);
        QCOMPARE(QByteArray::fromStdString(printable(in.toStdString(), true)), keepingLines);
    }

    // The check a caller makes before converting agrees with printable()
    // over every code point of the Basic Multilingual Plane.
    void escapedCodePointsAgree() {
        for (uint32_t cp = 0; cp < 0x10000; ++cp) {
            if (cp >= 0xD800 && cp <= 0xDFFF)
                continue; // surrogates: no UTF-8 of their own
            std::string utf8;
            if (cp < 0x80) {
                utf8 += char(cp);
            } else if (cp < 0x800) {
                utf8 += char(0xC0 | (cp >> 6));
                utf8 += char(0x80 | (cp & 0x3F));
            } else {
                utf8 += char(0xE0 | (cp >> 12));
                utf8 += char(0x80 | ((cp >> 6) & 0x3F));
                utf8 += char(0x80 | (cp & 0x3F));
            }
            for (bool keepLines : {false, true})
                QVERIFY2(escapedByPrintable(cp, keepLines) != (printable(utf8, keepLines) == utf8),
                         qPrintable(QString::number(cp, 16)));
        }
    }

    void utf8Sequences() {
        QCOMPARE(utf8Length("a", 0), size_t(1));
        QCOMPARE(utf8Length("\xc3\xa9", 0), size_t(2));
        QCOMPARE(utf8Length("\xc3", 0), size_t(0));             // cut
        QCOMPARE(utf8Length("\xed\xa0\x80", 0), size_t(0));     // a surrogate
        QCOMPARE(utf8Length("\xf4\x90\x80\x80", 0), size_t(0)); // past U+10FFFF
        QCOMPARE(codePoint("\xe2\x80\xae", 0, 3), uint32_t(0x202E));
        QCOMPARE(codePoint("\xf0\x9f\x98\x80", 0, 4), uint32_t(0x1F600));
    }
};

QTEST_APPLESS_MAIN(TestPrintable)
#include "tst_printable.moc"
