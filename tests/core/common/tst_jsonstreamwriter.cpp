// JSON written without a DOM (JsonStreamWriter, appendJsonString): the same
// text nlohmann's dump(2) writes for the same value, strings escaped as it
// escapes them, bytes that are not UTF-8 replaced by U+FFFD as it replaces
// them (the text always parses), a part written one level deep reads as a member of a
// larger object, and a stream hands out the same text in chunks.
#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/common/jsonstring.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <limits>
#include <random>
#include <sstream>
#include <string>

using namespace ckptscope;
using nlohmann::ordered_json;

namespace {

std::string jsonString(std::string_view s) {
    std::string out;
    appendJsonString(out, s);
    return out;
}

// A value with every kind the writer has, written by it.
void writeSample(JsonStreamWriter& w) {
    w.beginObject();
    w.key("name");
    w.value("layers.0.wq");
    w.key("shape");
    w.beginArray();
    w.value(uint64_t(4096));
    w.value(uint64_t(128));
    w.endArray();
    w.key("offset");
    w.value(int64_t(-3));
    w.key("mean");
    w.number(0.25);
    w.key("std");
    w.null();
    w.key("ok");
    w.value(true);
    w.key("empty");
    w.beginArray();
    w.endArray();
    w.key("nested");
    w.beginObject();
    w.key("k");
    w.value("v");
    w.key("bytes");
    w.byteArray({1, 200, 30});
    w.key("counts");
    w.uintArray({0, UINT64_MAX, 7});
    w.key("no_counts");
    w.uintArray({});
    w.key("lo");
    w.dumpNumber(100000.0);
    w.endObject();
    w.endObject();
}

ordered_json sample() {
    return {{"name", "layers.0.wq"},
            {"shape", {4096, 128}},
            {"offset", -3},
            {"mean", 0.25},
            {"std", nullptr},
            {"ok", true},
            {"empty", ordered_json::array()},
            {"nested",
             {{"k", "v"},
              {"bytes", {1, 200, 30}},
              {"counts", {uint64_t(0), UINT64_MAX, uint64_t(7)}},
              {"no_counts", ordered_json::array()},
              {"lo", 100000.0}}}};
}

} // namespace

class TestJsonStreamWriter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void layoutIsNlohmanns() {
        std::string text;
        JsonStreamWriter w(text);
        writeSample(w);
        w.flush();
        QCOMPARE(QString::fromStdString(text), QString::fromStdString(sample().dump(2)));
    }

    // A part written with nestIn(1) spliced after `"key": ` in a top-level
    // object gives the text nlohmann writes for the whole.
    void nestedPartReadsAsAMember() {
        std::string part;
        JsonStreamWriter w(part);
        w.nestIn(1);
        writeSample(w);
        w.flush();
        const std::string whole = "{\n  \"before\": 1,\n  \"part\": " + part + "\n}";
        const ordered_json want = {{"before", 1}, {"part", sample()}};
        QCOMPARE(QString::fromStdString(whole), QString::fromStdString(want.dump(2)));
    }

    // Streamed to an ostream in chunks: the same text as written whole.
    void streamedInChunks() {
        std::string whole;
        std::ostringstream streamed;
        {
            JsonStreamWriter a(whole), b(streamed);
            for (JsonStreamWriter* w : {&a, &b}) {
                w->beginArray();
                for (int i = 0; i < 200000; ++i) { // ~2 MB: past one chunk
                    w->value(uint64_t(i));
                    w->chunkDone();
                }
                w->endArray();
                w->flush();
            }
        }
        QVERIFY(whole.size() > (size_t(1) << 20));
        QVERIFY(streamed.str() == whole);
    }

    // dumpNumber spells a double as nlohmann's dump() does (where
    // number() and floatNumber() choose the shorter of fixed and
    // exponent: "1e+05"); a streamed `stats --json` reads as its DOM did.
    void dumpNumberIsNlohmanns() {
        const double values[] = {0.0,
                                 -0.0,
                                 3.0,
                                 0.1,
                                 100000.0,
                                 1e15,
                                 1.5e15,
                                 1e16,
                                 1e-4,
                                 1e-5,
                                 -2.5e-300,
                                 5e-324,
                                 1e300,
                                 1.7976931348623157e308,
                                 123456789.0,
                                 0.2 + 0.1,
                                 -1.0927478450015031,
                                 8.683855889499507e-05};
        for (const double v : values) {
            std::string text;
            JsonStreamWriter w(text);
            w.dumpNumber(v);
            w.flush();
            QCOMPARE(QString::fromStdString(text), QString::fromStdString(ordered_json(v).dump()));
        }
        for (const double v :
             {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
              -std::numeric_limits<double>::infinity()}) {
            std::string text;
            JsonStreamWriter w(text);
            w.dumpNumber(v);
            w.flush();
            QCOMPARE(QString::fromStdString(text), QStringLiteral("null"));
        }
    }

    void escapes_data() {
        QTest::addColumn<QByteArray>("in");
        QTest::addColumn<QByteArray>("out");
        const auto row = [](const char* tag, const std::string& in, const std::string& out) {
            QTest::newRow(tag) << QByteArray::fromStdString(in) << QByteArray::fromStdString(out);
        };
        row("plain", "model.embed", "\"model.embed\"");
        row("quote and backslash", "a\"b\\c", "\"a\\\"b\\\\c\"");
        row("named controls", "\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
        row("other controls", std::string("\x01\x1f", 2), "\"\\u0001\\u001f\"");
        row("NUL", std::string("a\0b", 3), "\"a\\u0000b\"");
        row("DEL stays", "\x7f", "\"\x7f\"");
        row("UTF-8 stays", "重み.вес😀", "\"重み.вес😀\"");
        // A stray byte, or a sequence cut short, becomes one U+FFFD; the
        // rest stays.
        row("stray byte", "a\xffz", "\"a\xEF\xBF\xBDz\"");
        row("cut sequence", "a\xe6\x97", "\"a\xEF\xBF\xBD\"");
        row("cut sequence, then more", "a\xe6\x97z\xf0\x9f\x98.",
            "\"a\xEF\xBF\xBDz\xEF\xBF\xBD.\"");
        row("cut, then a new lead", "\xe6\xe6\x97\xa5", "\"\xEF\xBF\xBD\xE6\x97\xA5\"");
        row("lone continuation", "\x80x", "\"\xEF\xBF\xBDx\"");
        row("overlong", "\xc0\xaf", "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
        row("surrogate", "\xed\xa0\x80", "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
        row("past U+10FFFF", "\xf4\x90\x80\x80",
            "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
        row("bad then good", "\xff\xc3\xa9", "\"\xEF\xBF\xBD\xC3\xA9\"");
    }
    // Byte strings made of the bytes where UTF-8 decoders differ (leads
    // with narrowed second bytes, continuations, bytes no character
    // uses): each spelled as nlohmann's dump(replace) spells it.
    void anyBytesReplacedAsNlohmannDoes() {
        const unsigned char alphabet[] = {'a',  0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf,
                                          0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee,
                                          0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff};
        std::mt19937 rng(5);
        for (int k = 0; k < 20000; ++k) {
            std::string in(rng() % 9, '\0');
            for (char& c : in)
                c = char(alphabet[rng() % sizeof alphabet]);
            const std::string theirs =
                ordered_json(in).dump(-1, ' ', false, ordered_json::error_handler_t::replace);
            const std::string got = jsonString(in);
            if (got != theirs)
                QFAIL(qPrintable(
                    QStringLiteral("%1: %2 against nlohmann's %3")
                        .arg(QString::fromLatin1(QByteArray::fromStdString(in).toHex()),
                             QString::fromLatin1(QByteArray::fromStdString(got).toHex()),
                             QString::fromLatin1(QByteArray::fromStdString(theirs).toHex()))));
        }
    }

    void escapes() {
        QFETCH(QByteArray, in);
        QFETCH(QByteArray, out);
        const std::string got = jsonString(in.toStdString());
        QCOMPARE(QByteArray::fromStdString(got), out);
        // Always valid JSON, and what nlohmann writes (replacing as it does):
        // a streamed output and a dumped part spell a name the same.
        const ordered_json parsed = ordered_json::parse(got, nullptr, false);
        QVERIFY(!parsed.is_discarded());
        const ordered_json s = in.toStdString();
        const std::string theirs = s.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
        QCOMPARE(QByteArray::fromStdString(got), QByteArray::fromStdString(theirs));
    }
};

QTEST_GUILESS_MAIN(TestJsonStreamWriter)
#include "tst_jsonstreamwriter.moc"
