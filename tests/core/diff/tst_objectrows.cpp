// diff's rows of a tree of values (diff/objectrows.h): one per leaf keyed by
// its path, objects named by class, shared and cyclic objects as one
// reference row, so two checkpoints' trees compare path by path.
#include "diff/objectrows.h"
#include "objecttreebuilder.h"

#include <QTest>

#include <map>

using namespace ckptscope;

namespace {

using Builder = testsupport::ObjectTreeBuilder;

std::map<std::string, std::pair<std::string, std::string>>
byKey(const std::vector<MetadataRow>& rows) {
    std::map<std::string, std::pair<std::string, std::string>> out;
    for (const MetadataRow& r : rows)
        out[r.key] = {r.value, r.type};
    return out;
}

} // namespace

class TestObjectRows : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void leavesByPath() {
        Builder b;
        const uint32_t tensor = b.tensor(0);
        const uint32_t group = b.container(
            ObjectKind::Dict, {b.str("lr"), b.real(1e-4), b.str("betas"),
                               b.container(ObjectKind::Tuple, {b.real(0.9), b.real(0.999)})});
        ObjectNode scaler;
        scaler.kind = ObjectKind::Object;
        scaler.text = "deepspeed.runtime.fp16.loss_scaler.DynamicLossScaler";
        scaler.state = b.container(ObjectKind::Dict, {b.str("cur_scale"), b.real(65536.0)});
        const uint32_t loop = b.container(ObjectKind::List);
        b.tree.nodes[loop].items = {b.integer(1), loop};
        b.tree.root = b.container(ObjectKind::Dict,
                                  {b.str("epoch"), b.integer(3), b.integer(0), tensor,
                                   b.str("groups"), b.container(ObjectKind::List, {group, group}),
                                   b.str("scaler"), b.tree.add(scaler), b.str("empty"),
                                   b.container(ObjectKind::Dict), b.str("loop"), loop});
        const auto rows = byKey(objectRows(b.tree));
        using P = std::pair<std::string, std::string>;
        QVERIFY(rows.at("epoch") == P("3", "int"));
        QVERIFY(!rows.count("0")); // a tensor is compared as a tensor, not as a row
        QVERIFY(rows.at("groups.0.lr") == P("0.0001", "float"));
        QVERIFY(rows.at("groups.0.betas.1") == P("0.999", "float"));
        QVERIFY(rows.at("groups.1") == P("→ groups.0", "reference")); // the memo's second place
        QVERIFY(!rows.count("groups.1.lr"));
        QVERIFY(rows.at("scaler") ==
                P("deepspeed.runtime.fp16.loss_scaler.DynamicLossScaler", "class"));
        QVERIFY(rows.at("scaler.state.cur_scale") == P("65536.0", "float"));
        QVERIFY(rows.at("empty") == P("{}", "dict"));
        QVERIFY(rows.at("loop.0") == P("1", "int"));
        QVERIFY(rows.at("loop.1") == P("→ loop", "reference"));
    }

    void anIntAndAFloatDifferInType() {
        // 1 and 1.0 print differently and have different types: diff's
        // comparison of rows (value, then type) sees the change.
        Builder a, b;
        a.tree.root = a.container(ObjectKind::Dict, {a.str("step"), a.integer(1)});
        b.tree.root = b.container(ObjectKind::Dict, {b.str("step"), b.real(1.0)});
        const auto ra = objectRows(a.tree), rb = objectRows(b.tree);
        QCOMPARE(ra.size(), size_t(1));
        QCOMPARE(QString::fromStdString(ra[0].key), QStringLiteral("step"));
        QVERIFY(ra[0].value != rb[0].value || ra[0].type != rb[0].type);
        QCOMPARE(QString::fromStdString(rb[0].type), QStringLiteral("float"));
    }

    void hugeSharingStaysSmall() {
        // Ten levels, each holding the one below ten times: 10^10 places
        // when expanded, a few rows here.
        Builder b;
        uint32_t level = b.str("lol");
        for (int i = 0; i < 10; ++i)
            level = b.container(ObjectKind::List, std::vector<uint32_t>(10, level));
        b.tree.root = level;
        const auto rows = objectRows(b.tree);
        QVERIFY2(rows.size() < 200, qPrintable(QString::number(rows.size())));
    }
};

QTEST_APPLESS_MAIN(TestObjectRows)
#include "tst_objectrows.moc"
