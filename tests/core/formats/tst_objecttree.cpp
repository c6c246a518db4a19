// The object tree of structured metadata and its JSON rendering (the PyTorch
// corpus's `objects`): every kind of value, keys that are not strings,
// shared nodes written in full, cycles and oversized expansions as refs.
#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/formats/objecttree.h"
#include "objecttreebuilder.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <tuple>
#include <vector>

using namespace ckptscope;
using nlohmann::json;

namespace {

struct Builder : testsupport::ObjectTreeBuilder {
    json render(const std::vector<std::string>& names = {}, uint64_t budget = 1000000,
                bool* refs = nullptr) {
        std::string out;
        JsonStreamWriter w(out);
        const bool wrote = writeObjectJson(w, tree, names, budget);
        if (refs)
            *refs = wrote;
        return json::parse(out);
    }
};

} // namespace

class TstObjectTree : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A node's items: up to two in place, more on the heap, each way copied,
    // moved, appended to (from a view of themselves too) and compared as a
    // vector is.
    void itemsBehaveAsAVector() {
        for (uint32_t n : {0u, 1u, 2u, 3u, 1000u}) {
            std::vector<uint32_t> want;
            ObjectItems items;
            for (uint32_t i = 0; i < n; ++i) {
                items.push_back(i * 7);
                want.push_back(i * 7);
            }
            QCOMPARE(items.size(), want.size());
            QVERIFY(std::equal(items.begin(), items.end(), want.begin(), want.end()));
            const ObjectItems copy = items;
            QVERIFY(copy == items);
            ObjectItems moved = std::move(items);
            QVERIFY(moved == copy);
            QVERIFY(items.empty()); // NOLINT(bugprone-use-after-move): moved-from is empty
            items = moved;          // reusable after a move
            QVERIFY(items == copy);
            moved.append(moved); // a view of itself: copied before it grows
            want.insert(want.end(), want.begin(), want.end());
            QVERIFY(std::vector<uint32_t>(moved) == want);
            QVERIFY(std::span<const uint32_t>(moved).size() == want.size());
            moved = copy;
            QVERIFY(moved == copy);
            if (n > 0) {
                QCOMPARE(moved.at(n - 1), (n - 1) * 7);
                QVERIFY_THROWS_EXCEPTION(std::out_of_range, moved.at(n));
            }
        }
        const ObjectItems listed = {4, 5, 6};
        QVERIFY(std::vector<uint32_t>(listed) == (std::vector<uint32_t>{4, 5, 6}));
        QVERIFY(!(listed == ObjectItems{4, 5}));
    }

    void everyKindOfValue() {
        Builder b;
        const uint32_t big = b.text(ObjectKind::BigInt, "18446744073709551616");
        const uint32_t bytes = b.text(ObjectKind::Bytes, std::string("ab\0\xff", 4));
        const uint32_t floats =
            b.container(ObjectKind::List, {b.real(0.1), b.real(-0.0), b.real(std::nan("")),
                                           b.real(std::numeric_limits<double>::infinity()),
                                           b.real(-std::numeric_limits<double>::infinity())});
        const uint32_t dtype = b.text(ObjectKind::Global, "torch.float16");
        ObjectNode size;
        size.kind = ObjectKind::Object;
        size.text = "torch.Size";
        size.items = {b.container(ObjectKind::Tuple, {b.integer(32), b.integer(16)})};
        const uint32_t sizeNode = b.tree.add(size);
        b.tree.root = b.container(
            ObjectKind::Dict,
            {b.str("none"),   b.none(),
             b.str("flag"),   b.boolean(true),
             b.str("big"),    big,
             b.str("min"),    b.integer(std::numeric_limits<int64_t>::min()),
             b.str("floats"), floats,
             b.str("text"),   b.str("caf\xc3\xa9\n\tq"),
             b.str("bytes"),  bytes,
             b.str("set"),    b.container(ObjectKind::Set, {b.integer(1), b.integer(2)}),
             b.str("frozen"), b.container(ObjectKind::FrozenSet, {}),
             b.str("tuple"),  b.container(ObjectKind::Tuple, {}),
             b.str("weight"), b.tensor(0),
             b.str("dtype"),  dtype,
             b.str("size"),   sizeNode});
        const json got = b.render({"model.weight"});
        const json want = json::parse(R"({
            "none": null, "flag": true, "big": {"int": "18446744073709551616"},
            "min": -9223372036854775808,
            "floats": [0.1, -0.0, "nan", "inf", "-inf"],
            "text": "café\n\tq", "bytes": {"bytes_hex": "616200ff"},
            "set": {"set": [1, 2]}, "frozen": {"frozenset": []}, "tuple": {"tuple": []},
            "weight": {"tensor": "model.weight"}, "dtype": {"global": "torch.float16"},
            "size": {"object": "torch.Size", "args": [{"tuple": [32, 16]}]}})");
        QCOMPARE(QString::fromStdString(got.dump()), QString::fromStdString(want.dump()));
        // -0.0 keeps its sign (JSON numbers compare equal to 0).
        QVERIFY(std::signbit(got["floats"][1].get<double>()));
    }

    void keysThatAreNotStrings() {
        Builder b;
        const uint32_t key = b.container(ObjectKind::Tuple, {b.integer(1), b.str("a")});
        b.tree.root =
            b.container(ObjectKind::Dict,
                        {b.integer(0), b.str("zero"), b.none(), b.integer(1), b.boolean(true),
                         b.integer(2), b.str("s"), b.integer(3), b.real(1e-05), b.integer(4),
                         b.real(1e16), b.integer(5), b.real(2.0), b.integer(6), key, b.integer(7)});
        // Python's repr picks double quotes for a string holding a single one.
        const uint32_t quoted = b.container(ObjectKind::Tuple, {b.str("a'b")});
        QCOMPARE(QString::fromStdString(objectKeyText(b.tree, quoted)),
                 QStringLiteral("(\"a'b\",)"));
        const json got = b.render();
        // Built here, not parsed from a raw string: a key ending in ")" would
        // end one.
        json dict = json::object(), types = json::object();
        for (const auto& [k, v, t] :
             std::vector<std::tuple<std::string, json, std::string>>{{"0", "zero", "int"},
                                                                     {"None", 1, "None"},
                                                                     {"True", 2, "bool"},
                                                                     {"s", 3, ""},
                                                                     {"1e-05", 4, "float"},
                                                                     {"1e+16", 5, "float"},
                                                                     {"2.0", 6, "float"},
                                                                     {"(1, 'a')", 7, "tuple"}}) {
            dict[k] = v;
            if (!t.empty())
                types[k] = t;
        }
        const json want = {{"dict", dict}, {"key_types", types}};
        QCOMPARE(QString::fromStdString(got.dump()), QString::fromStdString(want.dump()));
    }

    // The repr of a key made of shared values is bounded: a tuple holding
    // the one below twice, 60 levels down, would be 2^60 parts (a fuzzed
    // pickle's key hung the reader). The text starts as Python's and ends
    // in "..." past 64 KiB; every kind of container on the way.
    void keyReprIsBounded() {
        Builder b;
        uint32_t v = b.str("x");
        for (int i = 0; i < 60; ++i) {
            const ObjectKind kinds[] = {ObjectKind::Tuple, ObjectKind::List, ObjectKind::Set,
                                        ObjectKind::FrozenSet, ObjectKind::Dict};
            v = b.container(kinds[i % 5], {v, v});
        }
        const std::string text = objectKeyText(b.tree, v);
        QVERIFY2(text.size() > 64 * 1024 && text.size() < 64 * 1024 + 4096,
                 std::to_string(text.size()).c_str());
        QVERIFY2(text.starts_with("{frozenset({{[({frozenset({{[({"), text.substr(0, 40).c_str());
        QVERIFY(text.find("...") != std::string::npos);
        // Small keys are whole: sets, frozensets, dicts and objects as Python writes them.
        const uint32_t obj = b.text(ObjectKind::Object, "m.C");
        b.tree.nodes[obj].items = {b.integer(1)};
        const uint32_t key = b.container(
            ObjectKind::Tuple, {b.container(ObjectKind::Set), b.container(ObjectKind::FrozenSet),
                                b.container(ObjectKind::FrozenSet, {b.integer(2)}),
                                b.container(ObjectKind::Dict, {b.str("k"), b.none()}), obj});
        QCOMPARE(QString::fromStdString(objectKeyText(b.tree, key)),
                 QStringLiteral("(set(), frozenset(), frozenset({2}), {'k': None}, m.C(1))"));
    }

    // The count made before writing (the expanded size) falls short when
    // shared values meet a cycle: R = [p, D], p = [v, x], v = [p], D ten
    // doublings of tuples over v. Counted about 4 000 nodes, so written out;
    // in full it would be 1 024 copies of x's 1 000 items. Counted as
    // written, past the budget later places are references.
    void budgetCountedAsWritten() {
        Builder b;
        std::vector<uint32_t> leaves;
        for (int i = 0; i < 1000; ++i)
            leaves.push_back(b.integer(100000 + i));
        const uint32_t x = b.container(ObjectKind::List, leaves);
        const uint32_t p = b.container(ObjectKind::List);
        const uint32_t v = b.container(ObjectKind::List, {p});
        b.tree.nodes[p].items = {v, x};
        uint32_t d = v;
        for (int i = 0; i < 10; ++i)
            d = b.container(ObjectKind::Tuple, {d, d});
        b.tree.root = b.container(ObjectKind::List, {p, d});
        std::string out;
        JsonStreamWriter w(out);
        QVERIFY(writeObjectJson(w, b.tree, {}, 10000));
        w.flush();
        // x's last item, once per copy of x written: about budget / 1 000.
        size_t copies = 0;
        for (size_t at = out.find("100999"); at != std::string::npos;
             at = out.find("100999", at + 1))
            ++copies;
        QVERIFY2(copies >= 1 && copies <= 12, std::to_string(copies).c_str());
        const json got = json::parse(out);
        QCOMPARE(got[0][1].size(), size_t(1000)); // x written out at its first place
    }

    // A long text (over 1 KiB) shared at many places is written out while
    // the output stays within the budget (its bytes 64 to a node), then as
    // a reference, as a value with children is; a short one always in full.
    void longSharedTextsAreReferences() {
        Builder b;
        const uint32_t text = b.str(std::string(100000, 't'));
        const uint32_t word = b.str("short");
        std::vector<uint32_t> items;
        for (int i = 0; i < 50; ++i) {
            items.push_back(text);
            items.push_back(word);
        }
        b.tree.root = b.container(ObjectKind::List, items);
        std::string out;
        JsonStreamWriter w(out);
        QVERIFY(writeObjectJson(w, b.tree, {}, 10000));
        w.flush();
        const json got = json::parse(out);
        size_t full = 0, refs = 0;
        for (size_t i = 0; i < got.size(); i += 2) {
            full += got[i].is_string();
            refs += got[i].is_object() && got[i].value("ref", std::string()) == "0";
            QVERIFY(got[i + 1] == "short");
        }
        QVERIFY2(full >= 1 && full <= 8 && full + refs == 50,
                 (std::to_string(full) + " " + std::to_string(refs)).c_str());
    }

    void objectWithStateAndItems() {
        Builder b;
        ObjectNode getattr;
        getattr.kind = ObjectKind::Object;
        getattr.text = "__builtin__.getattr";
        getattr.items = {b.text(ObjectKind::Global, "builtins.os"), b.str("system")};
        ObjectNode call;
        call.kind = ObjectKind::Call;
        call.callee = b.tree.add(getattr);
        call.items = {b.str("echo pwned")};
        ObjectNode scaler;
        scaler.kind = ObjectKind::Object;
        scaler.text = "deepspeed.runtime.fp16.loss_scaler.DynamicLossScaler";
        scaler.state = b.container(ObjectKind::Dict, {b.str("cur_scale"), b.real(65536.0)});
        scaler.listItems = b.container(ObjectKind::List, {b.integer(1)});
        b.tree.root = b.container(ObjectKind::List, {b.tree.add(call), b.tree.add(scaler)});
        const json want = json::parse(R"([
            {"call": {"object": "__builtin__.getattr", "args": [{"global": "builtins.os"}, "system"]},
             "args": ["echo pwned"]},
            {"object": "deepspeed.runtime.fp16.loss_scaler.DynamicLossScaler", "args": [],
             "state": {"cur_scale": 65536.0}, "listitems": [1]}])");
        QCOMPARE(QString::fromStdString(b.render().dump()), QString::fromStdString(want.dump()));
    }

    void sharedNodeWrittenInFull() {
        // The same tuple reached twice (a pickle's memo): written at both
        // places, as torch.load gives it, and no reference.
        Builder b;
        const uint32_t shared = b.container(ObjectKind::Tuple, {b.tensor(0), b.none()});
        b.tree.root = b.container(ObjectKind::Tuple, {shared, b.str("label"), shared});
        bool refs = true;
        const json got = b.render({"0"}, 1000000, &refs);
        QVERIFY(!refs);
        QVERIFY(got["tuple"][0] == got["tuple"][2]);
        QCOMPARE(got["tuple"][2]["tuple"][0]["tensor"].get<std::string>(), std::string("0"));
    }

    void cycleIsAReference() {
        Builder b;
        const uint32_t inner = b.container(ObjectKind::List, {});
        b.tree.root = b.container(ObjectKind::Dict, {b.str("a"), inner});
        b.tree.nodes[inner].items = {b.integer(1), inner}; // a = [1, a]
        bool refs = false;
        const json got = b.render({}, 1000000, &refs);
        QVERIFY(refs);
        QCOMPARE(QString::fromStdString(got.dump()), QStringLiteral(R"({"a":[1,{"ref":"a"}]})"));
    }

    void expansionPastTheBudgetUsesReferences() {
        // Billion laughs in small: each level holds the one below ten times;
        // fully written it would have about 10^6 nodes.
        Builder b;
        uint32_t level = b.str("lol");
        for (int i = 0; i < 6; ++i)
            level = b.container(ObjectKind::List, std::vector<uint32_t>(10, level));
        b.tree.root = level;
        bool refs = false;
        const json small = b.render({}, 1000, &refs);
        QVERIFY(refs);
        QCOMPARE(small[0][0][0][0][0][0].get<std::string>(), std::string("lol"));
        QCOMPARE(small[1]["ref"].get<std::string>(), std::string("0"));
        QCOMPARE(small[0][1]["ref"].get<std::string>(), std::string("0.0"));
        QVERIFY(small.dump().size() < 2000);
        // Within the budget the same tree is written out whole.
        const json whole = b.render({}, 2000000, &refs);
        QVERIFY(!refs);
        QCOMPARE(whole[9][9][9][9][9][9].get<std::string>(), std::string("lol"));
    }

    void findByKey() {
        Builder b;
        const uint32_t groups = b.container(ObjectKind::List, {});
        b.tree.root =
            b.container(ObjectKind::Dict, {b.integer(0), b.none(), b.str("param_groups"), groups});
        QCOMPARE(b.tree.find(b.tree.root, "param_groups"), groups);
        QCOMPARE(b.tree.find(b.tree.root, "0"), kNoNode); // an int key is not the string "0"
        QCOMPARE(b.tree.find(groups, "x"), kNoNode);
    }

    void emptyTreeIsNull() {
        Builder b;
        QVERIFY(b.render().is_null());
    }
};

QTEST_APPLESS_MAIN(TstObjectTree)
#include "tst_objecttree.moc"
