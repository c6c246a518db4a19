// The compare tree: groups from names split on '.' and '/' in natural order,
// each with the worst status below it, how many tensors differ, the largest
// figures and the sums; the filter proxy keeping the groups above matches
// and sorting groups by their largest figure. Under QAbstractItemModelTester.
#include "compare/comparefilterproxy.h"
#include "compare/comparetensormodel.h"

#include "ckptscope/common/numberformat.h"

#include <QAbstractItemModelTester>
#include <QTest>

using namespace ckptscope;

namespace {

TensorDiffEntry tensor(const std::string& name, DiffStatus status,
                       std::optional<double> relL2 = std::nullopt,
                       std::optional<double> maxAbs = std::nullopt, uint64_t differing = 0,
                       uint64_t count = 0) {
    TensorDiffEntry e;
    e.name = name;
    e.status = status;
    e.shapeA = e.shapeB = std::vector<uint64_t>{count};
    if (status == DiffStatus::Same || status == DiffStatus::Changed) {
        ElementDiff el;
        el.relL2 = relL2;
        el.maxAbsDiff = maxAbs;
        el.differing = differing;
        el.count = count;
        e.elements = el;
    }
    return e;
}

std::shared_ptr<TensorDiff> sampleDiff() {
    auto d = std::make_shared<TensorDiff>();
    d->tensors = {
        tensor("layers.10.w", DiffStatus::Changed, 0.5, 2.0, 7, 10),
        tensor("layers.2.w", DiffStatus::Changed, 0.25, 3.0, 4, 10),
        tensor("layers.2.b", DiffStatus::Same, 0.0, 0.0, 0, 5),
        tensor("layers.3/b", DiffStatus::Same, 0.0, 0.0, 0, 5),
        tensor("head.w", DiffStatus::Removed),
        tensor("head.b", DiffStatus::Changed, 0.125, 1.0, 1, 3),
        tensor("step", DiffStatus::Same, 0.0, 0.0, 0, 1),
    };
    return d;
}

QStringList names(std::initializer_list<const char*> list) {
    QStringList out;
    for (const char* n : list)
        out << QString::fromUtf8(n);
    return out;
}

QModelIndex child(const QAbstractItemModel* m, std::initializer_list<const char*> path,
                  int column = 0) {
    QModelIndex at;
    for (const QString& label : names(path)) {
        QModelIndex found;
        for (int r = 0; r < m->rowCount(at); ++r)
            if (m->index(r, 0, at).data().toString() == label)
                found = m->index(r, 0, at);
        if (!found.isValid())
            return {};
        at = found;
    }
    return at.siblingAtColumn(column);
}

QStringList labels(const QAbstractItemModel* m, const QModelIndex& parent = {}) {
    QStringList out;
    for (int r = 0; r < m->rowCount(parent); ++r)
        out << m->index(r, 0, parent).data().toString();
    return out;
}

// The sample diff behind the filter proxy, both under the tester.
struct Sorted {
    CompareTensorModel model;
    CompareFilterProxy proxy;
    QAbstractItemModelTester tester{&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest};
    Sorted() {
        proxy.setSourceModel(&model);
        model.setDiff(sampleDiff());
    }
};

} // namespace

class TestCompareTensorModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void groupsShowTheWorstStatusAndCounts() {
        CompareTensorModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        m.setDiff(sampleDiff());
        QCOMPARE(m.tensorCount(), 7);
        // Natural order: layers.2 before layers.10; '/' splits as '.' does.
        QCOMPARE(labels(&m), names({"head", "layers", "step"}));
        QCOMPARE(labels(&m, child(&m, {"layers"})), names({"2", "3", "10"}));
        QCOMPARE(labels(&m, child(&m, {"layers", "2"})), names({"b", "w"}));
        QCOMPARE(child(&m, {"layers", "3", "b"}).data(CompareTensorModel::TensorIndexRole).toInt(),
                 3);
        QCOMPARE(child(&m, {"layers", "3"}).data(CompareTensorModel::FullNameRole).toString(),
                 QStringLiteral("layers.3"));

        // head: removed outranks changed; layers: changed; layers.3: same.
        const auto statusOf = [&](std::initializer_list<const char*> path) {
            return DiffStatus(child(&m, path).data(CompareTensorModel::StatusRole).toInt());
        };
        QCOMPARE(statusOf({"head"}), DiffStatus::Removed);
        QCOMPARE(statusOf({"layers"}), DiffStatus::Changed);
        QCOMPARE(statusOf({"layers", "3"}), DiffStatus::Same);
        const QModelIndex layersStatus = child(&m, {"layers"}, CompareTensorModel::Status);
        QCOMPARE(layersStatus.data().toString(), QStringLiteral("2 of 4 differ"));
        QCOMPARE(layersStatus.data(Qt::ForegroundRole).value<QColor>(),
                 CompareTensorModel::statusColor(DiffStatus::Changed));
        QCOMPARE(layersStatus.data(Qt::ToolTipRole).toString(),
                 QStringLiteral("2 changed, 2 same"));
        QVERIFY(!layersStatus.data(Qt::DecorationRole).value<QIcon>().isNull());
        QCOMPARE(child(&m, {"head"}, CompareTensorModel::Status)
                     .data(Qt::ForegroundRole)
                     .value<QColor>(),
                 CompareTensorModel::statusColor(DiffStatus::Removed));
        QCOMPARE(child(&m, {"layers", "3"}, CompareTensorModel::Status).data().toString(),
                 CompareTensorModel::statusText(DiffStatus::Same));

        // Largest figures and sums below a group.
        QCOMPARE(child(&m, {"layers"}, CompareTensorModel::RelL2).data().toString(),
                 QString::fromStdString(fmt::display(0.5)));
        QCOMPARE(child(&m, {"layers"}, CompareTensorModel::MaxAbsDiff)
                     .data(CompareTensorModel::SortRole)
                     .toDouble(),
                 3.0);
        QCOMPARE(child(&m, {"layers"}, CompareTensorModel::Differing).data().toString(),
                 QStringLiteral("11"));
        QCOMPARE(child(&m, {"layers"}, CompareTensorModel::Count).data().toString(),
                 QStringLiteral("30"));
        QCOMPARE(child(&m, {"head"}, CompareTensorModel::Count).data().toString(),
                 QStringLiteral("3")); // the removed tensor compared nothing
        // A tensor: its own figures and its label.
        const QModelIndex w10 = m.indexOfTensor(0, CompareTensorModel::RelL2);
        QCOMPARE(w10.data().toString(), QString::fromStdString(fmt::display(0.5)));
        QCOMPARE(m.indexOfTensor(0).data().toString(), QStringLiteral("w"));
        QCOMPARE(m.indexOfTensor(0).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("layers.10.w"));
        QVERIFY(!m.indexOfTensor(99).isValid());
        QVERIFY(!m.entry(-1));

        m.setDiff(nullptr);
        QCOMPARE(m.rowCount(), 0);
        QCOMPARE(m.tensorCount(), 0);
    }

    void filtersKeepTheGroupsAboveMatches() {
        Sorted f;
        CompareFilterProxy& proxy = f.proxy;
        proxy.setDifferencesOnly(true);
        QCOMPARE(labels(&proxy), names({"head", "layers"})); // step is the same
        QCOMPARE(labels(&proxy, child(&proxy, {"layers"})), names({"2", "10"}));
        QCOMPARE(labels(&proxy, child(&proxy, {"layers", "2"})), names({"w"}));
        // The name filter matches full names, case-insensitively.
        proxy.setFilterFixedString(QStringLiteral("2.W"));
        QCOMPARE(labels(&proxy), names({"layers"}));
        QCOMPARE(labels(&proxy, child(&proxy, {"layers"})), names({"2"}));
        QCOMPARE(labels(&proxy, child(&proxy, {"layers", "2"})), names({"w"}));
        // Both at once: a same tensor that matches the name stays hidden.
        proxy.setFilterFixedString(QStringLiteral("3/b"));
        QCOMPARE(proxy.rowCount(), 0);
        proxy.setDifferencesOnly(false);
        QCOMPARE(labels(&proxy, child(&proxy, {"layers", "3"})), names({"b"}));
        proxy.setFilterFixedString(QString());
        QCOMPARE(labels(&proxy), names({"head", "layers", "step"}));
    }

    void groupsSortByTheirLargestFigure() {
        Sorted f;
        CompareFilterProxy& proxy = f.proxy;
        proxy.sort(CompareTensorModel::RelL2, Qt::DescendingOrder);
        QCOMPARE(labels(&proxy), names({"layers", "head", "step"}));
        QCOMPARE(labels(&proxy, child(&proxy, {"layers"})), names({"10", "2", "3"}));
        // head.w (removed) has no figure: last in either order.
        QCOMPARE(labels(&proxy, child(&proxy, {"head"})), names({"b", "w"}));
        proxy.sort(CompareTensorModel::RelL2, Qt::AscendingOrder);
        QCOMPARE(labels(&proxy, child(&proxy, {"head"})), names({"b", "w"}));
        // By max |Δ| the group with 3.0 below it comes first.
        proxy.sort(CompareTensorModel::MaxAbsDiff, Qt::DescendingOrder);
        QCOMPARE(labels(&proxy, child(&proxy, {"layers"})), names({"2", "10", "3"}));
        // Names in natural order, either way.
        proxy.sort(CompareTensorModel::Name, Qt::DescendingOrder);
        QCOMPARE(labels(&proxy, child(&proxy, {"layers"})), names({"10", "3", "2"}));
        // Status: the worst first.
        proxy.sort(CompareTensorModel::Status, Qt::DescendingOrder);
        QCOMPARE(labels(&proxy), names({"head", "layers", "step"}));
    }
};

QTEST_MAIN(TestCompareTensorModel)
#include "tst_comparetensormodel.moc"
