// The compare window: its models under QAbstractItemModelTester, statuses
// and the summary, the overlaid histograms against a direct count, the
// histogram of B − A, "differences only", sorting, swap, a damaged side, a
// tensor file against a gradient checkpoint, gradient changes, and a drop
// that chooses Compare.
#include "ggufbuilder.h"
#include "picklewriter.h"
#include "testsupport.h"

#include "browser/mainwindow.h"
#include "common/tolerancevalidator.h"
#include "compare/comparefilterproxy.h"
#include "compare/comparehistogramview.h"
#include "compare/comparemetadatamodel.h"
#include "compare/comparestatsmodel.h"
#include "compare/comparesummary.h"
#include "compare/comparetensormodel.h"
#include "compare/comparevaluesmodel.h"
#include "compare/comparewindow.h"
#include "dropsupport.h"
#include "ggufbuilder.h"
#include "guisupport.h"
#include "safetensorsbuilder.h"
#include "shardedfixture.h"
#include "shell/launchselection.h"
#include "tensor/histogramview.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <nlohmann/json.hpp>

#include <QAbstractItemModelTester>
#include <QAbstractSeries>
#include <QApplication>
#include <QChart>
#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QPointer>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSplitter>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <QTimer>
#include <QTreeView>
#include <QUrl>
#include <QValueAxis>
#include <functional>

#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>

using namespace ckptscope;
using testsupport::str;

namespace {

std::vector<float> randomValues(size_t n, unsigned seed, float mean) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(mean, 1.0f);
    std::vector<float> v(n);
    for (float& f : v)
        f = d(rng);
    return v;
}

// Counts on `bins` equal bins over [lo, hi], computed here.
std::vector<uint64_t> directCounts(const std::vector<float>& v, double lo, double hi, int bins) {
    std::vector<uint64_t> counts(size_t(bins), 0);
    for (float f : v) {
        if (!std::isfinite(f))
            continue;
        const double pos = (double(f) - lo) / (hi - lo) * bins;
        ++counts[size_t(std::clamp(std::floor(pos), 0.0, double(bins - 1)))];
    }
    return counts;
}

bool waitFinished(CompareWindow& w) {
    QSignalSpy done(&w, &CompareWindow::comparisonFinished);
    QSignalSpy failed(&w, &CompareWindow::comparisonFailed);
    return QTest::qWaitFor([&] { return !done.isEmpty() || !failed.isEmpty(); }, 20000) &&
           !done.isEmpty();
}

int rowOf(const CompareTensorModel* m, const std::string& name) {
    for (int r = 0; r < m->tensorCount(); ++r)
        if (m->entry(r)->name == name)
            return r;
    return -1;
}

// Compares a with b in `w` and shows the tensor of this name: its row, or
// -1 when either step failed.
int detailOf(CompareWindow& w, const QString& a, const QString& b, const std::string& name) {
    w.compare(a, b);
    if (!waitFinished(w))
        return -1;
    const int row = rowOf(w.tensorModel(), name);
    QSignalSpy shown(&w, &CompareWindow::detailShown);
    w.selectTensor(row);
    if (!QTest::qWaitFor([&] { return !shown.isEmpty(); }, 10000) ||
        shown.first().first().toInt() != row)
        return -1;
    return row;
}

// The full names of the tensors (leaves) of a compare tree, depth first.
QStringList leafNames(const QAbstractItemModel* m, const QModelIndex& parent = {}) {
    QStringList out;
    for (int r = 0; r < m->rowCount(parent); ++r) {
        const QModelIndex i = m->index(r, 0, parent);
        if (i.data(CompareTensorModel::TensorIndexRole).toInt() >= 0)
            out << i.data(CompareTensorModel::FullNameRole).toString();
        else
            out << leafNames(m, i);
    }
    return out;
}

bool openInMain(MainWindow& main, const QString& path) {
    main.show();
    QSignalSpy loaded(&main, &MainWindow::documentLoaded);
    main.openFile(path);
    return QTest::qWaitFor([&] { return !loaded.isEmpty(); }, 10000) && main.currentPath() == path;
}

// The top-level windows of this type on screen (closed ones await deletion).
template <typename W> QList<W*> visible() {
    QList<W*> out;
    for (QWidget* top : QApplication::topLevelWidgets())
        if (auto* w = qobject_cast<W*>(top); w && w->isVisible())
            out << w;
    return out;
}

// Asks for every row of the compare Values page, then waits for the values
// (read off the GUI thread) to arrive.
bool settled(const CompareValuesModel* values) {
    for (int r = 0; r < values->rowCount(); ++r)
        for (int c = 0; c < CompareValuesModel::ColumnCount; ++c)
            values->index(r, c).data();
    return QTest::qWaitFor([&] { return values->pendingReads() == 0; }, 10000);
}

} // namespace

class TestCompareWindow : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_a, m_b, m_bad, m_gradA, m_gradB;
    std::vector<float> m_wA, m_wB;

private Q_SLOTS:
    void initTestCase() {
        m_wA = randomValues(5000, 1, 0.0f);
        m_wB = randomValues(5000, 2, 0.5f);
        m_wB[17] = std::nanf("");
        Checkpoint a, b;
        a.setMetadata("epoch", "1");
        a.setMetadata("name", "run");
        b.setMetadata("epoch", "2");
        b.setMetadata("name", "run");
        a.addTensor({"layers.0.w", {50, 100}, m_wA});
        a.addTensor({"layers.0.b", {3}, {1, 2, 3}});
        a.addTensor({"layers.1.w", {2}, {1, 2}});
        a.addTensor({"old", {1}, {1}});
        b.addTensor({"layers.0.w", {50, 100}, m_wB});
        b.addTensor({"layers.0.b", {3}, {1, 2, 3}});
        b.addTensor({"layers.1.w", {2}, {1, 2.5f}});
        b.addTensor({"new", {1}, {1}});
        m_a = m_dir.filePath(QStringLiteral("a.oxck"));
        m_b = m_dir.filePath(QStringLiteral("b.oxck"));
        a.save(str(m_a));
        b.save(str(m_b));
        std::string bytes = b.encode();
        bytes.resize(bytes.size() / 2);
        m_bad = m_dir.filePath(QStringLiteral("bad.oxck"));
        testsupport::writeFile(m_bad, bytes);

        GradientCheckpoint ga;
        ga.step = 1;
        ga.graph.insertNode(ComputationNode("n1", "matmul", {}));
        ga.graph.insertNode(ComputationNode("n2", "relu", {"c"}));
        ga.graph.addEdge("n1", "n2");
        GradientCheckpoint gb = ga;
        gb.step = 2;
        gb.graph.insertNode(ComputationNode("n3", "add", {}));
        m_gradA = m_dir.filePath(QStringLiteral("ga.json"));
        m_gradB = m_dir.filePath(QStringLiteral("gb.json"));
        ga.save(str(m_gradA));
        gb.save(str(m_gradB));
    }

    void tensorsAndSummary() {
        CompareWindow w;
        QAbstractItemModelTester t1(w.tensorModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(w.tensorProxy(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t3(w.metadataModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t4(w.statsModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t5(w.valuesModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        w.show();
        // Before any result, while the files load: the tensor pages only.
        const auto shownTabs = [&w] {
            QStringList shown;
            for (int i = 0; i < w.tabs()->count(); ++i)
                if (w.tabs()->isTabVisible(i))
                    shown << w.tabs()->tabText(i);
            return shown;
        };
        const QStringList tensorTabs = {QStringLiteral("Tensor"), QStringLiteral("Values"),
                                        QStringLiteral("Metadata")};
        QCOMPARE(shownTabs(), tensorTabs);
        w.compare(m_a, m_b);
        QVERIFY(waitFinished(w));
        QCOMPARE(shownTabs(), tensorTabs);
        QVERIFY(w.windowTitle().contains(QStringLiteral("a.oxck")));
        QVERIFY(w.windowTitle().contains(QStringLiteral("b.oxck")));
        const CompareTensorModel* m = w.tensorModel();
        QCOMPARE(m->tensorCount(), 5);
        const std::vector<std::pair<std::string, DiffStatus>> want = {
            {"layers.0.w", DiffStatus::Changed},
            {"layers.0.b", DiffStatus::Same},
            {"layers.1.w", DiffStatus::Changed},
            {"old", DiffStatus::Removed},
            {"new", DiffStatus::Added}};
        for (int r = 0; r < 5; ++r) {
            QCOMPARE(m->entry(r)->name, want[size_t(r)].first);
            const QModelIndex status = m->indexOfTensor(r, CompareTensorModel::Status);
            QCOMPARE(status.data().toString(),
                     CompareTensorModel::statusText(want[size_t(r)].second));
            QVERIFY(!status.data(Qt::DecorationRole).value<QIcon>().isNull());
            QCOMPARE(m->indexOfTensor(r).data(CompareTensorModel::FullNameRole).toString(),
                     QString::fromStdString(want[size_t(r)].first));
        }
        // A tree like the main window's: layers (0: b, w; 1: w), new, old.
        QCOMPARE(m->rowCount(), 3);
        QCOMPARE(leafNames(m),
                 (QStringList{QStringLiteral("layers.0.b"), QStringLiteral("layers.0.w"),
                              QStringLiteral("layers.1.w"), QStringLiteral("new"),
                              QStringLiteral("old")}));
        QVERIFY(w.summaryText().contains(QStringLiteral("2 changed")));
        QVERIFY(w.summaryText().contains(QStringLiteral("1 added")));
        QVERIFY2(w.summaryText().contains(QStringLiteral("1 of 2 metadata entries differ")),
                 qPrintable(w.summaryText()));
        // One of each is counted as the CLI counts it.
        TensorDiff one;
        MetadataDiffEntry same;
        same.key = "k";
        same.a = same.b = "1";
        one.metadata.push_back(same);
        one.summary.differingElements = 1;
        const QString text =
            comparesummary::tensorSummary(one, QStringLiteral("a"), QStringLiteral("b"), QString());
        QVERIFY2(text.contains(QStringLiteral("1 differing element;")) &&
                     text.contains(QStringLiteral("0 of 1 metadata entry differs")),
                 qPrintable(text));
        // Metadata: old and new, the changed row marked.
        const CompareMetadataModel* meta = w.metadataModel();
        QCOMPARE(meta->rowCount(), 2);
        QCOMPARE(meta->index(0, CompareMetadataModel::ValueA).data().toString(),
                 QStringLiteral("1"));
        QCOMPARE(meta->index(0, CompareMetadataModel::ValueB).data().toString(),
                 QStringLiteral("2"));
        QVERIFY(meta->index(0, CompareMetadataModel::Key).data(Qt::BackgroundRole).isValid());
        QVERIFY(!meta->index(1, CompareMetadataModel::Key).data(Qt::BackgroundRole).isValid());

        // Differences only hides the unchanged tensor, keeping its group.
        w.setDifferencesOnly(true);
        QCOMPARE(leafNames(w.tensorProxy()).size(), 4);
        QVERIFY(!leafNames(w.tensorProxy()).contains(QStringLiteral("layers.0.b")));
        w.setDifferencesOnly(false);
        QCOMPARE(leafNames(w.tensorProxy()).size(), 5);
        // Sorting by relative L2: within layers, the group holding the most
        // changed tensor first; groups and tensors without a figure last.
        w.tensorView()->sortByColumn(CompareTensorModel::RelL2, Qt::DescendingOrder);
        const double rel0 = *m->entry(0)->elements->relL2, rel2 = *m->entry(2)->elements->relL2;
        const QModelIndex layers = w.tensorProxy()->index(0, CompareTensorModel::Name);
        QCOMPARE(layers.data().toString(), QStringLiteral("layers"));
        QCOMPARE(w.tensorProxy()->index(0, CompareTensorModel::Name, layers).data().toString(),
                 QString::fromLatin1(rel0 > rel2 ? "0" : "1"));
        QCOMPARE(w.tensorProxy()->index(0, CompareTensorModel::RelL2).data().toString(),
                 QString::fromStdString(fmt::display(std::max(rel0, rel2))));
        // The two tensors without a figure (added, removed) go last either way.
        for (Qt::SortOrder order : {Qt::DescendingOrder, Qt::AscendingOrder}) {
            w.tensorView()->sortByColumn(CompareTensorModel::RelL2, order);
            for (int r = 0; r < 3; ++r)
                QCOMPARE(w.tensorProxy()
                             ->index(r, CompareTensorModel::RelL2)
                             .data()
                             .toString()
                             .isEmpty(),
                         r >= 1);
        }
        // Selecting a tensor by its index finds it wherever the sort put it.
        QSignalSpy shown(&w, &CompareWindow::detailShown);
        w.selectTensor(2);
        QCOMPARE(w.tensorView()->currentIndex().data(CompareTensorModel::FullNameRole).toString(),
                 QStringLiteral("layers.1.w"));
        QVERIFY(QTest::qWaitFor([&] { return !shown.isEmpty(); }, 10000));
        QCOMPARE(shown.last().first().toInt(), 2);
    }

    void treeAndStatisticsShownWhole() {
        // A window of ordinary size: every column of the tree in view (no
        // count cut at the edge), every statistic without scrolling.
        CompareWindow w;
        w.resize(1400, 860);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(detailOf(w, m_a, m_b, "layers.0.w") >= 0);
        QTRY_COMPARE(w.tensorView()->horizontalScrollBar()->maximum(), 0);
        QVERIFY(w.statsModel()->rowCount() > 15);
        QTRY_COMPARE(w.statsView()->verticalScrollBar()->maximum(), 0);
        // Each statistic's name whole ("rel. L2 change over finite pairs").
        const QAbstractItemView* stats = w.statsView();
        const int labelWidth = w.statsView()->horizontalHeader()->sectionSize(0);
        QVERIFY2(labelWidth >= stats->sizeHintForColumn(CompareStatsModel::Label),
                 qPrintable(QStringLiteral("%1 < %2")
                                .arg(labelWidth)
                                .arg(stats->sizeHintForColumn(CompareStatsModel::Label))));
    }

    void overlaidHistogramsOnSameBins() {
        CompareWindow w;
        w.show();
        const int row = detailOf(w, m_a, m_b, "layers.0.w");
        QVERIFY(row >= 0);
        double lo = INFINITY, hi = -INFINITY;
        for (const auto* v : {&m_wA, &m_wB})
            for (float f : *v)
                if (std::isfinite(f)) {
                    lo = std::min(lo, double(f));
                    hi = std::max(hi, double(f));
                }
        const Histogram& ha = w.overlayView()->histogramA();
        const Histogram& hb = w.overlayView()->histogramB();
        QCOMPARE(ha.lo, lo);
        QCOMPARE(hb.hi, hi);
        QCOMPARE(ha.counts, directCounts(m_wA, lo, hi, int(ha.counts.size())));
        QCOMPARE(hb.counts, directCounts(m_wB, lo, hi, int(hb.counts.size())));
        QCOMPARE(w.overlayView()->chart()->series().size(), 2); // legend: one entry per side
        // Its axes tick on round numbers, as every value chart does.
        for (QAbstractAxis* axis : w.overlayView()->chart()->axes()) {
            const QString problem =
                guisupport::roundnessProblem(guisupport::ticksOf(qobject_cast<QValueAxis*>(axis)));
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
        // The histogram of B − A is the diff's.
        const ElementDiff& el = *w.tensorModel()->entry(row)->elements;
        QCOMPARE(w.deltaView()->histogram().counts, el.histogram.counts);
        uint64_t binned = 0;
        for (uint64_t c : w.deltaView()->histogram().counts)
            binned += c;
        QCOMPARE(binned, uint64_t(m_wA.size() - 1)); // the NaN pair is not binned
        // Statistics side by side, with the Δ figures.
        const CompareStatsModel* s = w.statsModel();
        QVERIFY(s->rowCount() > 11);
        QCOMPARE(s->index(2, CompareStatsModel::SideB).data().toString(), QStringLiteral("1"));
        QCOMPARE(s->index(2, CompareStatsModel::SideA).data().toString(), QStringLiteral("0"));
        bool foundDiffering = false;
        for (int r = 0; r < s->rowCount(); ++r)
            if (s->index(r, CompareStatsModel::Label).data().toString() ==
                QStringLiteral("differing")) {
                QCOMPARE(s->index(r, CompareStatsModel::Delta).data().toString(),
                         QString::fromStdString(fmt::grouped(el.differing)));
                foundDiffering = true;
            }
        QVERIFY(foundDiffering);
        // Values: A, B and Δ of the rows shown.
        const CompareValuesModel* values = w.valuesModel();
        QCOMPARE(values->rowCount(), int(m_wA.size()));
        QVERIFY(settled(values));
        for (int r : {0, 17, 4999}) {
            QCOMPARE(values->index(r, CompareValuesModel::ValueA).data(Qt::ToolTipRole).toString(),
                     QString::fromStdString(fmt::exact(m_wA[size_t(r)])));
            QCOMPARE(values->index(r, CompareValuesModel::ValueB).data(Qt::ToolTipRole).toString(),
                     QString::fromStdString(fmt::exact(m_wB[size_t(r)])));
            QCOMPARE(values->index(r, CompareValuesModel::Delta).data(Qt::ToolTipRole).toString(),
                     QString::fromStdString(
                         fmt::exact(double(m_wB[size_t(r)]) - double(m_wA[size_t(r)]))));
        }
        // An added tensor: B's side only, no Δ, nothing left over.
        QSignalSpy shown(&w, &CompareWindow::detailShown);
        w.selectTensor(rowOf(w.tensorModel(), "new"));
        QVERIFY(w.deltaView()->histogram().counts.empty());
        QVERIFY(QTest::qWaitFor([&] { return !shown.isEmpty(); }, 10000));
        QVERIFY(w.overlayView()->histogramA().counts.empty());
        QCOMPARE(w.overlayView()->histogramB().counts.front(), uint64_t(1));
        QVERIFY(s->index(6, CompareStatsModel::SideA).data().toString().isEmpty());
        QCOMPARE(values->rowCount(), 1);
        QVERIFY(settled(values));
        QVERIFY(!values->index(0, CompareValuesModel::ValueA).data().isValid());
        QVERIFY(!values->index(0, CompareValuesModel::Delta).data().isValid());
        QVERIFY(values->index(0, CompareValuesModel::ValueB).data().isValid());
    }

    void toleranceMakesSmallDifferencesSame() {
        QTemporaryDir dir;
        const QString a = dir.filePath(QStringLiteral("ta.oxck"));
        const QString b = dir.filePath(QStringLiteral("tb.oxck"));
        Checkpoint ca, cb;
        ca.addTensor({"w", {2}, {1.0f, 2.0f}});
        cb.addTensor({"w", {2}, {1.0f, 2.001f}});
        ca.save(str(a));
        cb.save(str(b));
        const double delta = double(2.001f) - 2.0; // what the comparison sees
        CompareWindow w;
        w.show();
        w.compare(a, b);
        QVERIFY(waitFinished(w));
        QCOMPARE(w.tensorModel()->entry(0)->status, DiffStatus::Changed);
        QVERIFY(w.summaryText().contains(QStringLiteral("compared exactly")));

        // Typed into the atol field, as a user would; Enter applies it.
        QSignalSpy done(&w, &CompareWindow::comparisonFinished);
        QTest::keyClicks(w.atolEdit(), QStringLiteral("0.01"));
        QTest::keyClick(w.atolEdit(), Qt::Key_Return);
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 10000));
        QCOMPARE(w.tensorModel()->entry(0)->status, DiffStatus::Same);
        QCOMPARE(w.tensorModel()->entry(0)->elements->differing, uint64_t(0));
        QVERIFY2(w.summaryText().contains(QStringLiteral("0.01 + 0")), qPrintable(w.summaryText()));
        QVERIFY(w.summaryText().contains(QStringLiteral("1 same")));
        // The Values page tints by the same rule: within the tolerance, the
        // pair that differs by 0.001 is not tinted (issue 38 item 17).
        const auto tinted = [&] {
            QSignalSpy shown(&w, &CompareWindow::detailShown);
            w.selectTensor(rowOf(w.tensorModel(), "w"));
            if (!QTest::qWaitFor([&] { return !shown.isEmpty(); }, 10000) ||
                !settled(w.valuesModel()))
                return -1;
            return int(w.valuesModel()
                           ->index(1, CompareValuesModel::Delta)
                           .data(Qt::BackgroundRole)
                           .isValid());
        };
        QCOMPARE(tinted(), 0);

        // rtol at the boundary: |Δ| ≤ rtol·|a| just inside, just outside.
        for (const auto& [rtol, status] :
             {std::pair{delta / 2.0 * 1.0000001, DiffStatus::Same},
              std::pair{delta / 2.0 * 0.9999999, DiffStatus::Changed}}) {
            done.clear();
            QVERIFY(w.setTolerance(QString(), QString::number(rtol, 'g', 17)));
            QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 10000));
            QCOMPARE(w.tensorModel()->entry(0)->status, status);
            QCOMPARE(w.rtolEdit()->text(), QString::number(rtol, 'g', 17));
            QCOMPARE(tinted(), status == DiffStatus::Changed ? 1 : 0);
        }

        // What is not a tolerance is refused and changes nothing.
        QVERIFY(!w.setTolerance(QStringLiteral("-1"), QString()));
        QVERIFY(!w.setTolerance(QStringLiteral("inf"), QString()));
        QVERIFY(!w.setTolerance(QString(), QStringLiteral("1e999")));
        w.atolEdit()->clear();
        QTest::keyClicks(w.atolEdit(), QStringLiteral("x-1"));
        QCOMPARE(w.atolEdit()->text(), QStringLiteral("1")); // 'x' and '-' refused as typed
        ToleranceValidator v;
        int pos = 0;
        for (const auto& [text, state] : {std::pair{QStringLiteral("1e-3"), QValidator::Acceptable},
                                          std::pair{QStringLiteral(""), QValidator::Acceptable},
                                          std::pair{QStringLiteral("1e"), QValidator::Intermediate},
                                          std::pair{QStringLiteral("."), QValidator::Intermediate},
                                          std::pair{QStringLiteral("nan"), QValidator::Invalid},
                                          std::pair{QStringLiteral("-0.5"), QValidator::Invalid}}) {
            QString t = text;
            QCOMPARE(v.validate(t, pos), state);
        }
    }

    void swapExchangesSides() {
        CompareWindow w;
        w.show();
        w.compare(m_a, m_b);
        QVERIFY(waitFinished(w));
        w.swapSides();
        QVERIFY(waitFinished(w));
        QCOMPARE(w.pathA(), m_b);
        QCOMPARE(w.pathB(), m_a);
        const CompareTensorModel* m = w.tensorModel();
        QCOMPARE(m->entry(rowOf(m, "old"))->status, DiffStatus::Added);
        QCOMPARE(m->entry(rowOf(m, "new"))->status, DiffStatus::Removed);
        QVERIFY(w.windowTitle().startsWith(QStringLiteral("b.oxck")));
    }

    // A GGUF against the f32 model it was quantized from (conformance):
    // every tensor pairs under llama.cpp's names, the summary says so, a
    // tensor's tooltip and the detail's title name B's tensor and the q/k
    // row order, and at an ordinary size the report is whole: every column
    // of the tree and every statistic (no figure elided to "0.…").
    void quantizedModelPairsUnderLlamaNames() {
        REQUIRE_CONFORMANCE();
        const QString dir = testsupport::conformanceDir() + QStringLiteral("/gguf/valid/");
        // The report at a window size, showing q_proj of layer 0.
        const auto report = [&dir](CompareWindow& w, int width, int height) {
            w.resize(width, height);
            w.show();
            return QTest::qWaitForWindowExposed(&w) &&
                   detailOf(w, dir + QStringLiteral("tiny-llama-f32.safetensors"),
                            dir + QStringLiteral("tiny-llama-Q4_K_M.gguf"),
                            "model.layers.0.self_attn.q_proj.weight") >= 0;
        };
        CompareWindow w;
        QVERIFY(report(w, 1400, 860));
        const auto* title = w.findChild<QLabel*>(QStringLiteral("tensorTitle"));
        QVERIFY2(title->text().contains(QStringLiteral("in B: blk.0.attn_q.weight (rows in A's")),
                 qPrintable(title->text()));
        // Every name, status and figure of the tree whole (deep names such
        // as post_attention_layernorm included), and in view up to the
        // relative L2 change it is sorted by; the figures beyond may scroll.
        const auto treeWhole = [](CompareWindow& window, bool relL2InView = true) {
            QTreeView* tree = window.tensorView();
            const QStringList cut = guisupport::cutCells(tree);
            QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1Char('\n'))));
            QVERIFY(!relL2InView || tree->columnViewportPosition(CompareTensorModel::RelL2) +
                                            tree->columnWidth(CompareTensorModel::RelL2) <=
                                        tree->viewport()->width());
            // No figure cut at the tree's right edge: each column is in view
            // whole or not at all ("65,53" for 65,536).
            for (int c = 0; c < CompareTensorModel::ColumnCount; ++c) {
                const int x = tree->columnViewportPosition(c), width = tree->viewport()->width();
                QVERIFY2(tree->isColumnHidden(c) || x + tree->columnWidth(c) <= width || x >= width,
                         qPrintable(QStringLiteral("column %1 at %2..%3, viewport %4")
                                        .arg(c)
                                        .arg(x)
                                        .arg(x + tree->columnWidth(c))
                                        .arg(width)));
            }
        };
        treeWhole(w);
        QTRY_COMPARE(w.statsView()->horizontalScrollBar()->maximum(), 0);
        const QAbstractItemView* stats = w.statsView();
        for (int c = 0; c < CompareStatsModel::ColumnCount; ++c)
            QVERIFY2(w.statsView()->horizontalHeader()->sectionSize(c) >=
                         stats->sizeHintForColumn(c),
                     qPrintable(QStringLiteral("statistics column %1: %2 < %3")
                                    .arg(c)
                                    .arg(w.statsView()->horizontalHeader()->sectionSize(c))
                                    .arg(stats->sizeHintForColumn(c))));
        // The same after comparing again (Reload, a file change, Swap): the
        // width found for the table stays.
        QVERIFY(report(w, 1400, 860));
        QTRY_COMPARE(w.statsView()->horizontalScrollBar()->maximum(), 0);
        // Narrower than the tree and the table together: the table scrolls
        // sideways rather than elide a figure.
        CompareWindow narrow;
        QVERIFY(report(narrow, 1024, 700));
        const QAbstractItemView* narrowStats = narrow.statsView();
        for (int c = 0; c < CompareStatsModel::ColumnCount; ++c)
            QVERIFY2(narrow.statsView()->horizontalHeader()->sectionSize(c) >=
                         narrowStats->sizeHintForColumn(c),
                     qPrintable(QStringLiteral("1024 px, statistics column %1").arg(c)));
        treeWhole(narrow);
        // The Values page: the detail side takes the width to show A, B and
        // Δ whole; the tree gives way to a column's edge.
        narrow.tabs()->setCurrentIndex(1);
        auto* valuesPage = qobject_cast<QTableView*>(narrow.tabs()->widget(1));
        QVERIFY(valuesPage && valuesPage->model() == narrow.valuesModel());
        QTRY_COMPARE(valuesPage->horizontalScrollBar()->maximum(), 0);
        treeWhole(narrow, false);
        narrow.tabs()->setCurrentIndex(0);
        // The overlay's legend names the sides "A" and "B" (the summary line
        // names the files): never cut short beside the plot.
        QStringList legend;
        for (QAbstractSeries* series : narrow.overlayView()->chart()->series())
            legend << series->name();
        QCOMPARE(legend, (QStringList{QStringLiteral("A"), QStringLiteral("B")}));
        const CompareTensorModel* m = w.tensorModel();
        QCOMPARE(m->tensorCount(), 21);
        QVERIFY2(w.summaryText().contains(QStringLiteral("paired by llama.cpp's names for llama")),
                 qPrintable(w.summaryText()));
        QVERIFY(w.summaryText().contains(QStringLiteral("0 added")));
        const int r = rowOf(m, "model.layers.0.self_attn.q_proj.weight");
        QVERIFY(r >= 0);
        QCOMPARE(m->entry(r)->nameB, std::string("blk.0.attn_q.weight"));
        const QString tip =
            m->indexOfTensor(r, CompareTensorModel::Name).data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("in B: blk.0.attn_q.weight")), qPrintable(tip));
        QVERIFY(tip.contains(QStringLiteral("rows in A's order; llama.cpp interleaves")));
        QVERIFY(*m->entry(r)->elements->relL2 < 0.1); // rows in order: Q4_K's error only
    }

    // F64 values at ±max and integers beyond f32 (issue 21, item 6): each
    // side's statistics in its own dtype (±max is finite, not ±Inf), a
    // figure past the double range named, the overlay drawn, and integers
    // that differ by one above 2^24 changed.
    void topOfTheDoubleRangeAndExactIntegers() {
        constexpr double mx = std::numeric_limits<double>::max();
        const QString pa = m_dir.filePath(QStringLiteral("top-a.safetensors")),
                      pb = m_dir.filePath(QStringLiteral("top-b.safetensors"));
        const auto [bytesA, bytesB] = testsupport::topOfRangePair();
        testsupport::writeFile(pa, bytesA);
        testsupport::writeFile(pb, bytesB);
        CompareWindow w;
        w.show();
        const int row = detailOf(w, pa, pb, "x");
        QVERIFY(row >= 0);
        const CompareStatsModel* s = w.statsModel();
        const auto cell = [s](const QString& label, int column) {
            for (int r = 0; r < s->rowCount(); ++r)
                if (s->index(r, CompareStatsModel::Label).data().toString() == label)
                    return s->index(r, column).data().toString();
            return QStringLiteral("(no row %1)").arg(label);
        };
        const QString overflow = QStringLiteral("overflows double");
        for (int side : {int(CompareStatsModel::SideA), int(CompareStatsModel::SideB)}) {
            QCOMPARE(cell(QStringLiteral("finite"), side), QStringLiteral("4"));
            QCOMPARE(cell(QStringLiteral("+Inf"), side), QStringLiteral("0"));
            QCOMPARE(cell(QStringLiteral("max"), side), QString::fromStdString(fmt::display(mx)));
            QCOMPARE(cell(QStringLiteral("L2 norm"), side), overflow);
        }
        // Every pair finite: the figures' labels need no "over finite pairs".
        QCOMPARE(cell(QStringLiteral("max |Δ|"), CompareStatsModel::Delta), overflow);
        QCOMPARE(w.tensorModel()->indexOfTensor(row, CompareTensorModel::MaxAbsDiff).data(),
                 QVariant(overflow));
        // Every value on the overlay's bins, ±max included.
        for (const Histogram* h : {&w.overlayView()->histogramA(), &w.overlayView()->histogramB()})
            QCOMPARE(std::accumulate(h->counts.begin(), h->counts.end(), uint64_t(0)), uint64_t(4));
        const auto* title = w.findChild<QLabel*>(QStringLiteral("tensorTitle"));
        QVERIFY(title);
        QVERIFY2(title->text().contains(
                     QStringLiteral("histogram: 2 of 4 differences overflow double (not binned)")),
                 qPrintable(title->text()));
        const int ids = rowOf(w.tensorModel(), "ids");
        QCOMPARE(w.tensorModel()->entry(ids)->status, DiffStatus::Changed);
        QCOMPARE(w.tensorModel()->entry(ids)->elements->differing, uint64_t(1));
    }

    // The same pair as a quantization report: each tensor's cosine and B's
    // bits per weight (from ggml's sizes and shapes), a group's bits over its
    // weights; the columns shown for this pair only.
    void quantizationReportShowsBitsPerWeight() {
        REQUIRE_CONFORMANCE();
        const QString gguf = testsupport::conformanceDir() + QStringLiteral("/gguf/");
        const auto reading =
            testsupport::loadJson(gguf + QStringLiteral("expected/tiny-llama-Q4_K_M.gguf.json"));
        std::map<std::string, std::pair<uint64_t, uint64_t>> bitsAndWeights; // by B's name
        for (const auto& t : reading.at("tensors")) {
            uint64_t weights = 1;
            for (const auto& n : t.at("ne"))
                weights *= n.get<uint64_t>();
            bitsAndWeights[t.at("name")] = {t.at("size").get<uint64_t>() * 8, weights};
        }
        CompareWindow w;
        QAbstractItemModelTester tester(w.tensorModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        w.show();
        w.compare(gguf + QStringLiteral("valid/tiny-llama-f32.safetensors"),
                  gguf + QStringLiteral("valid/tiny-llama-Q4_K_M.gguf"));
        QVERIFY(waitFinished(w));
        const CompareTensorModel* m = w.tensorModel();
        QVERIFY(m->quantizationReport());
        QVERIFY(!w.tensorView()->isColumnHidden(CompareTensorModel::BitsPerWeight));
        QVERIFY(!w.tensorView()->isColumnHidden(CompareTensorModel::Cosine));
        uint64_t layerBits = 0, layerWeights = 0;
        std::set<QString> shown;
        for (int r = 0; r < m->tensorCount(); ++r) {
            const TensorDiffEntry* e = m->entry(r);
            const auto [bits, weights] = bitsAndWeights.at(e->nameB.empty() ? e->name : e->nameB);
            const double bpw = double(bits) / double(weights);
            const QModelIndex cell = m->indexOfTensor(r, CompareTensorModel::BitsPerWeight);
            QCOMPARE(cell.data(CompareTensorModel::SortRole).toDouble(), bpw);
            QCOMPARE(cell.data().toString(), QString::fromStdString(fmt::display(bpw)));
            shown.insert(cell.data().toString());
            QCOMPARE(m->indexOfTensor(r, CompareTensorModel::Cosine).data().toString(),
                     QString::fromStdString(fmt::display(*e->elements->cosine)));
            if (e->name.rfind("model.layers.1.", 0) == 0) {
                layerBits += bits;
                layerWeights += weights;
            }
        }
        // B's mapped names are found too: by the filter, and by --select.
        CompareFilterProxy proxy;
        proxy.setSourceModel(w.tensorModel());
        proxy.setFilterFixedString(QStringLiteral("blk.0.attn_q."));
        QStringList matched;
        const std::function<void(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
            for (int r = 0; r < proxy.rowCount(parent); ++r) {
                const QModelIndex i = proxy.index(r, 0, parent);
                if (i.data(CompareTensorModel::TensorIndexRole).toInt() >= 0)
                    matched << i.data(CompareTensorModel::FullNameRole).toString();
                walk(i);
            }
        };
        walk({});
        QCOMPARE(matched, QStringList{QStringLiteral("model.layers.0.self_attn.q_proj.weight")});
        const LaunchSelection byB{QStringLiteral("blk.1.ffn_down.weight"), {}};
        QCOMPARE(byB.applyTo(&w), QStringList());
        const LaunchSelection absent{QStringLiteral("blk.9.none"), {}};
        QCOMPARE(absent.applyTo(&w).size(), qsizetype(1));
        // Q8_0, F32, Q4_K and Q6_K: 8.5, 32, 4.5, 6.5625, as the CLI gives them.
        QCOMPARE(shown.size(), size_t(4));
        QModelIndex group; // model › layers › 1
        for (const char* label : {"model", "layers", "1"}) {
            QModelIndex found;
            for (int r = 0; r < m->rowCount(group); ++r)
                if (m->index(r, 0, group).data().toString() == QLatin1String(label))
                    found = m->index(r, 0, group);
            QVERIFY2(found.isValid(), label);
            group = found;
        }
        QCOMPARE(group.siblingAtColumn(CompareTensorModel::BitsPerWeight)
                     .data(CompareTensorModel::SortRole)
                     .toDouble(),
                 double(layerBits) / double(layerWeights));
    }

    // A tensor of one value on both sides (a norm's weights at 1): the
    // overlay draws one bar per side centred on the value, with its whole
    // count, on an axis around it (not [1, 2] with the bar at an edge).
    void constantTensorOverlayCentredOnItsValue() {
        Checkpoint a, b;
        a.addTensor({"norm", {4}, {1.0f, 1.0f, 1.0f, 1.0f}});
        b.addTensor({"norm", {4}, {1.0f, 1.0f, 1.0f, 1.0f}});
        const QString pa = m_dir.filePath(QStringLiteral("norm-a.oxck")),
                      pb = m_dir.filePath(QStringLiteral("norm-b.oxck"));
        a.save(str(pa));
        b.save(str(pb));
        CompareWindow w;
        w.show();
        QVERIFY(detailOf(w, pa, pb, "norm") >= 0);
        const QChart* chart = w.overlayView()->chart();
        const auto* x = qobject_cast<QValueAxis*>(chart->axes(Qt::Horizontal).value(0));
        QVERIFY(x);
        QVERIFY2(x->min() < 1 && x->max() > 1 && std::abs((1 - x->min()) - (x->max() - 1)) < 1e-9,
                 qPrintable(QStringLiteral("[%1, %2]").arg(x->min()).arg(x->max())));
        QCOMPARE(chart->series().size(), 2);
        for (QAbstractSeries* series : chart->series()) {
            double top = 0, left = INFINITY, right = -INFINITY;
            for (const QPointF& p : qobject_cast<QLineSeries*>(series)->points())
                if (p.y() > 0) {
                    top = std::max(top, p.y());
                    left = std::min(left, p.x());
                    right = std::max(right, p.x());
                }
            QCOMPARE(top, 4.0);
            QVERIFY(left < 1 && right > 1);
        }
    }

    // Equal values in another dtype (issue 22, defect 1): "dtype changed"
    // with its own colour and icon, counted in the summary, a Dtype column
    // A → B; nothing "changed".
    void dtypeChangedShownAsSuch() {
        Checkpoint a;
        a.addTensor({"layers.0.t", {2}, {1.0f, 2.0f}});
        a.addTensor({"layers.0.u", {2}, {1.0f, 2.0f}});
        const QString single = m_dir.filePath(QStringLiteral("single.oxck")),
                      half = m_dir.filePath(QStringLiteral("half.safetensors"));
        a.save(str(single));
        testsupport::writeFile(
            half, testsupport::stFile(
                      {{"layers.0.t", "F16", {2}, testsupport::leBytes<uint16_t>({0x3C00, 0x4000})},
                       {"layers.0.u", "F32", {2}, testsupport::leBytes<float>({1.0f, 2.0f})}}));
        CompareWindow w;
        QAbstractItemModelTester t(w.tensorModel(),
                                   QAbstractItemModelTester::FailureReportingMode::QtTest);
        w.show();
        w.compare(single, half);
        QVERIFY(waitFinished(w));
        const CompareTensorModel* m = w.tensorModel();
        const int r = rowOf(m, "layers.0.t");
        QCOMPARE(m->entry(r)->status, DiffStatus::DtypeChanged);
        QCOMPARE(m->entry(rowOf(m, "layers.0.u"))->status, DiffStatus::Same);
        const QModelIndex status = m->indexOfTensor(r, CompareTensorModel::Status);
        QCOMPARE(status.data().toString(), QStringLiteral("dtype changed"));
        QCOMPARE(status.data(Qt::ForegroundRole).value<QColor>(),
                 CompareTensorModel::statusColor(DiffStatus::DtypeChanged));
        for (DiffStatus other : {DiffStatus::Same, DiffStatus::Changed, DiffStatus::Added,
                                 DiffStatus::Removed, DiffStatus::ShapeChanged})
            QVERIFY(CompareTensorModel::statusColor(other) !=
                    CompareTensorModel::statusColor(DiffStatus::DtypeChanged));
        QCOMPARE(m->indexOfTensor(r, CompareTensorModel::Dtype).data().toString(),
                 QStringLiteral("F32 → F16"));
        QVERIFY(!w.tensorView()->isColumnHidden(CompareTensorModel::Dtype));
        QVERIFY2(w.summaryText().contains(QStringLiteral("1 dtype changed")),
                 qPrintable(w.summaryText()));
        QVERIFY(w.summaryText().contains(QStringLiteral("0 changed")));
        // The group's tooltip counts it as such.
        QVERIFY(m->index(0, CompareTensorModel::Status)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("1 dtype changed")));
        // No dtype differs: no Dtype column.
        w.compare(m_a, m_b);
        QVERIFY(waitFinished(w));
        QVERIFY(w.tensorView()->isColumnHidden(CompareTensorModel::Dtype));
        // Same dtypes, no blocks: no quantization report columns.
        QVERIFY(!w.tensorModel()->quantizationReport());
        QVERIFY(w.tensorView()->isColumnHidden(CompareTensorModel::BitsPerWeight));
        QVERIFY(w.tensorView()->isColumnHidden(CompareTensorModel::Cosine));
    }

    // A tensor that gains NaN or Inf (defect 2): its own column and icon,
    // rolled up on groups, counted in the summary, first in the default
    // order and when sorted by Max |Δ|, and the tensor the window opens on.
    void nanGainedComesFirst() {
        Checkpoint a, b;
        a.addTensor({"big", {4}, {1, 2, 3, 4}});
        a.addTensor({"blk.q", {4}, {1, 2, 3, 4}});
        b.addTensor({"big", {4}, {100, 2, 3, 4}}); // large finite change
        b.addTensor({"blk.q", {4}, {1, std::nanf(""), std::nanf(""), INFINITY}});
        const QString pa = m_dir.filePath(QStringLiteral("nan-a.oxck")),
                      pb = m_dir.filePath(QStringLiteral("nan-b.oxck"));
        a.save(str(pa));
        b.save(str(pb));
        CompareWindow w;
        QAbstractItemModelTester t(w.tensorProxy(),
                                   QAbstractItemModelTester::FailureReportingMode::QtTest);
        w.show();
        w.compare(pa, pb);
        QVERIFY(waitFinished(w));
        const CompareTensorModel* m = w.tensorModel();
        const int q = rowOf(m, "blk.q");
        QCOMPARE(w.tensorView()->currentIndex().data(CompareTensorModel::TensorIndexRole).toInt(),
                 q);
        const QModelIndex cell = m->indexOfTensor(q, CompareTensorModel::NonFinite);
        QCOMPARE(cell.data().toString(), QStringLiteral("NaN 2, Inf 1"));
        QVERIFY(!cell.data(Qt::DecorationRole).value<QIcon>().isNull());
        QVERIFY(m->indexOfTensor(rowOf(m, "big"), CompareTensorModel::NonFinite)
                    .data(Qt::DecorationRole)
                    .isNull());
        // The group "blk" carries the icon too.
        const QModelIndex blk = m->indexOfTensor(q).parent();
        QVERIFY(blk.isValid());
        QVERIFY(!blk.siblingAtColumn(CompareTensorModel::NonFinite)
                     .data(Qt::DecorationRole)
                     .value<QIcon>()
                     .isNull());
        QVERIFY2(w.summaryText().contains(QStringLiteral("1 tensor with NaN/Inf mismatches")),
                 qPrintable(w.summaryText()));
        // Default order, and by Max |Δ| descending: the NaN-gaining one first,
        // though its finite figures are smaller.
        QVERIFY(*m->entry(q)->elements->maxAbsDiff <
                *m->entry(rowOf(m, "big"))->elements->maxAbsDiff);
        auto firstRow = [&w] {
            return w.tensorProxy()->index(0, 0).data(CompareTensorModel::FullNameRole).toString();
        };
        QCOMPARE(firstRow(), QStringLiteral("blk"));
        w.tensorView()->sortByColumn(CompareTensorModel::MaxAbsDiff, Qt::DescendingOrder);
        QCOMPARE(firstRow(), QStringLiteral("blk"));
        w.tensorView()->sortByColumn(CompareTensorModel::MaxAbsDiff, Qt::AscendingOrder);
        QCOMPARE(firstRow(), QStringLiteral("big"));
        // The statistics say what their figures cover.
        QSignalSpy shown(&w, &CompareWindow::detailShown);
        w.selectTensor(q);
        QVERIFY(QTest::qWaitFor([&] { return !shown.isEmpty(); }, 10000));
        bool finiteLabel = false;
        for (int r = 0; r < w.statsModel()->rowCount(); ++r)
            finiteLabel |= w.statsModel()->index(r, 0).data().toString() ==
                           QStringLiteral("max |Δ| over finite pairs");
        QVERIFY(finiteLabel);
    }

    // Two model.oxck files are told apart by their directories (defect 4),
    // and swapping keeps the selected tensor and the page.
    void sidesToldApartAndSwapKeepsTheView() {
        QDir(m_dir.path()).mkpath(QStringLiteral("llama"));
        QDir(m_dir.path()).mkpath(QStringLiteral("llama-ft"));
        const QString pa = m_dir.filePath(QStringLiteral("llama/model.oxck")),
                      pb = m_dir.filePath(QStringLiteral("llama-ft/model.oxck"));
        QVERIFY(QFile::copy(m_a, pa));
        QVERIFY(QFile::copy(m_b, pb));
        CompareWindow w;
        w.show();
        QVERIFY(detailOf(w, pa, pb, "layers.1.w") >= 0);
        QVERIFY2(
            w.windowTitle().startsWith(QStringLiteral("llama/model.oxck ↔ llama-ft/model.oxck")),
            qPrintable(w.windowTitle()));
        QVERIFY2(w.summaryText().contains(QStringLiteral("llama/model.oxck")) &&
                     w.summaryText().contains(QStringLiteral("llama-ft/model.oxck")),
                 qPrintable(w.summaryText()));
        w.tabs()->setCurrentIndex(1); // Values
        QWidget* page = w.tabs()->currentWidget();
        w.swapSides();
        QVERIFY(waitFinished(w));
        QCOMPARE(w.tensorView()->currentIndex().data(CompareTensorModel::FullNameRole).toString(),
                 QStringLiteral("layers.1.w"));
        QCOMPARE(w.tabs()->currentWidget(), page);
        QVERIFY(w.windowTitle().startsWith(QStringLiteral("llama-ft/model.oxck")));
    }

    // A name longer than the cap (80 characters, or half the tree) is cut
    // in a narrow tree, and shows whole once the user widens the tree.
    void longNameWholeOnceTheTreeIsWidened() {
        const std::string name(120, 'n');
        Checkpoint a, b;
        a.addTensor({name, {2}, {1.0f, 2.0f}});
        b.addTensor({name, {2}, {1.0f, 3.0f}});
        const QString pa = m_dir.filePath(QStringLiteral("long-a.oxck")),
                      pb = m_dir.filePath(QStringLiteral("long-b.oxck"));
        a.save(str(pa));
        b.save(str(pb));
        CompareWindow w;
        w.resize(900, 600);
        w.show();
        w.compare(pa, pb);
        QVERIFY(waitFinished(w));
        QTreeView* tree = w.tensorView();
        const int whole = tree->fontMetrics().horizontalAdvance(QString::fromStdString(name));
        QVERIFY(tree->columnWidth(CompareTensorModel::Name) < whole); // capped
        w.resize(2600, 900);
        auto* split = qobject_cast<QSplitter*>(tree->parentWidget());
        QVERIFY(split);
        split->setSizes({2200, 400});
        QTRY_VERIFY(tree->columnWidth(CompareTensorModel::Name) >= whole);
    }

    // The Values page shows values exactly (defect 3): what reads back to
    // the same float, as the main Values page shows; F64 in double.
    void valuesShownExactly() {
        const std::vector<float> va = {1.0000001f, 123456.79f}, vb = {1.0000002f, 123456.8f};
        Checkpoint a, b;
        a.addTensor({"t", {2}, va});
        b.addTensor({"t", {2}, vb});
        const QString pa = m_dir.filePath(QStringLiteral("exact-a.oxck")),
                      pb = m_dir.filePath(QStringLiteral("exact-b.safetensors"));
        a.save(str(pa));
        const std::vector<double> wide = {0.1, 1e300};
        testsupport::writeFile(
            pb, testsupport::stFile({{"t", "F64", {2}, testsupport::leBytes<double>(wide)}}));
        CompareWindow w;
        w.show();
        QVERIFY(detailOf(w, pa, pb, "t") >= 0);
        const CompareValuesModel* values = w.valuesModel();
        QVERIFY(settled(values));
        for (int r = 0; r < 2; ++r) {
            const QString shownA = values->index(r, CompareValuesModel::ValueA).data().toString();
            QCOMPARE(shownA, QString::fromStdString(fmt::exact(va[size_t(r)])));
            QCOMPARE(shownA.toFloat(), va[size_t(r)]);
            QCOMPARE(values->index(r, CompareValuesModel::ValueA).data(Qt::ToolTipRole).toString(),
                     shownA);
            const QString shownB = values->index(r, CompareValuesModel::ValueB).data().toString();
            QCOMPARE(shownB.toDouble(), wide[size_t(r)]); // F64: read back in double
            QCOMPARE(values->index(r, CompareValuesModel::Delta).data().toString(),
                     QString::fromStdString(fmt::exact(wide[size_t(r)] - double(va[size_t(r)]))));
        }
        QCOMPARE(values->index(0, CompareValuesModel::ValueA).data().toString(),
                 QStringLiteral("1.0000001"));
        QVERIFY(values->index(1, CompareValuesModel::ValueA).data().toString() !=
                values->index(1, CompareValuesModel::ValueB).data().toString());
        // Every cell whole, the F64 side's 24-character texts included.
        auto* page = qobject_cast<QTableView*>(w.tabs()->widget(1));
        QVERIFY(page && page->model() == values);
        QStringList cut = guisupport::cutCells(page);
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1Char('\n'))));

        // 64-bit integers beyond 2^53: shown, subtracted and told apart
        // exactly (their doubles are equal).
        const QString ia = m_dir.filePath(QStringLiteral("int-a.safetensors")),
                      ib = m_dir.filePath(QStringLiteral("int-b.safetensors"));
        const int64_t big = (int64_t(1) << 53) + 1;
        testsupport::writeFile(
            ia, testsupport::stFile({{"n", "I64", {2}, testsupport::leBytes<int64_t>({big, 5})}}));
        testsupport::writeFile(
            ib,
            testsupport::stFile({{"n", "I64", {2}, testsupport::leBytes<int64_t>({big - 1, 5})}}));
        QVERIFY(detailOf(w, ia, ib, "n") >= 0);
        QVERIFY(settled(values));
        QCOMPARE(values->index(0, CompareValuesModel::ValueA).data().toString(),
                 QStringLiteral("9007199254740993"));
        QCOMPARE(values->index(0, CompareValuesModel::ValueB).data().toString(),
                 QStringLiteral("9007199254740992"));
        QCOMPARE(values->index(0, CompareValuesModel::Delta).data().toString(),
                 QStringLiteral("-1"));
        QVERIFY(values->index(0, CompareValuesModel::Delta).data(Qt::BackgroundRole).isValid());
        QCOMPARE(values->index(1, CompareValuesModel::Delta).data().toString(),
                 QStringLiteral("0"));
        QVERIFY(!values->index(1, CompareValuesModel::Delta).data(Qt::BackgroundRole).isValid());
        cut = guisupport::cutCells(page);
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1Char('\n'))));

        // A larger font (the desktop's changed): every cell still whole.
        QFont larger = w.font();
        larger.setPointSizeF(larger.pointSizeF() * 1.6);
        w.setFont(larger);
        cut = guisupport::cutCells(page);
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1Char('\n'))));
        QVERIFY(page->verticalHeader()->defaultSectionSize() >= page->fontMetrics().height());
        // Room for I64's widest value, not only for those on screen.
        QVERIFY(page->columnWidth(CompareValuesModel::ValueA) >=
                page->fontMetrics().horizontalAdvance(QStringLiteral("-9223372036854775808")));
    }

    // At 1024 × 700 a tensor selected at the foot of the tree (by --select,
    // or a click) ends fully in view once its detail is laid out: the tree's
    // horizontal scroll bar, which comes with the detail's widths, no longer
    // covers half of its row.
    void selectedTensorFullyInView() {
        REQUIRE_CONFORMANCE();
        const QString dir = testsupport::conformanceDir() + QStringLiteral("/gguf/valid/");
        CompareWindow w;
        w.resize(1024, 700);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(detailOf(w, dir + QStringLiteral("tiny-llama-f32.safetensors"),
                         dir + QStringLiteral("tiny-llama-Q4_K_M.gguf"), "model.norm.weight") >= 0);
        QTest::qWait(50);
        QTreeView* tree = w.tensorView();
        const QRect row = tree->visualRect(tree->currentIndex());
        QVERIFY2(!row.isEmpty() && tree->viewport()->rect().contains(row),
                 qPrintable(QStringLiteral("row %1,%2 %3x%4 in a viewport %5 high")
                                .arg(row.x())
                                .arg(row.y())
                                .arg(row.width())
                                .arg(row.height())
                                .arg(tree->viewport()->height())));
    }

    // Quantized tensors (torch.save of a quantized model): compared by their
    // stored integers, and the title says what Δ is of — not the complex
    // note, which it gave before.
    void quantizedValuesComparedByTheirIntegers() {
        const auto save = [this](const QString& name, char code) {
            picklewriter::Pickle p;
            p.proto(2).emptyDict().mark();
            p.unicode("q").global("torch._utils", "_rebuild_qtensor").mark();
            p.mark().unicode("storage").global("torch", "QInt8Storage").unicode("0");
            p.unicode("cpu").binint(2).tuple().op('Q');
            p.binint(0).mark().binint(2).tuple().mark().binint(1).tuple();
            p.mark().global("torch", "per_tensor_affine").binfloat(0.1).binint(0).tuple();
            p.boolean(false).orderedDict().tuple().reduce();
            p.setitems().stop();
            const QString path = m_dir.filePath(name);
            testsupport::writeFile(
                path,
                picklewriter::torchZip("archive", p.bytes, {{"0", std::string{'\x05', code}}}));
            return path;
        };
        CompareWindow w;
        w.show();
        QVERIFY(detailOf(w, save(QStringLiteral("qa.pt"), '\x06'),
                         save(QStringLiteral("qb.pt"), '\x09'), "q") >= 0);
        const TensorDiffEntry* e = w.tensorModel()->entry(rowOf(w.tensorModel(), "q"));
        QVERIFY(e && e->elements);
        QCOMPARE(e->elements->differing, uint64_t(1));
        QCOMPARE(*e->elements->maxAbsDiff, 3.0);
        const auto* title = w.findChild<QLabel*>(QStringLiteral("tensorTitle"));
        QVERIFY2(title->text().contains(QStringLiteral("Quantized values: statistics")) &&
                     !title->text().contains(QStringLiteral("Complex")),
                 qPrintable(title->text()));
    }

    // Complex values (C64 against C128): each side as Python writes it, Δ
    // the complex difference b − a, the tint by the complex rule; every cell
    // whole; the title says statistics are not computed, and the detail
    // shows none (no error).
    void complexValuesComparedAsPairs() {
        const QString pa = m_dir.filePath(QStringLiteral("cx-a.safetensors")),
                      pb = m_dir.filePath(QStringLiteral("cx-b.safetensors"));
        testsupport::writeFile(
            pa, testsupport::stFile(
                    {{"z", "C64", {2}, testsupport::leBytes<float>({1.5f, -2.0f, 3.0f, 4.0f})}}));
        testsupport::writeFile(
            pb, testsupport::stFile(
                    {{"z", "C128", {2}, testsupport::leBytes<double>({1.5, -2.0, 0.1, 1e300})}}));
        CompareWindow w;
        w.show();
        QVERIFY(detailOf(w, pa, pb, "z") >= 0); // the detail shown: no error
        const CompareValuesModel* values = w.valuesModel();
        QVERIFY(settled(values));
        const auto cell = [values](int r, int c) { return values->index(r, c).data().toString(); };
        QCOMPARE(cell(0, CompareValuesModel::ValueA), QStringLiteral("1.5-2j"));
        QCOMPARE(cell(0, CompareValuesModel::ValueB), QStringLiteral("1.5-2j"));
        QCOMPARE(cell(0, CompareValuesModel::Delta), QStringLiteral("0+0j"));
        QVERIFY(!values->index(0, CompareValuesModel::Delta).data(Qt::BackgroundRole).isValid());
        QCOMPARE(cell(1, CompareValuesModel::ValueB), QStringLiteral("0.1+1e+300j"));
        QCOMPARE(cell(1, CompareValuesModel::Delta),
                 QString::fromStdString(fmt::exactComplex(0.1 - 3.0, 1e300 - 4.0, false)));
        QVERIFY(values->index(1, CompareValuesModel::Delta).data(Qt::BackgroundRole).isValid());
        auto* page = qobject_cast<QTableView*>(w.tabs()->widget(1));
        QVERIFY(page && page->model() == values);
        const QStringList cut = guisupport::cutCells(page);
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1Char('\n'))));
        const auto* title = w.findChild<QLabel*>(QStringLiteral("tensorTitle"));
        QVERIFY2(title->text().contains(QStringLiteral("Complex values: statistics")),
                 qPrintable(title->text()));
    }

    // A grouped-query Llama (8 heads, 4 KV heads) against its GGUF with q
    // and k rows in llama.cpp's rotary order: the Values page reads B
    // through the same row mapping as the statistics — every row of B is
    // A's value at that index (Δ 0), not B's row as stored.
    void valuesPageReadsBInAsRowOrder() {
        const uint64_t cols = 16, headDim = 8;
        const auto rowsOf = [&](uint64_t heads) { return heads * headDim; };
        const auto valuesOf = [&](uint64_t rows, float base) {
            std::vector<float> v(rows * cols);
            for (size_t i = 0; i < v.size(); ++i)
                v[i] = base + float(i) * 0.5f;
            return v;
        };
        // GGUF row g holds Hugging Face row held[g] (reshape to [heads, 2,
        // half], swap the middle axes): llama.cpp's permutation.
        const auto permuted = [&](const std::vector<float>& v, uint64_t heads) {
            const uint64_t rows = rowsOf(heads), half = headDim / 2;
            std::vector<float> out(v.size());
            for (uint64_t g = 0; g < rows; ++g) {
                const uint64_t head = g / headDim, within = g % headDim;
                const uint64_t held = head * headDim + (within % 2) * half + within / 2;
                std::copy_n(v.begin() + long(held * cols), cols, out.begin() + long(g * cols));
            }
            return out;
        };
        const std::vector<float> q = valuesOf(rowsOf(8), 0), k = valuesOf(rowsOf(4), 1000);
        const QString pa = m_dir.filePath(QStringLiteral("gqa.safetensors")),
                      pb = m_dir.filePath(QStringLiteral("gqa.gguf"));
        testsupport::writeFile(pa, testsupport::stFile({{"model.layers.0.self_attn.q_proj.weight",
                                                         "F32",
                                                         {rowsOf(8), cols},
                                                         testsupport::leBytes(q)},
                                                        {"model.layers.0.self_attn.k_proj.weight",
                                                         "F32",
                                                         {rowsOf(4), cols},
                                                         testsupport::leBytes(k)}}));
        testsupport::GgufBytes g;
        g.bytes = {'G', 'G', 'U', 'F'};
        g.u32(3);
        g.u64(2); // tensors
        g.u64(3); // metadata
        g.str("general.architecture");
        g.u32(8); // GGUF_TYPE_STRING
        g.str("llama");
        for (const auto& [key, n] : {std::pair{"llama.attention.head_count", 8},
                                     std::pair{"llama.attention.head_count_kv", 4}}) {
            g.str(key);
            g.u32(4); // GGUF_TYPE_UINT32
            g.u32(uint32_t(n));
        }
        const std::vector<float> gq = permuted(q, 8), gk = permuted(k, 4);
        uint64_t offset = 0;
        for (const auto& [name, v] :
             {std::pair{"blk.0.attn_q.weight", &gq}, std::pair{"blk.0.attn_k.weight", &gk}}) {
            g.str(name);
            g.u32(2);
            g.u64(cols); // ne[0]: a row's length
            g.u64(v->size() / cols);
            g.u32(0); // GGML_TYPE_F32
            g.u64(offset);
            offset += (v->size() * 4 + 31) / 32 * 32;
        }
        g.pad32();
        for (const std::vector<float>* v : {&gq, &gk}) {
            for (float x : *v)
                g.u32(std::bit_cast<uint32_t>(x));
            g.pad32();
        }
        testsupport::writeFile(pb, std::string(g.bytes.begin(), g.bytes.end()));

        CompareWindow w;
        w.show();
        for (const auto& [name, values] :
             {std::pair{"model.layers.0.self_attn.q_proj.weight", &q},
              std::pair{"model.layers.0.self_attn.k_proj.weight", &k}}) {
            const int r = detailOf(w, pa, pb, name);
            QVERIFY(r >= 0);
            QVERIFY(!w.tensorModel()->entry(r)->rowOrderB.same());
            QCOMPARE(*w.tensorModel()->entry(r)->elements->relL2, 0.0);
            const CompareValuesModel* page = w.valuesModel();
            QVERIFY(settled(page));
            QCOMPARE(uint64_t(page->rowCount()), uint64_t(values->size()));
            for (int i = 0; i < page->rowCount(); ++i) {
                const QString b = page->index(i, CompareValuesModel::ValueB).data().toString();
                QVERIFY2(b.toFloat() == (*values)[size_t(i)],
                         qPrintable(QStringLiteral("%1 at %2: B shows %3")
                                        .arg(QString::fromLatin1(name))
                                        .arg(i)
                                        .arg(b)));
                QCOMPARE(page->index(i, CompareValuesModel::Delta).data().toString(),
                         QStringLiteral("0"));
            }
        }
    }

    // The menu bar every window has (issue 22, item 9): File, View, Help;
    // Ctrl+F filters, Ctrl+2 the Values page, Ctrl+W closes.
    void menusAndStandardShortcuts() {
        QPointer<CompareWindow> w = new CompareWindow; // deletes itself on close
        w->show();
        w->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(w));
        w->compare(m_a, m_b);
        QVERIFY(waitFinished(*w));
        QStringList menus;
        for (QAction* a : w->menuBar()->actions())
            menus << a->text().remove(QLatin1Char('&'));
        QCOMPARE(menus, (QStringList{QStringLiteral("File"), QStringLiteral("View"),
                                     QStringLiteral("Help")}));
        QTest::keyClick(w, Qt::Key_2, Qt::ControlModifier);
        QCOMPARE(w->tabs()->tabText(w->tabs()->currentIndex()), QStringLiteral("Values"));
        QTest::keyClick(w, Qt::Key_F, Qt::ControlModifier);
        QCOMPARE(QApplication::focusWidget()->objectName(), QStringLiteral("tensorFilter"));
        QTest::keyClick(w, Qt::Key_D, Qt::ControlModifier);
        QVERIFY(w->findChild<QCheckBox*>(QStringLiteral("differencesOnly"))->isChecked());
        QTest::keyClick(w, Qt::Key_W, Qt::ControlModifier);
        QTRY_VERIFY(w.isNull());
    }

    // At 1024 × 700 (defect 10): Max |Δ| and Differing in view, the names
    // giving way (elided, whole in their tooltips).
    void figuresInViewAt1024x700() {
        CompareWindow w;
        w.resize(1024, 700);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.compare(m_a, m_b);
        QVERIFY(waitFinished(w));
        QTreeView* tree = w.tensorView();
        QHeaderView* h = tree->header();
        for (int col : {int(CompareTensorModel::MaxAbsDiff), int(CompareTensorModel::Differing)})
            QVERIFY2(h->sectionViewportPosition(col) + h->sectionSize(col) <=
                         tree->viewport()->width(),
                     qPrintable(QStringLiteral("column %1 cut: %2 + %3 > %4; widths %5 %6 %7 %8 "
                                               "%9")
                                    .arg(col)
                                    .arg(h->sectionViewportPosition(col))
                                    .arg(h->sectionSize(col))
                                    .arg(tree->viewport()->width())
                                    .arg(h->sectionSize(0))
                                    .arg(h->sectionSize(1))
                                    .arg(h->sectionSize(2))
                                    .arg(h->sectionSize(4))
                                    .arg(h->sectionSize(5))));
        const QModelIndex leaf = w.tensorProxy()->mapFromSource(
            w.tensorModel()->indexOfTensor(rowOf(w.tensorModel(), "layers.0.w")));
        QCOMPARE(leaf.data(Qt::ToolTipRole).toString(), QStringLiteral("layers.0.w"));
    }

    void damagedSideIsNamedAndTheComparisonStays() {
        CompareWindow w;
        w.show();
        w.compare(m_a, m_b);
        QVERIFY(waitFinished(w));
        QVERIFY(w.errorText().isEmpty());
        QSignalSpy failed(&w, &CompareWindow::comparisonFailed);
        w.compare(m_a, m_bad);
        QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty(); }, 10000));
        QVERIFY2(w.errorText().contains(QStringLiteral("side B")), qPrintable(w.errorText()));
        QVERIFY(w.errorText().contains(m_bad));
        QCOMPARE(w.tensorModel()->tensorCount(), 5); // what was shown stays
        failed.clear();
        w.compare(m_bad, m_b);
        QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty(); }, 10000));
        QVERIFY(w.errorText().contains(QStringLiteral("side A")));
        failed.clear();
        w.compare(m_a, m_gradA);
        QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty(); }, 10000));
        QVERIFY(w.errorText().contains(QStringLiteral("cannot be compared")));
    }

    void gradientChanges() {
        CompareWindow w;
        QAbstractItemModelTester tester(w.changesModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        w.show();
        w.compare(m_gradA, m_gradB);
        QVERIFY(waitFinished(w));
        QVERIFY(w.result()->gradient);
        const QStandardItemModel* m = w.changesModel();
        QCOMPARE(m->rowCount(), 4); // fields, nodes, edges, optimizer state
        const QStandardItem* nodes = m->item(1);
        QCOMPARE(nodes->rowCount(), 1);
        QCOMPARE(nodes->child(0, 0)->text(), QStringLiteral("n3"));
        QCOMPARE(nodes->child(0, 1)->text(), CompareTensorModel::statusText(DiffStatus::Added));
        QCOMPARE(m->item(0)->child(0, 2)->text(), QStringLiteral("1"));
        QCOMPARE(m->item(0)->child(0, 3)->text(), QStringLiteral("2"));
        QVERIFY(w.summaryText().contains(QStringLiteral("1 added")));
    }

    void cancelDeliversNothing() {
        CompareWindow w;
        w.show();
        QSignalSpy done(&w, &CompareWindow::comparisonFinished);
        w.compare(m_a, m_b);
        w.cancel();
        QTest::qWait(500);
        QVERIFY(done.isEmpty());
        QVERIFY(!w.result());
    }

    void closingWhileComparingIsClean() {
        // The running task is cancelled as the window goes; its "cancelled"
        // must not reach the half-destroyed window (that crashed).
        auto* w = new CompareWindow;
        w->show();
        w->compare(m_a, m_b);
        QCOMPARE(w->statusBar()->currentMessage(), QStringLiteral("Comparing…")); // still running
        delete w;
        QTest::qWait(100); // the worker's late result goes nowhere
    }

    void sideRewrittenOnDiskIsComparedAgain() {
        QTemporaryDir dir;
        const QString b = dir.filePath(QStringLiteral("live.oxck"));
        QVERIFY(QFile::copy(m_a, b));
        CompareWindow w;
        w.show();
        w.compare(m_a, b);
        QVERIFY(waitFinished(w));
        QVERIFY(!w.result()->tensors->differs());
        QSignalSpy done(&w, &CompareWindow::comparisonFinished);
        Checkpoint c = Checkpoint::load(str(m_a));
        c.tensors[1].data[0] = 42.0f;
        c.save(str(b)); // a training job writing its next checkpoint
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 10000));
        QCOMPARE(w.tensorModel()->entry(1)->status, DiffStatus::Changed);
        QCOMPARE(w.statusBar()->currentMessage(),
                 QStringLiteral("live.oxck changed on disk; compared again."));
        // Saved again (by rename, a new file at the path): still followed.
        done.clear();
        c.tensors[1].data[0] = 43.0f;
        c.save(str(b));
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 10000));
        float v = 0;
        w.result()->b->readValues(1, 0, 1, &v);
        QCOMPARE(v, 43.0f);
    }

    // A sharded model on side B, given by its index or by its folder: one
    // of its shards rewritten in place is compared again.
    void shardOfASideRewrittenIsComparedAgain_data() {
        QTest::addColumn<bool>("byFolder");
        QTest::newRow("index") << false;
        QTest::newRow("folder") << true;
    }
    void shardOfASideRewrittenIsComparedAgain() {
        QFETCH(bool, byFolder);
        QTemporaryDir dir;
        testsupport::ShardedFixture f;
        const QString single = QString::fromStdString(
            f.writeSingle(str(dir.filePath(QStringLiteral("one.safetensors")))));
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("model")));
        const QString index =
            QString::fromStdString(f.writeTo(str(dir.filePath(QStringLiteral("model")))));
        CompareWindow w;
        w.show();
        w.compare(single, byFolder ? dir.filePath(QStringLiteral("model")) : index);
        QVERIFY(waitFinished(w));
        QVERIFY(!w.result()->tensors->differs());
        QSignalSpy done(&w, &CompareWindow::comparisonFinished);
        f.bWeight = {4.0f, 8.0f, -16.0f, 0.25f};
        testsupport::ShardedFixture::write(
            str(dir.filePath(QStringLiteral("model/") +
                             QString::fromStdString(testsupport::ShardedFixture::shardName(2)))),
            testsupport::stFile(f.shard2(), f.meta2));
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 10000));
        QVERIFY(w.result()->tensors->differs());
        QCOMPARE(w.statusBar()->currentMessage(),
                 QString::fromStdString(testsupport::ShardedFixture::shardName(2)) +
                     QStringLiteral(" changed on disk; compared again."));
    }

    void dropChoosesCompare() {
        MainWindow main;
        QVERIFY(openInMain(main, m_a));
        // A plain drop (no modifier) shows the menu; Down moves from Open to
        // "Compare with the open file", Enter takes it.
        dropsupport::MenuAnswer answer({Qt::Key_Down, Qt::Key_Return});
        QVERIFY(dropsupport::drop(&main, {m_b}));
        QVERIFY(answer.seen());
        QCOMPARE(answer.actions(),
                 (QStringList{QStringLiteral("openDropped"), QStringLiteral("compareWithOpenFile"),
                              QStringLiteral("openInNewWindow")}));
        QVERIFY(answer.texts().at(1).contains(QStringLiteral("a.oxck → b.oxck")));
        QCOMPARE(answer.defaultAction(), QStringLiteral("openDropped"));
        QCOMPARE(answer.activeAction(), QStringLiteral("openDropped"));
        const QList<CompareWindow*> compares = visible<CompareWindow>();
        QCOMPARE(compares.size(), 1);
        CompareWindow* compare = compares.first();
        QCOMPARE(compare->pathA(), m_a);
        QCOMPARE(compare->pathB(), m_b);
        QCOMPARE(main.currentPath(), m_a); // the open file stays open
        QVERIFY(waitFinished(*compare));
        compare->close();
    }

    void plainDropOpensByDefault() {
        MainWindow main;
        QVERIFY(openInMain(main, m_a));
        QSignalSpy loaded(&main, &MainWindow::documentLoaded);
        dropsupport::MenuAnswer answer({Qt::Key_Return});
        QVERIFY(dropsupport::drop(&main, {m_b}));
        QVERIFY(answer.seen());
        QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty(); }, 10000));
        QCOMPARE(main.currentPath(), m_b);
        QVERIFY(visible<CompareWindow>().isEmpty());
    }

    void escapeDismissesTheDrop() {
        MainWindow main;
        QVERIFY(openInMain(main, m_a));
        const auto mains = visible<MainWindow>().size();
        QSignalSpy loading(&main, &MainWindow::documentLoaded);
        dropsupport::MenuAnswer answer({Qt::Key_Escape});
        QVERIFY(dropsupport::drop(&main, {m_b}));
        QVERIFY(answer.seen());
        QTest::qWait(200);
        QVERIFY(loading.isEmpty());
        QCOMPARE(main.currentPath(), m_a);
        QVERIFY(visible<CompareWindow>().isEmpty());
        QCOMPARE(visible<MainWindow>().size(), mains);
    }

    void dropOpensInNewWindow() {
        MainWindow main;
        QVERIFY(openInMain(main, m_a));
        const QList<MainWindow*> before = visible<MainWindow>();
        dropsupport::MenuAnswer answer({Qt::Key_Down, Qt::Key_Down, Qt::Key_Return});
        QVERIFY(dropsupport::drop(&main, {m_b}));
        QVERIFY(answer.seen());
        MainWindow* other = nullptr;
        for (MainWindow* w : visible<MainWindow>())
            if (!before.contains(w))
                other = w;
        QVERIFY(other);
        QVERIFY(QTest::qWaitFor([&] { return other->currentPath() == m_b; }, 10000));
        QCOMPARE(main.currentPath(), m_a);
        QVERIFY(visible<CompareWindow>().isEmpty());
        other->close();
    }

    void severalFilesOrNoDocumentOpenWithoutMenu() {
        MainWindow empty;
        empty.show();
        dropsupport::MenuAnswer none({Qt::Key_Escape});
        QSignalSpy loaded(&empty, &MainWindow::documentLoaded);
        QVERIFY(dropsupport::drop(&empty, {m_a}));
        QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty(); }, 10000));
        QVERIFY(!none.seen());
        QCOMPARE(empty.currentPath(), m_a);
        const QList<MainWindow*> before = visible<MainWindow>();
        QVERIFY(dropsupport::drop(&empty, {m_b, m_a}));
        QVERIFY(QTest::qWaitFor([&] { return empty.currentPath() == m_b; }, 10000));
        QVERIFY(!none.seen());
        for (MainWindow* w : visible<MainWindow>())
            if (!before.contains(w))
                w->close(); // the second file's window
    }
};

QTEST_MAIN(TestCompareWindow)
#include "tst_comparewindow.moc"
