#include "guisupport.h"
#include "tensor/tensortreemodel.h"

#include "ckptscope/formats/oxck/checkpoint.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QTest>

using namespace ckptscope;

namespace {

std::shared_ptr<const Document> makeDocument(const QTemporaryDir& dir) {
    Checkpoint c;
    c.addTensor({"layers.10.w", {2, 2}, {1, 2, 3, 4}});
    c.addTensor({"layers.2.w", {3}, {1, 2, 3}});
    c.addTensor({"layers.2.b", {1}, {1}});
    c.addTensor({"head/proj.weight", {2}, {1, 2}});
    c.addTensor({"", {1}, {0}});
    c.addTensor({"bad", {2, 3}, {1}}); // shape/data mismatch → warning
    const std::string path = dir.filePath(QStringLiteral("t.oxck")).toStdString();
    c.save(path);
    return Document::open(path);
}

QStringList childLabels(const QAbstractItemModel& m, const QModelIndex& parent) {
    QStringList out;
    for (int r = 0; r < m.rowCount(parent); ++r)
        out << m.index(r, 0, parent).data().toString();
    return out;
}

} // namespace

class TestTensorTreeModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void structureAndNaturalOrder() {
        QTemporaryDir dir;
        TensorTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setDocument(makeDocument(dir));
        QCOMPARE(childLabels(model, {}),
                 (QStringList{QStringLiteral("(empty name)"), QStringLiteral("bad"),
                              QStringLiteral("head"), QStringLiteral("layers")}));
        const QModelIndex layers = model.index(3, 0);
        QCOMPARE(childLabels(model, layers),
                 (QStringList{QStringLiteral("2"), QStringLiteral("10")}));
        const QModelIndex two = model.index(0, 0, layers);
        QCOMPARE(childLabels(model, two), (QStringList{QStringLiteral("b"), QStringLiteral("w")}));
        // Group sums: layers = 4 + 3 + 1 elements, 32 bytes.
        QCOMPARE(layers.siblingAtColumn(TensorTreeModel::Elements)
                     .data(TensorTreeModel::SortRole)
                     .toULongLong(),
                 8ull);
        QCOMPARE(layers.siblingAtColumn(TensorTreeModel::Size)
                     .data(TensorTreeModel::SortRole)
                     .toULongLong(),
                 32ull);
        // Leaves know their tensor and full name; '/' splits too.
        const QModelIndex w = model.index(1, 0, two);
        QCOMPARE(w.data(TensorTreeModel::TensorIndexRole).toInt(), 1);
        QCOMPARE(w.data(TensorTreeModel::FullNameRole).toString(), QStringLiteral("layers.2.w"));
        QCOMPARE(w.siblingAtColumn(TensorTreeModel::Shape).data().toString(),
                 QStringLiteral("[3]"));
        QCOMPARE(childLabels(model, model.index(2, 0)), QStringList{QStringLiteral("proj")});
        QCOMPARE(layers.data(TensorTreeModel::TensorIndexRole).toInt(), -1);
        QCOMPARE(model.indexOfTensor(1), w);
        QCOMPARE(model.indexOfName(QStringLiteral("layers.2.w")), w);
    }
    void warningsAndNonFinite() {
        QTemporaryDir dir;
        TensorTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setDocument(makeDocument(dir));
        const QModelIndex bad = model.indexOfTensor(5);
        QVERIFY(!bad.data(Qt::DecorationRole).isNull());
        QVERIFY(bad.data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("6 elements but 1 values")));
        const QModelIndex ok = model.indexOfTensor(0);
        QVERIFY(ok.data(Qt::DecorationRole).isNull());
        // Its groups carry the icon too (issue 22, defect 6), and say why.
        QVERIFY(ok.parent().isValid());
        for (QModelIndex g = ok.parent(); g.isValid(); g = g.parent())
            QVERIFY(g.data(Qt::DecorationRole).isNull());
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.markNonFinite(0);
        QVERIFY(!ok.data(Qt::DecorationRole).isNull());
        QVERIFY(ok.data(Qt::ToolTipRole).toString().contains(QStringLiteral("NaN")));
        for (QModelIndex g = ok.parent(); g.isValid(); g = g.parent()) {
            QVERIFY(!g.data(Qt::DecorationRole).isNull());
            QVERIFY(g.data(Qt::ToolTipRole).toString().contains(QStringLiteral("NaN")));
            bool told = false; // the view repaints it
            for (const QList<QVariant>& c : changed)
                told |= c.at(0).toModelIndex() == g;
            QVERIFY(told);
        }
        // A group with no such tensor below stays plain.
        const QModelIndex other = model.indexOfTensor(1).parent(); // layers.2
        QVERIFY(other.isValid() && other != ok.parent());
        QVERIFY(other.data(Qt::DecorationRole).isNull());
    }
    // Tooltips show names and warnings as they are in the file, never as HTML.
    void toolTipsShowNamesExactly() {
        QTemporaryDir dir;
        Checkpoint c;
        const std::string name = "<b>odd</b>&quot;", mismatch = "<i>m</i>";
        c.addTensor({name, {1}, {1}});
        c.addTensor({mismatch, {2, 3}, {1}});
        const std::string path = dir.filePath(QStringLiteral("odd.oxck")).toStdString();
        c.save(path);
        TensorTreeModel model;
        model.setDocument(Document::open(path));
        QCOMPARE(guisupport::shownText(model.indexOfTensor(0).data(Qt::ToolTipRole).toString()),
                 QString::fromStdString(name));
        const QString tip =
            guisupport::shownText(model.indexOfTensor(1).data(Qt::ToolTipRole).toString());
        QVERIFY2(tip.startsWith(QString::fromStdString(mismatch + "\n")), qPrintable(tip));
        QVERIFY(tip.contains(QStringLiteral("6 elements but 1 values")));
    }
    // Names that would break, hide or reorder the line are shown with the
    // CLI's escapes (a newline cut the row, U+202E read "bidilive"); the
    // full name stays as stored, for selection and search.
    void namesShownPrintable() {
        QTemporaryDir dir;
        Checkpoint c;
        const std::string bidi = "bidi\u202e"
                                 "evil.w",
                          lines = "new\nline.w", zero = "zero\u200bwidth";
        c.addTensor({bidi, {1}, {1}});
        c.addTensor({lines, {1}, {1}});
        c.addTensor({zero, {1}, {1}});
        const std::string path = dir.filePath(QStringLiteral("names.oxck")).toStdString();
        c.save(path);
        TensorTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setDocument(Document::open(path));
        QCOMPARE(model.indexOfTensor(0).parent().data().toString(),
                 QStringLiteral("bidi\\u{202e}evil"));
        QCOMPARE(model.indexOfTensor(1).parent().data().toString(), QStringLiteral("new\\nline"));
        QCOMPARE(model.indexOfTensor(2).data().toString(), QStringLiteral("zero\\u{200b}width"));
        QCOMPARE(model.indexOfTensor(1).data(TensorTreeModel::FullNameRole).toString(),
                 QString::fromStdString(lines));
        QCOMPARE(guisupport::shownText(model.indexOfTensor(1).data(Qt::ToolTipRole).toString()),
                 QStringLiteral("new\\nline.w"));
    }
    void filterKeepsParentsOfMatches() {
        QTemporaryDir dir;
        TensorTreeModel model;
        model.setDocument(makeDocument(dir));
        QSortFilterProxyModel proxy;
        QAbstractItemModelTester tester(&proxy,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        proxy.setSourceModel(&model);
        proxy.setRecursiveFilteringEnabled(true);
        proxy.setFilterRole(TensorTreeModel::FullNameRole);
        proxy.setFilterRegularExpression(QStringLiteral("^layers\\.2\\.w$"));
        QCOMPARE(childLabels(proxy, {}), QStringList{QStringLiteral("layers")});
        const QModelIndex layers = proxy.index(0, 0);
        QCOMPARE(childLabels(proxy, layers), QStringList{QStringLiteral("2")});
        QCOMPARE(childLabels(proxy, proxy.index(0, 0, layers)), QStringList{QStringLiteral("w")});
    }
    void resetToEmpty() {
        QTemporaryDir dir;
        TensorTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setDocument(makeDocument(dir));
        model.setDocument(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(TestTensorTreeModel)
#include "tst_tensortreemodel.moc"
