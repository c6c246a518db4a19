// The pickle machine over pickles the test writes opcode by opcode
// (support/picklewriter.h): every opcode of protocols 0-5 gives the value
// Python's unpickler would, a memo entry stays one shared value, classes are
// shown as objects and never called, a pickled nn.Module's tensors take its
// state_dict() names, big-endian storages read swapped, and what a file may
// not hold (extension codes, out-of-band buffers, unknown opcodes) is refused
// by name.
#include "picklewriter.h"
#include "testsupport.h"

#include "formats/objectsize.h"
#include "formats/pytorch/torchunpickler.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/diff/tensordiff.h"
#include "ckptscope/document/document.h"
#include "ckptscope/export/converter.h"
#include "ckptscope/export/csvwriter.h"
#include "ckptscope/export/npywriter.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/openerror.h"
#include "ckptscope/formats/pytorch/picklescan.h"
#include "ckptscope/stats/documentstats.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>

using namespace ckptscope;
using nlohmann::json;
using picklewriter::Pickle;

namespace {

// A LongStorage's bytes.
std::string longs(const std::vector<int64_t>& values) {
    return picklewriter::leBytes(values);
}

std::shared_ptr<const Document>
openPickle(const Pickle& p, const std::vector<std::pair<std::string, std::string>>& storages = {},
           const std::string& byteorder = {}) {
    const std::string zip = picklewriter::torchZip("archive", p.bytes, storages, byteorder);
    return Document::open(
        std::make_shared<MemorySource>(std::vector<uint8_t>(zip.begin(), zip.end()), "t.pt"));
}

json objects(const Document& doc) {
    std::vector<std::string> names;
    for (const TensorEntry& t : doc.tensors())
        names.push_back(t.name);
    std::string out;
    JsonStreamWriter w(out);
    writeObjectJson(w, doc.objects(), names);
    w.flush();
    return json::parse(out);
}

// Floats as a big-endian machine stores them.
std::string bigEndianFloats(std::initializer_list<float> values) {
    std::string be;
    for (float v : values) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        for (int i = 3; i >= 0; --i)
            be += char(uint8_t(bits >> (8 * i)));
    }
    return be;
}

std::string refusal(const Pickle& p) {
    try {
        openPickle(p);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(opened)";
}

} // namespace

class TestTorchUnpickler : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Protocol 0: text opcodes (INT, I01, LONG, FLOAT, STRING, UNICODE,
    // PUT/GET, DICT, LIST, TUPLE) as Python 2 wrote them.
    void protocol0Text() {
        Pickle p;
        p.raw("(dp0\nVa\np1\nI7\nsVt\np2\nI01\nsVbig\np3\nL123456789012345678901234567890L\n"
              "sVf\np4\nF0.25\nsVs\np5\nS'it\\'s'\np6\nsVu\np7\nVcaf\\u00e9\np8\n"
              "sVl\np9\n(lp10\nI1\naI-2\nasVagain\np11\ng10\nsVt2\n(I1\nI2\ntp12\ns.");
        const auto doc = openPickle(p);
        const json want = {{"a", 7},
                           {"t", true},
                           {"big", {{"int", "123456789012345678901234567890"}}},
                           {"f", 0.25},
                           {"s", "it's"},
                           {"u", "caf\xc3\xa9"},
                           {"l", {1, -2}},
                           {"again", {1, -2}},
                           {"t2", {{"tuple", {1, 2}}}}};
        QVERIFY2(objects(*doc) == want, objects(*doc).dump().c_str());
    }

    // Protocol 2's binary opcodes: integers of every width (LONG1 negative,
    // LONG4 past int64), floats, booleans, py2 strings, bytes, the tuple
    // shorthands, APPENDS / SETITEMS after a mark, memo by BINPUT and
    // LONG_BINPUT, DUP, POP and POP_MARK.
    void protocol2Binary() {
        Pickle p;
        p.proto(2).emptyDict().binput(0).mark();
        p.unicode("i").binint(-5).unicode("i1").binint1(200).unicode("i2").binint2(60000);
        p.unicode("neg").long1(std::string("\x00\xff", 2));                              // -256
        p.unicode("huge").long4(std::string("\x00\x00\x00\x00\x00\x00\x00\x00\x01", 9)); // 2^64
        p.unicode("x").binfloat(-0.0).unicode("yes").boolean(true).unicode("no").boolean(false);
        p.unicode("none").none();
        p.unicode("py2").shortBinstring("old").unicode("py2b").binstring("older");
        p.unicode("b").shortBinbytes(std::string("\x00\x01", 2)).unicode("b4").binbytes("xy");
        p.unicode("t1").binint1(1).op(uint8_t(0x85)).unicode("t3");
        p.binint1(1).binint1(2).binint1(3).op(uint8_t(0x87));
        p.unicode("list").emptyList().longBinput(1).mark().binint1(4).binint1(5).appends();
        p.unicode("same").longBinget(1);
        p.unicode("dup").binint1(9).op('2').op('0'); // DUP then POP: one 9 left
        p.mark().binint1(1).binint1(2).op('1');      // POP_MARK drops both
        p.setitems().stop();
        const auto doc = openPickle(p);
        const json want = {{"i", -5},
                           {"i1", 200},
                           {"i2", 60000},
                           {"neg", -256},
                           {"huge", {{"int", "18446744073709551616"}}},
                           {"x", -0.0},
                           {"yes", true},
                           {"no", false},
                           {"none", nullptr},
                           {"py2", "old"},
                           {"py2b", "older"},
                           {"b", {{"bytes_hex", "0001"}}},
                           {"b4", {{"bytes_hex", "7879"}}},
                           {"t1", {{"tuple", {1}}}},
                           {"t3", {{"tuple", {1, 2, 3}}}},
                           {"list", {4, 5}},
                           {"same", {4, 5}},
                           {"dup", 9}};
        QVERIFY2(objects(*doc) == want, objects(*doc).dump().c_str());
        const std::string text = objects(*doc).dump();
        QVERIFY(text.find("-0.0") != std::string::npos); // the sign of zero kept
    }

    // Protocols 4 and 5: FRAME, SHORT_BINUNICODE, STACK_GLOBAL, MEMOIZE,
    // sets (EMPTY_SET + ADDITEMS, FROZENSET), 8-byte lengths, BYTEARRAY8,
    // NEWOBJ and NEWOBJ_EX, BUILD: a class is an object, never called.
    void protocols4And5() {
        Pickle p;
        p.proto(5).frame(0).emptyDict().memoize().mark();
        p.shortUnicode("s")
            .op(uint8_t(0x8f))
            .memoize()
            .mark()
            .binint1(1)
            .binint1(2)
            .op(uint8_t(0x90));
        p.shortUnicode("fs").mark().binint1(3).op(uint8_t(0x91));
        p.shortUnicode("u8").unicode8("wide").shortUnicode("b8").binbytes8("z");
        p.shortUnicode("ba").bytearray8("q");
        p.shortUnicode("obj").stackGlobal("my.module", "Config").memoize().emptyTuple();
        p.op(uint8_t(0x81)).memoize().emptyDict().shortUnicode("lr").binfloat(0.5).op('s').build();
        p.shortUnicode("ex").stackGlobal("my.module", "Other").emptyTuple().emptyDict();
        p.shortUnicode("k").binint1(1).op('s').op(uint8_t(0x92));
        p.shortUnicode("again").op('h').le(1, 1); // memo 1: the set
        p.setitems().stop();
        const auto doc = openPickle(p);
        const json want = {
            {"s", {{"set", {1, 2}}}},
            {"fs", {{"frozenset", {3}}}},
            {"u8", "wide"},
            {"b8", {{"bytes_hex", "7a"}}},
            {"ba", {{"bytes_hex", "71"}}},
            {"obj",
             {{"object", "my.module.Config"}, {"args", json::array()}, {"state", {{"lr", 0.5}}}}},
            {"ex", {{"object", "my.module.Other"}, {"args", {{{"k", 1}}}}}},
            {"again", {{"set", {1, 2}}}}};
        QVERIFY2(objects(*doc) == want, objects(*doc).dump().c_str());
        bool unknown = false;
        for (const PickleImport& imp : doc->imports())
            unknown =
                unknown || (imp.name == "my.module.Config" && imp.risk == ImportRisk::Unknown);
        QVERIFY(unknown);
    }

    // Protocol 0/1 instances: INST and OBJ make objects with their arguments.
    void instAndObj() {
        Pickle p;
        p.proto(1).mark().unicode("a").mark().binint1(1).raw("iold\nPoint\n");
        p.unicode("b").mark().global("old", "Point").binint1(2).op('o').op('d').stop();
        const auto doc = openPickle(p);
        const json want = {{"a", {{"object", "old.Point"}, {"args", {1}}}},
                           {"b", {{"object", "old.Point"}, {"args", {2}}}}};
        QVERIFY2(objects(*doc) == want, objects(*doc).dump().c_str());
    }

    // A whole pickled nn.Module: its tensors take the names state_dict()
    // gives (parameters, persistent buffers, then submodules), a
    // non-persistent buffer left out, a nested tensor buffer by its parts.
    void pickledModuleNamesItsTensors() {
        const auto module = [](Pickle& p, const std::string& cls, auto params, auto buffers,
                               auto modules, const std::string& nonPersistent) {
            p.global("torch.nn.modules", cls).emptyTuple().op(uint8_t(0x81)).emptyDict().mark();
            p.unicode("training").boolean(true);
            p.unicode("_parameters").orderedDict().mark();
            params();
            p.setitems();
            p.unicode("_buffers").orderedDict().mark();
            buffers();
            p.setitems();
            p.unicode("_non_persistent_buffers_set").op(uint8_t(0x8f));
            if (!nonPersistent.empty())
                p.mark().unicode(nonPersistent).op(uint8_t(0x90));
            p.unicode("_modules").orderedDict().mark();
            modules();
            p.setitems();
            p.setitems().build();
        };
        Pickle p;
        p.proto(2);
        module(
            p, "Net", [&] { p.unicode("scale").tensor("0", "FloatStorage", 1, 0, {1}, {1}, true); },
            [&] {
                p.unicode("running_mean").tensor("1", "FloatStorage", 2, 0, {2}, {1});
                p.unicode("cache").tensor("2", "FloatStorage", 2, 0, {2}, {1});
                p.unicode("lengths").global("torch._utils", "_rebuild_nested_tensor").mark();
                p.tensor("4", "FloatStorage", 3, 0, {3}, {1});
                p.tensor("5", "LongStorage", 2, 0, {2, 1}, {1, 1});
                p.tensor("6", "LongStorage", 2, 0, {2, 1}, {1, 1});
                p.tensor("7", "LongStorage", 2, 0, {2}, {1});
                p.tuple().reduce();
            },
            [&] {
                p.unicode("fc");
                module(
                    p, "Linear",
                    [&] {
                        p.unicode("weight").tensor("3", "FloatStorage", 6, 0, {2, 3}, {3, 1});
                        p.unicode("bias").none();
                    },
                    [] {}, [] {}, "");
            },
            "cache");
        p.stop();
        const auto f = [](std::vector<float> v) { return picklewriter::leBytes(v); };
        const auto doc = openPickle(p, {{"0", f({2})},
                                        {"1", f({0, 1})},
                                        {"2", f({5, 5})},
                                        {"3", f({1, 2, 3, 4, 5, 6})},
                                        {"4", f({7, 8, 9})},
                                        {"5", longs({1, 2})},
                                        {"6", longs({1, 1})},
                                        {"7", longs({0, 1})}});
        std::vector<std::string> names;
        for (const TensorEntry& t : doc->tensors())
            names.push_back(t.name);
        QCOMPARE(names, (std::vector<std::string>{"scale", "running_mean", "lengths.buffer",
                                                  "lengths.sizes", "lengths.strides",
                                                  "lengths.storage_offsets", "fc.weight"}));
        std::vector<float> w(6), buffer(3);
        doc->readValues(2, 0, 3, buffer.data());
        QCOMPARE(buffer, (std::vector<float>{7, 8, 9}));
        doc->readValues(6, 0, 6, w.data());
        QCOMPARE(w, (std::vector<float>{1, 2, 3, 4, 5, 6}));
        QVERIFY(doc->traits()[0].requiresGrad);
    }

    // byteorder "big": storages written on a big-endian machine, swapped on
    // read (a strided view too).
    void bigEndianStoragesAreSwapped() {
        const std::string be = bigEndianFloats({1.5f, -2.0f, 3.25f, 4.0f});
        Pickle p;
        p.proto(2).emptyDict().mark();
        p.unicode("m").tensor("0", "FloatStorage", 4, 0, {2, 2}, {2, 1});
        p.unicode("col").tensor("0", "FloatStorage", 4, 1, {2}, {2});
        p.setitems().stop();
        const auto doc = openPickle(p, {{"0", be}}, "big");
        std::vector<float> m(4), col(2);
        doc->readValues(0, 0, 4, m.data());
        doc->readValues(1, 0, 2, col.data());
        QCOMPARE(m, (std::vector<float>{1.5f, -2.0f, 3.25f, 4.0f}));
        QCOMPARE(col, (std::vector<float>{-2.0f, 4.0f}));
    }

    // Storages are one per key, whatever the key: torch's "0", "1"… (kept
    // by number), a key named again (one storage, shared), "00" beside "0"
    // (another key), a number far past the storages seen, a key that is no
    // number. Each tensor reads its own record, wherever the archive puts it.
    void storageKeysIdentifyStorages() {
        const std::vector<std::string> keys = {"1", "0", "00", "4000000000", "x", "7", "1"};
        Pickle p;
        p.proto(2).emptyDict().mark();
        for (size_t i = 0; i < keys.size(); ++i)
            p.unicode("t" + std::to_string(i)).tensor(keys[i], "FloatStorage", 1, 0, {1}, {1});
        p.setitems().stop();
        std::vector<std::pair<std::string, std::string>> records;
        for (size_t i = 0; i + 1 < keys.size(); ++i) // "1" once: its record
            records.push_back(
                {keys[i], picklewriter::leBytes(std::vector<float>{float(i) + 0.5f})});
        // Records in another order than the pickle names them: the archive's
        // guess of the next record misses and must not be taken.
        std::swap(records[0], records[4]);
        const auto doc = openPickle(p, records);
        QCOMPARE(doc->tensors().size(), keys.size());
        QCOMPARE(doc->index().storages.size(), keys.size() - 1);
        for (size_t i = 0; i < keys.size(); ++i) {
            float v = 0;
            doc->readValues(i, 0, 1, &v);
            const size_t record = keys[i] == "1" ? 0 : i; // the last names "1" again
            QCOMPARE(v, float(record) + 0.5f);
        }
        const FormatIndex& index = doc->index();
        const auto storageOf = [&](size_t t) { return index.views[index.tensors[t].view].storage; };
        QCOMPARE(storageOf(6), storageOf(0)); // "1" again: t0's storage, shared
        for (size_t i = 1; i < 6; ++i)
            QVERIFY(storageOf(i) != storageOf(0));
    }

    // Through a cycle's shared values a walk can reach far deeper than the
    // open's depth check counts: lists T1…T499 made first, then Tj =
    // [Tj-1, (((Tj+1,),),…)] with 499 tuples between, so that from T1 a walk
    // goes 250 000 levels down. Under a dict the naming walk would recurse
    // that deep: the file is refused as too deep. A smaller ladder (10 lists,
    // 200 tuples: 2 000 levels, its paths a few MB) under an object's state,
    // which no name is taken from, opens, and its JSON stops at 1 000 levels
    // ({"too_deep": true}). Neither crashes a stack.
    void cycleLaddersStopAtTheDepthLimit() {
        const auto ladder = [&](Pickle& p, uint32_t k, int chain) {
            for (uint32_t j = k; j >= 1; --j)
                p.emptyList().longBinput(j).op('0');
            for (uint32_t j = 1; j <= k; ++j) {
                p.longBinget(j).mark();
                if (j > 1)
                    p.longBinget(j - 1);
                else
                    p.none();
                if (j < k)
                    p.longBinget(j + 1);
                else
                    p.none();
                for (int i = 0; i < chain; ++i)
                    p.op(uint8_t(0x85)); // TUPLE1
                p.appends().op('0');
            }
        };
        Pickle named;
        named.proto(2);
        ladder(named, 499, 499);
        named.emptyDict().unicode("root").longBinget(1).op('s').stop();
        const std::string why = refusal(named);
        QVERIFY2(why.find("too deep") != std::string::npos, why.c_str());

        Pickle held;
        held.proto(2);
        ladder(held, 10, 200);
        held.emptyDict().unicode("o").global("m", "C").emptyTuple().op(uint8_t(0x81));
        held.longBinget(1).build().op('s').stop();
        const auto doc = openPickle(held);
        const std::string text = objects(*doc).dump();
        QVERIFY(text.find("\"too_deep\":true") != std::string::npos);
        QVERIFY(text.size() < 1000000);
    }

    // The paths that name values are bounded in all: one 64 KiB key shared
    // by 100 nested dicts would make paths of 330 MB (6.4 MB the deepest).
    void sharedLongKeysAreRefused() {
        Pickle p;
        p.proto(2).unicode(std::string(65536, 'k')).longBinput(0).op('0');
        p.emptyDict();
        for (int i = 0; i < 100; ++i)
            p.longBinget(0).emptyDict();
        for (int i = 0; i < 100; ++i)
            p.op('s');
        p.stop();
        const std::string why = refusal(p);
        QVERIFY2(why.find("take more than 256 MiB") != std::string::npos,
                 why.substr(0, 300).c_str());
        // The same dicts as an object's state, which no tensor name is taken
        // from: the paths the JSON and the Metadata tab name values by.
        Pickle held;
        held.proto(2).unicode(std::string(65536, 'k')).longBinput(0).op('0');
        held.emptyDict().unicode("o").global("m", "C").emptyTuple().op(uint8_t(0x81));
        held.emptyDict();
        for (int i = 0; i < 100; ++i)
            held.longBinget(0).emptyDict();
        for (int i = 0; i < 100; ++i)
            held.op('s');
        held.build().op('s').stop();
        const std::string whyHeld = refusal(held);
        QVERIFY2(whyHeld.find("paths to the pickled object's values take more than 256 MiB") !=
                     std::string::npos,
                 whyHeld.substr(0, 300).c_str());
    }

    // One 64 KiB string passed 1 000 times as an unsafe call's argument:
    // the warning writes it out within its budget, then by reference (it was
    // 64 MB; with a 1 MB string 250 000 times, 250 GB).
    void longSharedTextsInAWarningAreReferences() {
        Pickle p;
        p.proto(2).global("posix", "system").unicode(std::string(65536, 'x')).longBinput(0);
        p.op('0').emptyList().mark();
        for (int i = 0; i < 1000; ++i)
            p.longBinget(0);
        p.appends().op(uint8_t(0x85)).reduce().stop();
        const auto doc = openPickle(p);
        size_t bytes = 0;
        for (const auto& w : doc->warnings())
            bytes += w.message.size();
        QVERIFY2(bytes > 65536 && bytes < 1500000, std::to_string(bytes).c_str());
        QVERIFY(doc->warnings()[0].message.find("{\"ref\": \"0\"}") != std::string::npos);
    }

    // 400 different unsafe globals, each called once with one shared 64 KiB
    // string (a 40 KB file): the warnings write the calls' arguments within
    // one budget for the file (CallArguments::kBytes, 16 MiB), then say the
    // rest are not written — not 26 MB, and 6 GB for 100 000 such calls.
    void manyCallsArgumentsStayWithinTheFilesBudget() {
        Pickle p;
        p.proto(2).unicode(std::string(65536, 'x')).longBinput(0).op('0').emptyList().mark();
        for (int i = 0; i < 400; ++i)
            p.global("os", "f" + std::to_string(i)).longBinget(0).op(uint8_t(0x85)).reduce();
        p.appends().stop();
        const auto doc = openPickle(p);
        size_t bytes = 0, written = 0, notWritten = 0;
        for (const auto& w : doc->warnings()) {
            bytes += w.message.size();
            written += w.message.find(" called with [\"xxxx") != std::string::npos;
            notWritten +=
                w.message.ends_with(" called 1 time " + std::string(CallArguments::kNotWritten));
        }
        QCOMPARE(doc->warnings().size(), size_t(400));
        QVERIFY2(bytes > CallArguments::kBytes &&
                     bytes < CallArguments::kBytes + 2 * 65536 + 400 * 128,
                 std::to_string(bytes).c_str());
        QCOMPARE(written,
                 size_t(CallArguments::kBytes / 65540 + 1)); // each call's text is 65 540 bytes
        QCOMPARE(written + notWritten, size_t(400));
        // The listing of `info --json` and `scan --json` the same way: every
        // call in it, the first ones with their arguments.
        const std::vector<std::string> names;
        CallArguments arguments(doc->objects(), names);
        size_t listed = 0, withArguments = 0;
        for (const PickleImport& imp : doc->imports())
            for (uint32_t c : imp.calls) {
                ++listed;
                withArguments += arguments.json(c).has_value();
            }
        QCOMPARE(listed, size_t(400));
        QCOMPARE(withArguments, written);
    }

    // A quantized tensor (torch.save of a quantized model's state dict): its
    // QInt8/QUInt8/QInt32 storage is a storage torch has (the file was
    // refused as "unknown storage type"). The tensor is listed with its
    // dtype (QINT8…), shape and quantizer parameters; its values are refused
    // by name (they need the scale), its stored integers read as stored. Over
    // a packed 4- or 2-bit storage it stays its rebuild call. The scheme is
    // data (no warning); the file's other tensors read as ever.
    void quantizedTensorsListed_data() {
        QTest::addColumn<QString>("storage");
        QTest::addColumn<QString>("dtype"); // empty: not listed
        QTest::newRow("qint8") << QStringLiteral("QInt8Storage") << QStringLiteral("QINT8");
        QTest::newRow("quint8") << QStringLiteral("QUInt8Storage") << QStringLiteral("QUINT8");
        QTest::newRow("qint32") << QStringLiteral("QInt32Storage") << QStringLiteral("QINT32");
        QTest::newRow("quint4x2") << QStringLiteral("QUInt4x2Storage") << QString();
        QTest::newRow("quint2x4") << QStringLiteral("QUInt2x4Storage") << QString();
    }
    void quantizedTensorsListed() {
        QFETCH(QString, storage);
        QFETCH(QString, dtype);
        Pickle p;
        p.proto(2).emptyDict().mark();
        p.unicode("q").global("torch._utils", "_rebuild_qtensor").mark();
        p.mark().unicode("storage").global("torch", storage.toStdString()).unicode("0");
        p.unicode("cpu").binint(4).tuple().op('Q');
        p.binint(0).mark().binint(2).binint(2).tuple().mark().binint(2).binint(1).tuple();
        p.mark().global("torch", "per_tensor_affine").binfloat(0.1).binint(3).tuple();
        p.boolean(false).orderedDict().tuple().reduce();
        p.unicode("plain").tensor("1", "FloatStorage", 2, 0, {2}, {1});
        p.setitems().stop();
        const std::string floats("\0\0\x80\x3f\0\0\0\x40", 8); // 1, 2
        const auto doc = openPickle(p, {{"0", std::string(16, '\x07')}, {"1", floats}});
        for (const auto& w : doc->warnings()) // the scheme and the storage are data
            QFAIL(w.message.c_str());
        const size_t plain = doc->tensors().size() - 1;
        QCOMPARE(doc->tensors()[plain].name, std::string("plain"));
        std::vector<float> two(2);
        doc->readValues(plain, 0, 2, two.data());
        QCOMPARE(two, (std::vector<float>{1.0f, 2.0f}));
        if (dtype.isEmpty()) {
            QCOMPARE(doc->tensors().size(), size_t(1));
            QCOMPARE(objects(*doc)["q"]["object"].get<std::string>(),
                     std::string("torch._utils._rebuild_qtensor"));
            return;
        }
        QCOMPARE(doc->tensors().size(), size_t(2));
        const TensorEntry& q = doc->tensors()[0];
        QCOMPARE(q.name, std::string("q"));
        QCOMPARE(QString::fromLatin1(dtypeName(q.dtype)), dtype);
        QCOMPARE(q.shape, (std::vector<uint64_t>{2, 2}));
        QCOMPARE(doc->traits()[0].quantization, std::string("(torch.per_tensor_affine, 0.1, 3)"));
        float f = 0;
        try {
            doc->readValues(0, 0, 1, &f);
            QFAIL("a quantized tensor's values were read");
        } catch (const CheckpointError& e) {
            QVERIFY2(std::string(e.what()).find("quantized") != std::string::npos, e.what());
        }
        std::vector<uint8_t> raw(dtypeSize(q.dtype) * 4);
        doc->readRawValues(0, 0, 4, raw.data());
        QVERIFY(std::all_of(raw.begin(), raw.end(), [](uint8_t b) { return b == 7; }));
        // diff compares the stored integers exactly (the scales are metadata).
        std::string other(16, '\x07');
        other[0] = '\x08';
        const auto changed = openPickle(p, {{"0", other}, {"1", floats}});
        DiffOptions o;
        const TensorDiff d = diffTensors(*doc, *changed, o);
        QCOMPARE(d.tensors.at(0).status, DiffStatus::Changed);
        QCOMPARE(d.tensors.at(0).elements->differing, uint64_t(1));
        QCOMPARE(*d.tensors.at(0).elements->maxAbsDiff, 1.0); // the low byte of the first code
    }

    // A meta tensor (a model saved while on the meta device) is listed with
    // its dtype and shape; it stores no values: reads are refused by name,
    // stats says why, convert leaves it out saying why, and a plain tensor
    // beside it reads as ever.
    void metaTensorsListed() {
        Pickle p;
        p.proto(2).emptyDict().mark();
        p.unicode("w").global("torch._utils", "_rebuild_meta_tensor_no_storage").mark();
        p.global("torch", "float16").mark().binint(2).binint(3).tuple();
        p.mark().binint(3).binint(1).tuple().boolean(true).tuple().reduce().binput(0);
        p.unicode("plain").tensor("1", "FloatStorage", 2, 0, {2}, {1});
        p.unicode("tied").binget(0); // the same meta tensor again
        p.setitems().stop();
        const std::string floats("\0\0\x80\x3f\0\0\0\x40", 8); // 1, 2
        const auto doc = openPickle(p, {{"1", floats}});
        for (const auto& w : doc->warnings()) // torch._utils' rebuild is data
            QFAIL(w.message.c_str());
        QCOMPARE(doc->tensors().size(), size_t(3));
        QCOMPARE(doc->tensors()[2].name, std::string("tied"));
        QCOMPARE(doc->traits()[2].sameAs, 0u);
        const TensorEntry& w = doc->tensors()[0];
        QCOMPARE(w.name, std::string("w"));
        QCOMPARE(w.dtype, Dtype::F16);
        QCOMPARE(w.shape, (std::vector<uint64_t>{2, 3}));
        QCOMPARE(w.dataLen, uint64_t(0));
        QCOMPARE(w.view, kNoView);
        QVERIFY(doc->traits()[0].meta);
        QVERIFY(doc->traits()[0].requiresGrad);
        QVERIFY(!doc->traits()[1].meta);
        QCOMPARE(doc->numParams(), uint64_t(6 + 2)); // the tied one counted once
        QCOMPARE(doc->totalBytes(), uint64_t(8));    // plain's: the meta tensor holds none
        float f = 0;
        try {
            doc->readValues(0, 0, 1, &f);
            QFAIL("a meta tensor's values were read");
        } catch (const CheckpointError& e) {
            QVERIFY2(std::string(e.what()).find("a meta tensor") != std::string::npos, e.what());
        }
        QVERIFY(std::string(statisticsNote(*doc, 0)).find("meta tensor") != std::string::npos);
        // Exported alone, it is refused (an empty array would pass for its values).
        for (int form = 0; form < 2; ++form) {
            try {
                std::ostringstream sink;
                if (form == 0)
                    writeNpy(sink, *doc, 0, npyLayout(*doc, 0));
                else
                    writeTensorCsv(sink, *doc, 0);
                QFAIL("a meta tensor was exported");
            } catch (const ExportError& e) {
                QVERIFY2(std::string(e.what()).find("\"w\": a meta tensor") != std::string::npos,
                         e.what());
            }
        }
        QCOMPARE(statisticsNote(*doc, 1), nullptr);
        std::vector<float> two(2);
        doc->readValues(1, 0, 2, two.data());
        QCOMPARE(two, (std::vector<float>{1.0f, 2.0f}));
        QTemporaryDir dir;
        const std::string out = dir.filePath(QStringLiteral("m.safetensors")).toStdString();
        const std::vector<std::string> warnings =
            convertDocument(*doc, ConvertTarget::Safetensors, out);
        QVERIFY(std::any_of(warnings.begin(), warnings.end(), [](const std::string& m) {
            return m.find("2 tensors left out (meta tensors") != std::string::npos &&
                   m.ends_with(": w, tied");
        }));
        const auto written = Document::open(out);
        QCOMPARE(written->tensors().size(), size_t(1));
        QCOMPARE(written->tensors()[0].name, std::string("plain"));
    }

    // A sparse tensor is listed by its parts, named as torch names them
    // (emb.indices, emb.values; for CSR crow_indices, col_indices, values),
    // each a dense tensor read as ever; the sparse tensor itself stays its
    // rebuild call in the object tree, with its layout and size.
    void sparseTensorsListedByTheirParts() {
        const auto sparse = [](Pickle& p, const char* fn, const char* layout) {
            p.global("torch._utils", fn).mark().global("torch", layout).mark();
        };
        const auto size = [](Pickle& p, int rows, int cols) {
            p.global("torch", "Size")
                .mark()
                .mark()
                .binint(rows)
                .binint(cols)
                .tuple()
                .tuple()
                .reduce();
        };
        Pickle p;
        p.proto(2).emptyDict().mark();
        p.unicode("emb");
        sparse(p, "_rebuild_sparse_tensor", "sparse_coo");
        p.tensor("0", "LongStorage", 4, 0, {2, 2}, {2, 1}); // indices [[0, 2], [1, 3]]
        p.tensor("1", "FloatStorage", 2, 0, {2}, {1});      // values [1.5, -2]
        size(p, 3, 4);
        p.boolean(false).tuple().tuple().reduce();
        p.unicode("m");
        sparse(p, "_rebuild_sparse_compressed_tensor", "sparse_csr");
        p.tensor("2", "LongStorage", 3, 0, {3}, {1});  // crow_indices [0, 1, 2]
        p.tensor("3", "LongStorage", 2, 0, {2}, {1});  // col_indices [1, 0]
        p.tensor("1", "FloatStorage", 2, 0, {2}, {1}); // values, the same storage
        size(p, 2, 2);
        p.tuple().tuple().reduce();
        p.setitems().stop();
        const std::string floats = picklewriter::leBytes(std::vector<float>{1.5f, -2.0f});
        const auto doc = openPickle(p, {{"0", longs({0, 2, 1, 3})},
                                        {"1", floats},
                                        {"2", longs({0, 1, 2})},
                                        {"3", longs({1, 0})}});
        std::vector<std::string> names;
        for (const TensorEntry& t : doc->tensors())
            names.push_back(t.name);
        QCOMPARE(names, (std::vector<std::string>{"emb.indices", "emb.values", "m.crow_indices",
                                                  "m.col_indices", "m.values"}));
        std::vector<double> indices(4), values(2);
        doc->readValues(0, 0, 4, indices.data());
        doc->readValues(1, 0, 2, values.data());
        QCOMPARE(indices, (std::vector<double>{0, 2, 1, 3}));
        QCOMPARE(values, (std::vector<double>{1.5, -2.0}));
        QCOMPARE(doc->tensors()[2].shape, (std::vector<uint64_t>{3}));
        const json o = objects(*doc);
        QCOMPARE(o["emb"]["object"].get<std::string>(),
                 std::string("torch._utils._rebuild_sparse_tensor"));
        QCOMPARE(o["emb"]["args"][1]["tuple"][1]["tensor"].get<std::string>(),
                 std::string("emb.values"));
        for (const auto& w : doc->warnings()) // layouts and rebuilds are data
            QFAIL(w.message.c_str());
    }

    // A nested tensor (torch.nested, strided layout) is listed by the parts
    // its rebuild call holds, named as its arguments are: the values' buffer
    // and each component's sizes, strides and offset into it.
    void nestedTensorsListedByTheirParts() {
        Pickle p;
        p.proto(2).emptyDict().mark();
        p.unicode("nt").global("torch._utils", "_rebuild_nested_tensor").mark();
        p.tensor("0", "FloatStorage", 5, 0, {5}, {1});      // buffer: [2] then [3]
        p.tensor("1", "LongStorage", 2, 0, {2, 1}, {1, 1}); // sizes [[2], [3]]
        p.tensor("2", "LongStorage", 2, 0, {2, 1}, {1, 1}); // strides [[1], [1]]
        p.tensor("3", "LongStorage", 2, 0, {2}, {1});       // storage_offsets [0, 2]
        p.tuple().reduce();
        p.setitems().stop();
        const std::string floats = picklewriter::leBytes(std::vector<float>{1, 2, 3, 4, 5});
        const auto doc = openPickle(
            p, {{"0", floats}, {"1", longs({2, 3})}, {"2", longs({1, 1})}, {"3", longs({0, 2})}});
        std::vector<std::string> names;
        for (const TensorEntry& t : doc->tensors())
            names.push_back(t.name);
        QCOMPARE(names, (std::vector<std::string>{"nt.buffer", "nt.sizes", "nt.strides",
                                                  "nt.storage_offsets"}));
        std::vector<double> buffer(5), offsets(2);
        doc->readValues(0, 0, 5, buffer.data());
        doc->readValues(3, 0, 2, offsets.data());
        QCOMPARE(buffer, (std::vector<double>{1, 2, 3, 4, 5}));
        QCOMPARE(offsets, (std::vector<double>{0, 2}));
        QCOMPARE(doc->tensors()[1].shape, (std::vector<uint64_t>{2, 1}));
        const json o = objects(*doc);
        QCOMPARE(o["nt"]["object"].get<std::string>(),
                 std::string("torch._utils._rebuild_nested_tensor"));
        QCOMPARE(o["nt"]["args"][0]["tensor"].get<std::string>(), std::string("nt.buffer"));
        for (const auto& w : doc->warnings())
            QFAIL(w.message.c_str());
    }

    // A big-endian complex storage is swapped part by part, as torch swaps
    // it (each float of a (real, imaginary) pair), never the pair whole;
    // complex values read as pairs, through a view too.
    void bigEndianComplexSwappedByPart() {
        const std::string be = bigEndianFloats({1.5f, -2.0f, 3.25f, 4.0f});
        Pickle p;
        p.proto(2).emptyDict().mark();
        p.unicode("z").tensor("0", "ComplexFloatStorage", 2, 0, {2}, {1});
        p.unicode("second").tensor("0", "ComplexFloatStorage", 2, 1, {1}, {1});
        p.setitems().stop();
        const auto doc = openPickle(p, {{"0", be}}, "big");
        std::vector<double> z(4), second(2);
        doc->readComplexValues(0, 0, 2, z.data());
        doc->readComplexValues(1, 0, 1, second.data());
        QCOMPARE(z, (std::vector<double>{1.5, -2.0, 3.25, 4.0}));
        QCOMPARE(second, (std::vector<double>{3.25, 4.0}));
        // Not one number each: the f32 reader refuses them by name.
        float f = 0;
        QVERIFY_THROWS_EXCEPTION(CheckpointError, doc->readValues(0, 0, 1, &f));
    }

    // torch >= 2.1 pickles a float8 or uint16 tensor as _rebuild_tensor_v3
    // over an UntypedStorage (its numel counted in bytes) with the dtype as
    // the seventh argument.
    void untypedStorageTakesTheV3Dtype() {
        const auto v3 = [](Pickle& p, const std::string& key, uint64_t bytes,
                           const std::string& dtype, uint64_t n) {
            p.global("torch._utils", "_rebuild_tensor_v3").mark();
            p.mark().unicode("storage").global("torch", "UntypedStorage").unicode(key);
            p.unicode("cpu").binint(int32_t(bytes)).tuple().op('Q');
            p.binint(0).mark().binint(int32_t(n)).tuple().mark().binint(1).tuple();
            p.boolean(false).orderedDict().global("torch", dtype).tuple().reduce();
        };
        Pickle p;
        p.proto(2).emptyDict().mark();
        p.unicode("f8");
        v3(p, "0", 4, "float8_e4m3fn", 4);
        p.unicode("u16");
        v3(p, "1", 4, "uint16", 2);
        p.setitems().stop();
        const auto doc = openPickle(p, {{"0", std::string("\x38\x40\xb8\x00", 4)},
                                        {"1", std::string("\x01\x00\xff\xff", 4)}});
        QCOMPARE(doc->tensors()[0].dtype, Dtype::F8E4M3);
        QCOMPARE(doc->tensors()[1].dtype, Dtype::U16);
        std::vector<float> f(4), u(2);
        doc->readValues(0, 0, 4, f.data());
        doc->readValues(1, 0, 2, u.data());
        QCOMPARE(f, (std::vector<float>{1.0f, 2.0f, -1.0f, 0.0f}));
        QCOMPARE(u, (std::vector<float>{1.0f, 65535.0f}));
        for (const PickleImport& imp : doc->imports())
            QVERIFY2(imp.risk == ImportRisk::Safe, imp.name.c_str());
    }

    // A pickle broken on purpose before its payload: evaluation stops at the
    // break, the scan reads on (opcodes walked, nothing run) and finds the
    // unsafe globals after it — by GLOBAL, and by STACK_GLOBAL of memoized
    // strings.
    void scanReadsPastADamagedSpot() {
        Pickle p;
        p.proto(4).op('0'); // POP of nothing: evaluation stops here
        p.global("os", "system").unicode("echo pwned").op(uint8_t(0x85)).reduce();
        p.shortUnicode("subprocess").memoize().shortUnicode("Popen").memoize().op(uint8_t(0x93));
        p.op(uint8_t(0xee)); // a byte that is no opcode: passed over
        p.binget(0).binget(1).op(uint8_t(0x93)).stop();
        const std::string zip = picklewriter::torchZip("archive", p.bytes, {});
        const PickleScan scan =
            scanPickle(MemorySource(std::vector<uint8_t>(zip.begin(), zip.end()), "broken.pt"));
        QVERIFY2(scan.error.find("stack underflow") != std::string::npos, scan.error.c_str());
        std::map<std::string, std::pair<ImportRisk, uint64_t>> found;
        for (const PickleImport& imp : scan.imports)
            found[imp.name] = {imp.risk, imp.count};
        QVERIFY(found.count("os.system") && found["os.system"].first == ImportRisk::Unsafe);
        QVERIFY(found.count("subprocess.Popen") &&
                found["subprocess.Popen"].first == ImportRisk::Unsafe);
        QCOMPARE(found["subprocess.Popen"].second, uint64_t(2)); // named twice
        bool said = false;
        for (const std::string& w : scan.warnings)
            said = said ||
                   (w.rfind("unsafe import os.system after the damaged spot at byte ", 0) == 0);
        QVERIFY(said);
    }

    // None, booleans, the empty tuple and the ints -5..256 are one node each
    // wherever the pickle makes them (Python keeps them once too); other
    // ints, and containers, are a node per value.
    void pythonsSingletonsAreOneNode() {
        Pickle p;
        p.proto(2).emptyList().mark().binint1(1).binint1(1).none().none().boolean(true);
        p.boolean(true).emptyTuple().emptyTuple().binint2(300).binint2(300).binint(-5);
        p.long1(std::string("\xfb", 1)).emptyList().emptyList().appends().stop();
        ObjectTree tree;
        pytorch::TorchUnpickler u(tree, "t.pkl");
        const uint32_t root = u.run(p.bytes, 0);
        const std::vector<uint32_t>& items = tree.at(root).items;
        QCOMPARE(items.size(), size_t(14));
        for (size_t i : {0, 2, 4, 6, 10})
            QCOMPARE(items[i], items[i + 1]); // 1, None, True, (), -5 as BININT and LONG1
        QVERIFY(items[8] != items[9]);        // 300
        QVERIFY(items[12] != items[13]);      // two lists
        QCOMPARE(tree.at(items[10]).integer, int64_t(-5));
        QVERIFY(tree.at(items[6]).kind == ObjectKind::Tuple);
        QVERIFY(tree.at(items[6]).items.empty());
        // Writes as before: each place in full.
        std::string out;
        JsonStreamWriter w(out);
        tree.root = root;
        writeObjectJson(w, tree, {});
        w.flush();
        const json want = json::parse(
            R"([1, 1, null, null, true, true, {"tuple": []}, {"tuple": []}, 300, 300, -5, -5, [], []])");
        QVERIFY2(json::parse(out) == want, out.c_str());
    }

    // The depth and expanded size the machine keeps as it makes nodes are
    // what the walks over the finished tree count, and are given up (the
    // walks run) where a value gains a child after another holds it.
    void keptFiguresMatchTheWalks_data() {
        QTest::addColumn<QByteArray>("pickle");
        QTest::addColumn<bool>("kept");
        const auto row = [](const char* tag, const Pickle& p, bool kept) {
            QTest::newRow(tag) << QByteArray::fromStdString(p.bytes) << kept;
        };
        Pickle flat;
        flat.proto(2).emptyDict().mark().unicode("a").binint1(1).unicode("b").binint1(2);
        row("flat dict", flat.setitems().stop(), true);
        Pickle nested; // the inner dict filled before the outer holds it
        nested.proto(2).emptyDict().mark().unicode("x").emptyDict().mark().unicode("y");
        nested.emptyList().mark().binint1(1).binint1(2).appends().setitems().setitems();
        row("nested", nested.stop(), true);
        Pickle shared; // one memoized tuple at two places
        shared.proto(2).mark().binint1(1).binint1(2).tuple().binput(0).op('0');
        row("shared", shared.emptyList().mark().binget(0).binget(0).appends().stop(), true);
        Pickle laughs; // ten lists of ten of the one below, seven levels: 10^7 values
        laughs.proto(2).binint1(7).binput(0).op('0');
        for (uint8_t level = 1; level <= 7; ++level) {
            laughs.emptyList().mark();
            for (int i = 0; i < 10; ++i)
                laughs.binget(uint8_t(level - 1));
            laughs.appends().binput(level).op('0');
        }
        row("billion laughs", laughs.binget(7).stop(), true);
        Pickle deep; // tuples 1 200 deep: past the limit, counted exactly
        deep.proto(2).binint1(1);
        for (int i = 0; i < 1200; ++i)
            deep.op(uint8_t(0x85));
        row("deep", deep.stop(), true);
        Pickle built;
        built.proto(2).global("m", "C").emptyTuple().reduce().emptyDict().mark().unicode("w");
        built.emptyList().setitems().build();
        row("build", built.stop(), true);
        Pickle items; // an object given dict items (defaultdict's SETITEMS)
        items.proto(2).global("collections", "defaultdict").emptyTuple().reduce().mark();
        items.unicode("k").emptyList().mark().binint1(1).appends().setitems();
        row("object's dict items", items.stop(), true);
        Pickle cycle; // l.append(l)
        row("cycle", cycle.proto(2).emptyList().binput(0).binget(0).op('a').stop(), false);
        Pickle late; // ([],) whose list gains 1 after the tuple holds it
        late.proto(2).emptyList().binput(0).op(uint8_t(0x85)).binput(1).op('0');
        late.binget(0).binint1(1).op('a').op('0').binget(1);
        row("filled after held", late.stop(), false);
        Pickle rebuilt; // BUILD twice: the first state no longer counts
        rebuilt.proto(2).global("m", "C").emptyTuple().reduce().emptyList().build();
        row("state replaced", rebuilt.binint1(1).build().stop(), false);
    }
    void keptFiguresMatchTheWalks() {
        QFETCH(QByteArray, pickle);
        QFETCH(bool, kept);
        ObjectTree tree;
        pytorch::TorchUnpickler u(tree, "t.pkl");
        const uint32_t root = u.run(pickle.toStdString(), 0);
        const std::optional<uint32_t> depth = u.depth();
        constexpr uint32_t kLimit = 1000;
        constexpr uint64_t kBudget = 1000000;
        const std::optional<uint64_t> size = u.expandedSize(root, kBudget);
        QCOMPARE(depth.has_value(), kept);
        QCOMPARE(size.has_value(), kept);
        if (!kept)
            return;
        const uint32_t walked = pytorch::objectDepth(tree, kLimit);
        QCOMPARE(std::min(*depth, kLimit + 1), std::min(walked, kLimit + 1));
        if (walked <= kLimit) // the size walk recurses: only within the limit
            QCOMPARE(*size, objectExpandedSize(tree, root, kBudget));
    }

    // What a file cannot hold, or no reader knows, is refused by name.
    void refusedByName_data() {
        QTest::addColumn<QByteArray>("pickle");
        QTest::addColumn<QString>("phrase");
        const auto row = [](const char* tag, const Pickle& p, const char* phrase) {
            QTest::newRow(tag) << QByteArray::fromStdString(p.bytes) << QString::fromLatin1(phrase);
        };
        row("ext1", Pickle().proto(2).op(uint8_t(0x82)).le(1, 1).stop(), "extension-registry");
        row("next-buffer", Pickle().proto(5).op(uint8_t(0x97)).stop(), "out-of-band buffer");
        row("unknown opcode", Pickle().proto(2).op(uint8_t(0xff)).stop(),
            "unknown pickle opcode 0xff");
        row("protocol 6", Pickle().proto(6).none().stop(), "pickle protocol 6");
        row("underflow", Pickle().proto(2).op('0').stop(), "stack underflow");
        row("mark missing", Pickle().proto(2).op('t').stop(), "mark missing");
        row("memo", Pickle().proto(2).binget(3).stop(), "memo 3 read before it is set");
        row("truncated", Pickle().proto(2).unicode("abc").raw("").le(0, 0), "truncated");
        row("long claim", Pickle().proto(2).op('X').le(1000000, 4).raw("ab"), "truncated");
        // Escapes Python's unpickler refuses (its escape decoders).
        row("bad \\x", Pickle().raw("S'a\\xZZ'\n."), "\\x escape of no two hex digits");
        row("bad \\u", Pickle().raw("Vcaf\\uZZ\n."), "escape of no hex code point");
        row("past U+10FFFF", Pickle().raw("V\\U00110000\n."), "escape of no hex code point");
    }
    void refusedByName() {
        QFETCH(QByteArray, pickle);
        QFETCH(QString, phrase);
        Pickle p;
        p.bytes = pickle.toStdString();
        const std::string why = refusal(p);
        QVERIFY2(why.find(phrase.toStdString()) != std::string::npos, why.c_str());
        QVERIFY2(why.rfind("t.pt", 0) == 0, why.c_str()); // names the file
    }
};

QTEST_GUILESS_MAIN(TestTorchUnpickler)
#include "tst_torchunpickler.moc"
