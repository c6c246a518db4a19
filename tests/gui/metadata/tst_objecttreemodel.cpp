// The Metadata tab's tree of values (ObjectTreeModel) over a hand-made
// checkpoint object: keys in file order, paths, shared and cyclic objects
// drawn once with link rows, a value as JSON, and a list of dicts as a
// table (objecttable).
#include "metadata/objecttable.h"
#include "metadata/objecttreemodel.h"
#include "objecttreebuilder.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/formats/objecttree.h"

#include <QAbstractItemModelTester>
#include <QStandardItemModel>
#include <QTest>

#include <nlohmann/json.hpp>

using namespace ckptscope;

namespace {

using Builder = testsupport::ObjectTreeBuilder;

// {"epoch": 3,
//  "optimizer": {"state": {0: {"step": T0, "exp_avg": T1}},
//                "param_groups": [{"lr": 1e-4, "betas": (0.9, 0.999), "params": [0]},
//                                 {"lr": 0.001, "weight_decay": 0.0, "params": [1, 2]}]},
//  "best": <the first param group again>,
//  "loop": L where L = [1, L]}
std::shared_ptr<ObjectTree> checkpointTree() {
    Builder b;
    const uint32_t state0 =
        b.container(ObjectKind::Dict, {b.str("step"), b.tensor(0), b.str("exp_avg"), b.tensor(1)});
    const uint32_t group0 = b.container(
        ObjectKind::Dict, {b.str("lr"), b.real(1e-4), b.str("betas"),
                           b.container(ObjectKind::Tuple, {b.real(0.9), b.real(0.999)}),
                           b.str("params"), b.container(ObjectKind::List, {b.integer(0)})});
    const uint32_t group1 =
        b.container(ObjectKind::Dict,
                    {b.str("lr"), b.real(0.001), b.str("weight_decay"), b.real(0.0),
                     b.str("params"), b.container(ObjectKind::List, {b.integer(1), b.integer(2)})});
    const uint32_t optimizer = b.container(
        ObjectKind::Dict, {b.str("state"), b.container(ObjectKind::Dict, {b.integer(0), state0}),
                           b.str("param_groups"), b.container(ObjectKind::List, {group0, group1})});
    const uint32_t loop = b.container(ObjectKind::List);
    b.tree.nodes[loop].items = {b.integer(1), loop};
    b.tree.root =
        b.container(ObjectKind::Dict, {b.str("epoch"), b.integer(3), b.str("optimizer"), optimizer,
                                       b.str("best"), group0, b.str("loop"), loop});
    return std::make_shared<ObjectTree>(std::move(b.tree));
}

QStringList keysUnder(const QAbstractItemModel& m, const QModelIndex& parent) {
    QStringList keys;
    for (int r = 0; r < m.rowCount(parent); ++r)
        keys << m.index(r, 0, parent).data().toString();
    return keys;
}

} // namespace

class TestObjectTreeModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rowsInFileOrderWithPaths() {
        ObjectTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTree(checkpointTree(), {"optimizer.state.0.step", "optimizer.state.0.exp_avg"});
        QCOMPARE(keysUnder(model, {}),
                 (QStringList{QStringLiteral("epoch"), QStringLiteral("optimizer"),
                              QStringLiteral("best"), QStringLiteral("loop")}));
        const QModelIndex epoch = model.index(0, ObjectTreeModel::Value);
        QCOMPARE(epoch.data().toString(), QStringLiteral("3"));
        QCOMPARE(epoch.siblingAtColumn(ObjectTreeModel::Type).data().toString(),
                 QStringLiteral("int"));
        const QModelIndex step = model.indexOfPath(QStringLiteral("optimizer.state.0.step"));
        QVERIFY(step.isValid());
        QCOMPARE(step.siblingAtColumn(ObjectTreeModel::Value).data().toString(),
                 QStringLiteral("tensor optimizer.state.0.step"));
        // An int key reads as Python's str() of it; its type is said.
        const QModelIndex zero = step.parent();
        QCOMPARE(zero.data().toString(), QStringLiteral("0"));
        QCOMPARE(zero.data(ObjectTreeModel::PathRole).toString(),
                 QStringLiteral("optimizer.state.0"));
        const QModelIndex betas =
            model.indexOfPath(QStringLiteral("optimizer.param_groups.0.betas"));
        QCOMPARE(betas.siblingAtColumn(ObjectTreeModel::Value).data().toString(),
                 QStringLiteral("tuple of 2 items"));
        QCOMPARE(model.index(1, ObjectTreeModel::Value, betas).data().toString(),
                 QStringLiteral("0.999"));
    }

    // Counts read as every count of the app does: grouped, the noun agreeing.
    void largeCountsAreGrouped() {
        Builder b;
        std::vector<uint32_t> items, pairs;
        for (int i = 0; i < 1500; ++i) {
            items.push_back(b.integer(i));
            pairs.push_back(b.str(std::to_string(i)));
            pairs.push_back(b.integer(i));
        }
        const uint32_t list = b.container(ObjectKind::List, items);
        const uint32_t dict = b.container(ObjectKind::Dict, pairs);
        const uint32_t one = b.container(ObjectKind::Dict, {b.str("k"), b.integer(1)});
        b.tree.root = b.container(ObjectKind::Dict,
                                  {b.str("list"), list, b.str("dict"), dict, b.str("one"), one});
        ObjectTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTree(std::make_shared<ObjectTree>(std::move(b.tree)), {});
        const auto value = [&](const char* path) {
            return model.indexOfPath(QString::fromLatin1(path))
                .siblingAtColumn(ObjectTreeModel::Value)
                .data()
                .toString();
        };
        QCOMPARE(value("list"), QStringLiteral("list of 1,500 items"));
        QCOMPARE(value("dict"), QStringLiteral("dict of 1,500 keys"));
        QCOMPARE(value("one"), QStringLiteral("dict of 1 key"));
    }

    void sharedAndCyclicObjectsAreLinks() {
        ObjectTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTree(checkpointTree(), {});
        // "best" is the first param group, drawn first under optimizer.
        const QModelIndex best = model.index(2, 0);
        QCOMPARE(best.data(ObjectTreeModel::LinkRole).toString(),
                 QStringLiteral("optimizer.param_groups.0"));
        QVERIFY(!model.hasChildren(best));
        QVERIFY(best.siblingAtColumn(ObjectTreeModel::Value)
                    .data()
                    .toString()
                    .contains(QStringLiteral("optimizer.param_groups.0")));
        const QModelIndex first = model.indexOfPath(QStringLiteral("optimizer.param_groups.0"));
        QVERIFY(first.isValid());
        QVERIFY(first.data(ObjectTreeModel::LinkRole).toString().isEmpty());
        QCOMPARE(model.rowCount(first), 3);
        // A list holding itself: its inner place links back, and the tree ends.
        const QModelIndex loop = model.index(3, 0);
        QCOMPARE(model.rowCount(loop), 2);
        QCOMPARE(model.index(1, 0, loop).data(ObjectTreeModel::LinkRole).toString(),
                 QStringLiteral("loop"));
        QVERIFY(!model.hasChildren(model.index(1, 0, loop)));
    }

    void valueAsJson() {
        ObjectTreeModel model;
        const auto tree = checkpointTree();
        model.setTree(tree, {});
        const QModelIndex groups = model.indexOfPath(QStringLiteral("optimizer.param_groups"));
        const auto got =
            nlohmann::json::parse(groups.data(ObjectTreeModel::JsonRole).toString().toStdString());
        QCOMPARE(got[0]["lr"].get<double>(), 1e-4);
        QCOMPARE(got[0]["betas"]["tuple"][1].get<double>(), 0.999);
        QVERIFY(got[1]["params"] == nlohmann::json::parse("[1, 2]"));
    }

    void listOfDictsAsTable() {
        ObjectTreeModel model;
        model.setTree(checkpointTree(), {});
        const QModelIndex groups = model.indexOfPath(QStringLiteral("optimizer.param_groups"));
        QVERIFY(objecttable::applies(&model, groups));
        QVERIFY(
            !objecttable::applies(&model, model.indexOfPath(QStringLiteral("optimizer.state"))));
        QVERIFY(!objecttable::applies(&model, model.index(0, 0))); // an int
        std::unique_ptr<QStandardItemModel> table(objecttable::tableOf(&model, groups));
        QAbstractItemModelTester tester(table.get(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(table->rowCount(), 2);
        QStringList columns;
        for (int c = 0; c < table->columnCount(); ++c)
            columns << table->horizontalHeaderItem(c)->text();
        QCOMPARE(columns, (QStringList{QStringLiteral("lr"), QStringLiteral("betas"),
                                       QStringLiteral("params"), QStringLiteral("weight_decay")}));
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("0.0001"));
        QCOMPARE(table->item(1, 3)->text(), QStringLiteral("0.0")); // Python's repr
        QVERIFY(!table->item(0, 3)); // the first group has no weight_decay
    }

    void bareValueIsOneRow() {
        auto tree = std::make_shared<ObjectTree>();
        ObjectNode t;
        t.kind = ObjectKind::Tensor;
        t.tensor = 0;
        tree->root = tree->add(t);
        ObjectTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTree(tree, {"tensor"});
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.index(0, ObjectTreeModel::Value).data().toString(),
                 QStringLiteral("tensor tensor"));
    }

    // A Trainer's arguments: an enum member (getattr(Class, 'NAME')) shown
    // by name, a credential ("hub_token") hidden on screen but copied whole,
    // an empty or None one shown as it is.
    void trainingArgumentsReadable() {
        Builder b;
        const uint32_t cls = b.tree.add([] {
            ObjectNode g;
            g.kind = ObjectKind::Global;
            g.text = "transformers.trainer_utils.IntervalStrategy";
            return g;
        }());
        ObjectNode enumMember;
        enumMember.kind = ObjectKind::Object;
        enumMember.text = "__builtin__.getattr";
        enumMember.items = {cls, b.str("STEPS")};
        const uint32_t member = b.tree.add(enumMember);
        ObjectNode device; // torch.device('cpu'), as a Trainer's _setup_devices
        device.kind = ObjectKind::Object;
        device.text = "torch.device";
        device.items = {b.str("cpu")};
        const uint32_t deviceNode = b.tree.add(device);
        b.tree.root =
            b.container(ObjectKind::Dict, {b.str("eval_strategy"), member, b.str("hub_token"),
                                           b.str("hf_secret123"), b.str("push_to_hub_token"),
                                           b.str(""), b.str("_setup_devices"), deviceNode});
        ObjectTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTree(std::make_shared<ObjectTree>(std::move(b.tree)), {});
        const auto value = [&](int row, int role) {
            return model.index(row, ObjectTreeModel::Value).data(role).toString();
        };
        QCOMPARE(value(0, Qt::DisplayRole), QStringLiteral("IntervalStrategy.STEPS"));
        QCOMPARE(model.index(0, ObjectTreeModel::Type).data().toString(), QStringLiteral("enum"));
        QCOMPARE(value(3, Qt::DisplayRole), QStringLiteral("torch.device('cpu')"));
        QVERIFY2(!value(1, Qt::DisplayRole).contains(QStringLiteral("secret")),
                 qPrintable(value(1, Qt::DisplayRole)));
        QVERIFY(value(1, Qt::DisplayRole).contains(QStringLiteral("hidden: 12 characters")));
        QVERIFY(!value(1, Qt::ToolTipRole).contains(QStringLiteral("secret")));
        QCOMPARE(value(1, Qt::EditRole), QStringLiteral("hf_secret123")); // Copy takes it
        QCOMPARE(value(2, Qt::DisplayRole), QString());
    }
};

QTEST_MAIN(TestObjectTreeModel)
#include "tst_objecttreemodel.moc"
