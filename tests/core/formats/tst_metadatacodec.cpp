#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/oxck/metadatacodec.h"

#include <QTest>

using namespace ckptscope;

class TestMetadataCodec : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void serializeSortsKeysAndEscapesOnlyQuoteAndBackslash() {
        const Metadata m{{"z", "last"}, {"a", "x\"y\\z\nnew\tline"}};
        QCOMPARE(serializeMetadata(m),
                 std::string("{\"a\":\"x\\\"y\\\\z\nnew\tline\",\"z\":\"last\"}"));
        QCOMPARE(serializeMetadata({}), std::string("{}"));
    }
    void roundTrip() {
        const Metadata m{{"", "empty key"},
                         {"k", ""},
                         {"uni", "Größe 学習率 🚀"},
                         {"q\"k", "back\\slash \"quoted\"\r\n"}};
        QCOMPARE(parseMetadata(serializeMetadata(m), "f", 0), m);
    }
    void acceptsWhitespaceCommasAndEmpty() {
        QVERIFY(parseMetadata("", "f", 0).empty());
        QVERIFY(parseMetadata("  {}  ", "f", 0).empty());
        const Metadata m = parseMetadata(" { \"a\" : \"1\" ,, \n \"b\":\"2\", } ", "f", 0);
        QCOMPARE(m.size(), size_t(2));
        QCOMPARE(m.at("b"), std::string("2"));
    }
    void laterKeyWins() {
        QCOMPARE(parseMetadata("{\"a\":\"1\",\"a\":\"2\"}", "f", 0).at("a"), std::string("2"));
    }
    void knownEscapes() {
        QCOMPARE(parseMetadata("{\"a\":\"\\\"\\\\\\n\\r\\t\"}", "f", 0).at("a"),
                 std::string("\"\\\n\r\t"));
    }
    void rejects_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<int>("offset"); // byte of the fault within the text
        QTest::newRow("unicode escape") << QByteArray("{\"a\":\"\\u0041\"}") << 6;
        QTest::newRow("slash escape") << QByteArray("{\"a\":\"\\/\"}") << 6;
        QTest::newRow("number value") << QByteArray("{\"a\":1}") << 5;
        QTest::newRow("nested") << QByteArray("{\"a\":{\"b\":\"c\"}}") << 5;
        QTest::newRow("array") << QByteArray("[1,2]") << 0;
        QTest::newRow("missing brace") << QByteArray("{\"a\":\"b\"") << 8;
        QTest::newRow("unterminated") << QByteArray("{\"a\":\"b") << 7;
        QTest::newRow("trailing") << QByteArray("{} x") << 3;
        QTest::newRow("bad utf8") << QByteArray("{\"a\":\"\xff\"}") << 6;
        QTest::newRow("overlong utf8") << QByteArray("{\"a\":\"\xc0\xaf\"}") << 6;
        QTest::newRow("surrogate") << QByteArray("{\"a\":\"\xed\xa0\x80\"}") << 6;
    }
    void rejects() {
        QFETCH(QByteArray, text);
        QFETCH(int, offset);
        try {
            parseMetadata(std::string_view(text.constData(), size_t(text.size())), "m.oxck", 28);
            QFAIL("accepted invalid metadata");
        } catch (const CheckpointError& e) {
            const std::string msg = e.what();
            QVERIFY2(msg.rfind("m.oxck: metadata at byte ", 0) == 0, e.what());
            QCOMPARE(e.offset().value(), uint64_t(28 + offset));
        }
    }
};

QTEST_APPLESS_MAIN(TestMetadataCodec)
#include "tst_metadatacodec.moc"
