#include "gguf/blockpanel.h"
#include "guisupport.h"
#include "safetensorsbuilder.h"
#include "tensor/tensorvaluesmodel.h"
#include "tensor/tensorvaluesview.h"
#include "testsupport.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/document/document.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace ckptscope;

namespace {

// Values whose shortest exact text is as long as f32 text gets.
const std::vector<float> kWide = {3.0f,
                                  -std::numeric_limits<float>::max(),
                                  -0.000730991136f,
                                  -1.17549435e-38f,
                                  -1.23456791e-30f,
                                  -0.00123456789f,
                                  123456.789f,
                                  -8.8888888e+37f,
                                  std::numeric_limits<float>::denorm_min(),
                                  -0.0f};

std::shared_ptr<const Document> save(QTemporaryDir& dir, const Checkpoint& c) {
    const QString path = dir.filePath(QStringLiteral("v.oxck"));
    c.save(path.toStdString());
    return Document::open(path.toStdString());
}

// Asks for every cell's value, then waits until they are read (the model
// reads off the GUI thread) and the Block panel has its block.
bool settle(TensorValuesView& view) {
    TensorValuesModel* m = view.model();
    for (int r = 0; r < m->rowCount(); ++r)
        for (int c = 0; c < m->columnCount(); ++c)
            m->index(r, c).data();
    return QTest::qWaitFor(
        [&] { return m->pendingReads() == 0 && !view.blockPanel()->isReading(); }, 10000);
}

} // namespace

class TestTensorValuesView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Every cell's text fits its column (no "3...."), and the text is the
    // exact value: it reads back to the same f32, in the cell and in a copy.
    void cellsShowExactValuesThatFit_data() {
        QTest::addColumn<bool>("grid");
        QTest::newRow("column") << false;
        QTest::newRow("grid") << true;
    }
    void cellsShowExactValuesThatFit() {
        QFETCH(bool, grid);
        QTemporaryDir dir;
        Checkpoint c;
        const uint64_t n = kWide.size();
        c.addTensor(
            {"w", grid ? std::vector<uint64_t>{2, n / 2} : std::vector<uint64_t>{n}, kWide});
        TensorValuesView view;
        view.resize(1600, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setTensor(save(dir, c), 0);
        QVERIFY(settle(view));
        QTableView* table = view.table();
        QAbstractItemModel* model = table->model();
        for (int r = 0; r < model->rowCount(); ++r)
            for (int col = 0; col < model->columnCount(); ++col) {
                const QModelIndex idx = model->index(r, col);
                const QString text = idx.data().toString();
                const float stored = kWide[size_t(r * model->columnCount() + col)];
                // Exact: the formatter's text, reading back to the same bits.
                QCOMPARE(text, QString::fromStdString(fmt::exact(stored)));
                const float back = std::strtof(text.toLatin1().constData(), nullptr);
                QVERIFY(std::memcmp(&back, &stored, 4) == 0);
                QVERIFY(idx.data(Qt::ToolTipRole).toString().contains(text));
            }
        // Fits: the delegate's own size for every cell within its column.
        const QStringList cut = guisupport::cutCells(table);
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1Char('\n'))));
        table->selectAll();
        const QString copied = view.selectionText();
        for (float v : kWide)
            QVERIFY(copied.contains(QString::fromStdString(fmt::exact(v))));
    }

    // Complex values (torch's complex64 and complex128) as Python writes
    // them, every part exact, each cell whole in a column as wide as the
    // dtype's widest pair.
    void complexValuesExactAndWhole() {
        REQUIRE_CONFORMANCE();
        const auto doc = Document::open(
            testsupport::corpus(QStringLiteral("pytorch/valid/dtypes.pt")).toStdString());
        const auto indexOf = [&doc](const std::string& name) {
            for (size_t i = 0; i < doc->tensors().size(); ++i)
                if (doc->tensors()[i].name == name)
                    return int(i);
            return -1;
        };
        TensorValuesView view;
        view.resize(1000, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setTensor(doc, indexOf("complex128"));
        QVERIFY(settle(view));
        const QAbstractItemModel* m = view.table()->model();
        QCOMPARE(m->index(0, 0).data().toString(), QStringLiteral("1-1j"));
        QCOMPARE(m->index(0, 1).data().toString(), QStringLiteral("nan-infj"));
        QCOMPARE(m->index(1, 0).data().toString(), QStringLiteral("-0+5e-324j"));
        QCOMPARE(m->index(1, 1).data().toString(),
                 QStringLiteral("1.7976931348623157e+308+2.2250738585072014e-308j"));
        QStringList cut = guisupport::cutCells(view.table());
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1Char('\n'))));
        view.setTensor(doc, indexOf("complex64"));
        QVERIFY(settle(view));
        QCOMPARE(m->index(3, 0).data().toString(), QStringLiteral("3.4028235e+38+1e-45j"));
        QCOMPARE(m->index(4, 0).data().toString(), QStringLiteral("-inf+nanj"));
        cut = guisupport::cutCells(view.table());
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1Char('\n'))));
    }

    // 64-bit integers and F64 exactly as the file holds them (they were
    // shown through a float: 16777217 as 16777216, 2^53 + 1 as
    // 9.007199e+15), each in a column as wide as its dtype's widest text.
    void wideDtypesExactAndWhole() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("wide.safetensors"));
        const std::vector<int64_t> i64 = {(int64_t(1) << 53) + 1, 16777217,
                                          std::numeric_limits<int64_t>::min()};
        const std::vector<uint64_t> u64 = {std::numeric_limits<uint64_t>::max()};
        const std::vector<double> f64 = {3.141592653589793, -2.2250738585072014e-308};
        testsupport::writeFile(path,
                               testsupport::stFile({{"i", "I64", {3}, testsupport::leBytes(i64)},
                                                    {"u", "U64", {1}, testsupport::leBytes(u64)},
                                                    {"f", "F64", {2}, testsupport::leBytes(f64)}}));
        const auto doc = Document::open(path.toStdString());
        const std::vector<QStringList> expected = {
            {QStringLiteral("9007199254740993"), QStringLiteral("16777217"),
             QStringLiteral("-9223372036854775808")},
            {QStringLiteral("18446744073709551615")},
            {QStringLiteral("3.141592653589793"), QStringLiteral("-2.2250738585072014e-308")}};
        TensorValuesView view;
        view.resize(800, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        for (int t = 0; t < 3; ++t) {
            view.setTensor(doc, t);
            QVERIFY(settle(view));
            QStringList shown;
            for (int r = 0; r < view.table()->model()->rowCount(); ++r)
                shown << view.table()->model()->index(r, 0).data().toString();
            QCOMPARE(shown, expected[size_t(t)]);
            const QStringList cut = guisupport::cutCells(view.table());
            QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QLatin1Char('\n'))));
        }
    }

    // A tensor whose shape does not match its stored values is shown as a
    // column, and the page says why.
    void shapeMismatchIsExplained() {
        REQUIRE_CONFORMANCE();
        auto doc = Document::open(
            (testsupport::conformanceDir() + QStringLiteral("/valid/edge_cases.oxck"))
                .toStdString());
        int index = -1;
        for (size_t i = 0; i < doc->tensors().size(); ++i)
            if (doc->tensors()[i].name == "mismatch_shape_2x3_data_4")
                index = int(i);
        QVERIFY(index >= 0);
        TensorValuesView view;
        view.setTensor(doc, index);
        QCOMPARE(view.model()->columnCount(), 1);
        QCOMPARE(view.model()->rowCount(), 4);
        const QString shown = guisupport::shownLabels(&view).join(QLatin1Char('|'));
        QVERIFY2(shown.contains(QStringLiteral("[2, 3]")) && shown.contains(QStringLiteral("6")) &&
                     shown.contains(QStringLiteral("4 values")),
                 qPrintable(shown));
        // A consistent tensor says nothing of the kind.
        for (size_t i = 0; i < doc->tensors().size(); ++i) {
            const auto& t = doc->tensors()[i];
            if (t.elementCount && *t.elementCount == t.dataLen && t.dataLen > 0) {
                view.setTensor(doc, int(i));
                QVERIFY(!guisupport::shownLabels(&view)
                             .join(QLatin1Char('|'))
                             .contains(QStringLiteral("[2, 3]")));
                break;
            }
        }
    }

    // The Block panel of a Q4_K tensor: the selected element's block, where it
    // lies, its quant code and its value (ggml's, the cell's); a new selection
    // a new block; no panel for F32 or OXCK tensors.
    void blockPanelOfQ4K() {
        REQUIRE_CONFORMANCE();
        const QString gguf = testsupport::corpus(QStringLiteral("gguf"));
        if (!QDir(gguf + QStringLiteral("/expected")).exists())
            CKPTSCOPE_NO_CORPUS("no gguf/ in the conformance corpus");
        const QString file = gguf + QStringLiteral("/valid/type-q4_K.gguf");
        const auto doc = Document::open(testsupport::str(file));
        const std::string bytes = testsupport::readFile(file);
        const std::string want =
            testsupport::readFile(gguf + QStringLiteral("/expected/type-q4_K.gguf.0.f32"));
        const uint64_t offset =
            testsupport::loadJson(gguf + QStringLiteral("/expected/type-q4_K.gguf.json"))
                .at("tensors")[0]
                .at("offset");
        TensorValuesView view;
        view.resize(1400, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setTensor(doc, 0);
        BlockPanel* panel = view.blockPanel();
        QVERIFY(panel->isVisible());
        QVERIFY(settle(view));
        // The first element until another is selected.
        QCOMPARE(panel->fieldText(QStringLiteral("value")),
                 view.model()->index(0, 0).data().toString());
        QCOMPARE(view.model()->columnCount(), 256); // ne [256, 3]: 3 rows of 256
        QString previous;
        for (const auto& [row, col] : {std::pair{1, 50}, std::pair{2, 200}}) {
            view.table()->selectionModel()->setCurrentIndex(view.model()->index(row, col),
                                                            QItemSelectionModel::ClearAndSelect);
            QVERIFY(settle(view));
            const uint64_t e = uint64_t(row) * 256 + uint64_t(col);
            const uint64_t block = e / 256;
            QVERIFY(panel->fieldText(QStringLiteral("block")).startsWith(QString::number(block)));
            QVERIFY2(panel->fieldText(QStringLiteral("file offset"))
                         .startsWith(QString::number(offset + block * 144)),
                     qPrintable(panel->fieldText(QStringLiteral("file offset"))));
            // Q4_K: sub-block e % 256 / 32; its nibble at byte 16 + 32·(i / 64) + i % 32.
            const uint32_t i = uint32_t(e % 256);
            const uint8_t byte =
                uint8_t(bytes[size_t(offset + block * 144 + 16 + 32 * (i / 64) + i % 32)]);
            const int code = i % 64 < 32 ? byte & 0xF : byte >> 4;
            QVERIFY2(panel->fieldText(QStringLiteral("quant code q"))
                         .startsWith(QString::number(code) + QLatin1Char(' ')),
                     qPrintable(panel->fieldText(QStringLiteral("quant code q"))));
            QCOMPARE(panel->fieldText(QStringLiteral("sub-block")), QString::number(i / 32));
            float ggml;
            std::memcpy(&ggml, want.data() + e * 4, 4);
            const QString value = panel->fieldText(QStringLiteral("value"));
            QCOMPARE(value, QString::fromStdString(fmt::exact(ggml)));
            QCOMPARE(value, view.model()->index(row, col).data().toString());
            QVERIFY(value != previous || previous.isEmpty());
            QVERIFY(panel->fieldText(QStringLiteral("block")) != previous);
            previous = panel->fieldText(QStringLiteral("block"));
        }
        // F32 GGUF tensor and an OXCK tensor: no panel.
        view.setTensor(
            Document::open(testsupport::str(gguf + QStringLiteral("/valid/type-f32.gguf"))), 0);
        QVERIFY(!panel->isVisible());
        view.setTensor(doc, 0);
        QVERIFY(panel->isVisible());
        QTemporaryDir dir;
        Checkpoint c;
        c.addTensor({"w", {2, 5}, std::vector<float>(10, 1.0f)});
        view.setTensor(save(dir, c), 0);
        QVERIFY(!panel->isVisible());
    }
};

QTEST_MAIN(TestTensorValuesView)
#include "tst_tensorvaluesview.moc"
