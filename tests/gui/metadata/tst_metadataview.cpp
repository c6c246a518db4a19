#include "metadata/metadatamodel.h"
#include "metadata/metadatatext.h"
#include "metadata/metadataview.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/gguf/ggufreader.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/io/bytesource.h"
#include "countingsource.h"
#include "testsupport.h"

#include <nlohmann/json.hpp>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QDateTime>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <limits>

using namespace ckptscope;
using testsupport::str;

namespace {

// Copy Array Items, read off the GUI thread: the text it put on the
// clipboard once the read is done.
QString copiedArrayItems(MetadataView& view) {
    QSignalSpy copied(&view, &MetadataView::arrayItemsCopied);
    view.copySelectedArrayItems();
    if (!copied.wait(10000))
        return QStringLiteral("(nothing copied)");
    return copied.first().first().toString();
}

std::shared_ptr<const Document> open(const std::string& bytes, const std::string& name) {
    return Document::open(
        std::make_shared<MemorySource>(std::vector<uint8_t>(bytes.begin(), bytes.end()), name));
}

// Reads TSV as a spreadsheet does: fields in double quotes may hold tabs,
// line breaks and doubled quotes.
QList<QStringList> parseTsv(const QString& text) {
    QList<QStringList> rows{{}};
    QString field;
    bool quoted = false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (quoted) {
            if (c == QLatin1Char('"') && i + 1 < text.size() && text[i + 1] == QLatin1Char('"')) {
                field += c;
                ++i;
            } else if (c == QLatin1Char('"'))
                quoted = false;
            else
                field += c;
        } else if (c == QLatin1Char('"') && field.isEmpty()) {
            quoted = true;
        } else if (c == QLatin1Char('\t')) {
            rows.last() << field;
            field.clear();
        } else if (c == QLatin1Char('\n')) {
            rows.last() << field;
            field.clear();
            rows.push_back({});
        } else {
            field += c;
        }
    }
    rows.last() << field;
    return rows;
}

// A metadata-only GGUF v3: a 2 500-token vocabulary, an array of two i32
// arrays ([7, -8, 9] and [1, 2]) and a u32.
std::vector<uint8_t> ggufWithArrays() {
    std::vector<uint8_t> b = {'G', 'G', 'U', 'F'};
    auto put = [&b](uint64_t v, int n) {
        for (int i = 0; i < n; ++i)
            b.push_back(uint8_t(v >> (8 * i)));
    };
    auto str = [&](const std::string& s) {
        put(s.size(), 8);
        b.insert(b.end(), s.begin(), s.end());
    };
    const auto arr = uint32_t(gguf::ValueType::Array), i32 = uint32_t(gguf::ValueType::I32);
    put(3, 4); // version
    put(0, 8); // tensors
    put(3, 8); // keys
    str("tokenizer.ggml.tokens");
    put(arr, 4);
    put(uint32_t(gguf::ValueType::Str), 4);
    put(2500, 8);
    for (int i = 0; i < 2500; ++i)
        str("t" + std::to_string(i));
    str("nested");
    put(arr, 4);
    put(arr, 4);
    put(2, 8);
    for (const std::vector<int>& inner : {std::vector<int>{7, -8, 9}, std::vector<int>{1, 2}}) {
        put(i32, 4);
        put(inner.size(), 8);
        for (int v : inner)
            put(uint32_t(v), 4);
    }
    str("k.u32");
    put(uint32_t(gguf::ValueType::U32), 4);
    put(5, 4);
    return b;
}

// The row of `key` among the top-level rows of the view's model (source).
QModelIndex rowOf(const MetadataModel* m, const QString& key) {
    for (int r = 0; r < m->rowCount(); ++r)
        if (m->index(r, MetadataModel::Key).data().toString() == key)
            return m->index(r, 0);
    return {};
}

QStringList childValues(const QAbstractItemModel* m, const QModelIndex& parent) {
    QStringList out;
    for (int r = 0; r < m->rowCount(parent); ++r)
        if (!m->index(r, 0, parent).data(MetadataModel::MoreRole).toBool())
            out << m->index(r, MetadataModel::Value, parent).data().toString();
    return out;
}

} // namespace

class TestMetadataView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A GGUF's metadata: each key's type as ggml names it, a 100-string
    // vocabulary as one row whose tooltip shows its first items and whose
    // Copy Array Items gives every item, as ggml reads them (conformance).
    void ggufTypesAndArrayItems() {
        REQUIRE_CONFORMANCE();
        const QString file =
            testsupport::corpus(QStringLiteral("gguf/valid/tiny-llama-Q4_K_M.gguf"));
        const nlohmann::json expected = testsupport::loadJson(
            testsupport::corpus(QStringLiteral("gguf/expected/tiny-llama-Q4_K_M.gguf.json")));
        std::vector<std::string> tokens;
        for (const auto& m : expected["metadata"])
            if (m["key"] == "tokenizer.ggml.tokens")
                tokens = m["value"]["values"].get<std::vector<std::string>>();
        QCOMPARE(tokens.size(), size_t(100));
        MetadataView view;
        view.setDocument(Document::open(file.toStdString()));
        QVERIFY(!view.isColumnHidden(MetadataModel::Type));
        const MetadataModel* m = view.metadataModel();
        int row = -1;
        for (int r = 0; r < m->rowCount(); ++r)
            if (m->index(r, MetadataModel::Key).data().toString() ==
                QStringLiteral("tokenizer.ggml.tokens"))
                row = r;
        QVERIFY(row >= 0);
        QCOMPARE(m->index(row, MetadataModel::Type).data().toString(), QStringLiteral("arr[str]"));
        // The preview is read off the GUI thread: "reading" first.
        const QModelIndex cell = m->index(row, MetadataModel::Value);
        QVERIFY(cell.data(Qt::ToolTipRole).toString().contains(QStringLiteral("Reading")));
        QTRY_VERIFY(!cell.data(Qt::ToolTipRole).toString().contains(QStringLiteral("Reading")));
        const QString tip = cell.data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QString::fromStdString(tokens[19])), qPrintable(tip));
        QVERIFY(!tip.contains(QString::fromStdString(tokens[20])));
        QVERIFY(tip.contains(QStringLiteral("80 more")));
        const auto* proxy = static_cast<const QSortFilterProxyModel*>(view.model());
        view.selectionModel()->select(proxy->mapFromSource(m->index(row, 0)),
                                      QItemSelectionModel::Select | QItemSelectionModel::Rows);
        QStringList all;
        for (const std::string& t : tokens)
            all << QString::fromStdString(t);
        QCOMPARE(copiedArrayItems(view), all.join(QLatin1Char('\n')));
        QCOMPARE(QApplication::clipboard()->text(), all.join(QLatin1Char('\n')));
        // An OXCK file has no types: the column stays hidden.
        Checkpoint c;
        c.setMetadata("step", "1");
        c.addTensor({"t", {1}, {1}});
        QTemporaryDir dir;
        c.save(str(dir.filePath(QStringLiteral("m.oxck"))));
        view.setDocument(Document::open(str(dir.filePath(QStringLiteral("m.oxck")))));
        QVERIFY(view.isColumnHidden(MetadataModel::Type));
    }

    // A Trainer's training_args.bin: the object's fields at once, as a
    // table (its one top row, the state, expanded), enums by name.
    void pickledObjectFieldsShownAtOnce() {
        REQUIRE_CONFORMANCE();
        MetadataView view;
        view.setDocument(Document::open(
            testsupport::corpus(QStringLiteral("pytorch/valid/checkpoint-50/training_args.bin"))
                .toStdString()));
        const QAbstractItemModel* m = view.model();
        QCOMPARE(m->rowCount(), 1);
        const QModelIndex state = m->index(0, 0);
        QVERIFY(view.isExpanded(state));
        QCOMPARE(m->rowCount(state), 31);
        QStringList fields;
        for (int r = 0; r < m->rowCount(state); ++r)
            fields << m->index(r, 0, state).data().toString() + QLatin1Char('=') +
                          m->index(r, 1, state).data().toString();
        QVERIFY2(fields.contains(QStringLiteral("learning_rate=0.0005")) &&
                     fields.contains(QStringLiteral("eval_strategy=IntervalStrategy.STEPS")) &&
                     fields.contains(QStringLiteral("_setup_devices=torch.device('cpu')")),
                 qPrintable(fields.join(QLatin1Char('|'))));
    }

    // Arrays expand to their items, read only when expanded, a thousand at a
    // time with a "… N more" row that reads the next; nested arrays expand
    // the same way; Copy Array Items copies a nested one whole.
    void arraysExpandItemByItem() {
        const auto source =
            std::make_shared<testsupport::CountingSource>(ggufWithArrays(), "built.gguf");
        const auto doc = Document::open(source);
        MetadataView view;
        QAbstractItemModelTester tester(view.metadataModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const int atOpen = source->reads;
        view.setDocument(doc);
        QCOMPARE(int(source->reads), atOpen); // nothing read until expanded
        MetadataModel* m = view.metadataModel();
        const auto* proxy = static_cast<const QSortFilterProxyModel*>(view.model());
        const QModelIndex tokens = rowOf(m, QStringLiteral("tokenizer.ggml.tokens"));
        QVERIFY(tokens.isValid());
        QCOMPARE(m->rowCount(tokens), 0);
        QVERIFY(m->hasChildren(tokens));
        QVERIFY(!m->hasChildren(rowOf(m, QStringLiteral("k.u32"))));
        view.expand(proxy->mapFromSource(tokens));
        QTRY_COMPARE(m->rowCount(tokens), 1001); // a thousand items and "… 1,500 more"
        QVERIFY(source->reads > atOpen);
        const QModelIndex more = m->index(1000, 0, tokens);
        QVERIFY(more.data(MetadataModel::MoreRole).toBool());
        QVERIFY2(more.siblingAtColumn(MetadataModel::Value)
                     .data()
                     .toString()
                     .contains(QStringLiteral("1,500 more")),
                 qPrintable(more.siblingAtColumn(MetadataModel::Value).data().toString()));
        QCOMPARE(m->index(999, MetadataModel::Key, tokens).data().toString(),
                 QStringLiteral("[999]"));
        QCOMPARE(m->index(999, MetadataModel::Type, tokens).data().toString(),
                 QStringLiteral("str"));
        // "… more" twice: every item, in order, and no "more" row left.
        for (int round = 0; round < 2; ++round) {
            const QModelIndex last = m->index(m->rowCount(tokens) - 1, 0, tokens);
            Q_EMIT view.activated(proxy->mapFromSource(last));
            QTRY_COMPARE(m->pendingReads(), 0);
        }
        QCOMPARE(m->rowCount(tokens), 2500);
        QStringList want;
        for (int i = 0; i < 2500; ++i)
            want << QStringLiteral("t%1").arg(i);
        QCOMPARE(childValues(m, tokens), want);
        QVERIFY(!m->hasUnread(tokens));
        // Nested arrays: each a row of its own, expandable to its items.
        const QModelIndex nested = rowOf(m, QStringLiteral("nested"));
        view.expand(proxy->mapFromSource(nested));
        // The view reads on expansion once its pending layout runs.
        QTRY_COMPARE(m->rowCount(nested), 2);
        QCOMPARE(childValues(m, nested),
                 (QStringList{QStringLiteral("[3 × i32]"), QStringLiteral("[2 × i32]")}));
        const QModelIndex first = m->index(0, 0, nested);
        QCOMPARE(first.siblingAtColumn(MetadataModel::Type).data().toString(),
                 QStringLiteral("arr[i32]"));
        view.expand(proxy->mapFromSource(first));
        QTRY_COMPARE(m->rowCount(first), 3);
        QCOMPARE(childValues(m, first),
                 (QStringList{QStringLiteral("7"), QStringLiteral("-8"), QStringLiteral("9")}));
        view.selectionModel()->select(proxy->mapFromSource(m->index(1, 0, nested)),
                                      QItemSelectionModel::ClearAndSelect |
                                          QItemSelectionModel::Rows);
        QCOMPARE(copiedArrayItems(view), QStringLiteral("1\n2"));
    }

    // ggml's reading of the corpus's metadata file: array items as expected.
    void expandedItemsAreGgmls() {
        REQUIRE_CONFORMANCE();
        const nlohmann::json expected = testsupport::loadJson(
            testsupport::corpus(QStringLiteral("gguf/expected/metadata-only.gguf.json")));
        MetadataView view;
        QAbstractItemModelTester tester(view.metadataModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        // On screen, as a user expands it: a hidden view lays out (and asks
        // for an expanded row's items) only when a pending layout happens to run.
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setDocument(Document::open(
            str(testsupport::corpus(QStringLiteral("gguf/valid/metadata-only.gguf")))));
        const MetadataModel* m = view.metadataModel();
        const auto* proxy = static_cast<const QSortFilterProxyModel*>(view.model());
        int arrays = 0;
        for (const auto& e : expected["metadata"]) {
            if (e["type"] != "arr")
                continue;
            const QModelIndex row = rowOf(m, QString::fromStdString(e["key"]));
            QVERIFY(row.isValid());
            view.expand(proxy->mapFromSource(row));
            const uint64_t length = e["value"]["length"];
            QTRY_COMPARE(uint64_t(m->rowCount(row)), length);
            if (e["value"].contains("values")) {
                QStringList want;
                for (const auto& v : e["value"]["values"])
                    want << QString::fromStdString(v.get<std::string>());
                QCOMPARE(childValues(m, row), want);
            }
            ++arrays;
        }
        QCOMPARE(arrays, 3);
    }

    void copiedRowsReadBackAsTheyAre() {
        Checkpoint c;
        c.setMetadata("a plain", "value");
        c.setMetadata("config", "line one\nline\ttwo");
        c.setMetadata("quote\"d", "say \"hi\"");
        c.addTensor({"w", {1}, {1.0f}});
        MetadataView view;
        view.setDocument(open(c.encode(), "memory:m.oxck"));
        view.sortByColumn(MetadataModel::Key, Qt::AscendingOrder);
        view.selectAll();
        const QString text = view.selectionText();
        const QList<QStringList> rows = parseTsv(text);
        QCOMPARE(rows.size(), 3);
        QCOMPARE(rows[0], (QStringList{QStringLiteral("a plain"), QStringLiteral("value")}));
        QCOMPARE(rows[1],
                 (QStringList{QStringLiteral("config"), QStringLiteral("line one\nline\ttwo")}));
        QCOMPARE(rows[2], (QStringList{QStringLiteral("quote\"d"), QStringLiteral("say \"hi\"")}));
        QVERIFY(text.startsWith(QStringLiteral("a plain\tvalue\n"))); // plain fields stay plain

        // The Copy action puts the same text on the clipboard.
        view.setFocus();
        view.actions().first()->trigger();
        QCOMPARE(QApplication::clipboard()->text(), text);
    }

    // A value with no spaces wraps anywhere, whole (it ended in "…"), and a
    // copy of a value shown with escapes gives the text as stored.
    void longValuesWrapWholeAndCopyAsStored() {
        Checkpoint c;
        const std::string hidden = "x\u202ey";
        c.setMetadata("long", std::string(600, 'L') + "END");
        c.setMetadata("short", "v");
        c.setMetadata("spoof", hidden);
        c.addTensor({"w", {1}, {1.0f}});
        MetadataView view;
        view.resize(600, 400);
        view.setDocument(open(c.encode(), "memory:m.oxck"));
        view.sortByColumn(MetadataModel::Key, Qt::AscendingOrder);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QAbstractItemModel* m = view.model();
        const QModelIndex longValue = m->index(0, MetadataModel::Value);
        const QModelIndex shortValue = m->index(1, MetadataModel::Value);
        QCOMPARE(m->index(0, MetadataModel::Key).data().toString(), QStringLiteral("long"));
        // 600 letters in a column under 600 px: several lines, every one shown.
        const int lineHeight = view.visualRect(shortValue).height();
        QVERIFY2(view.visualRect(longValue).height() >= 3 * lineHeight,
                 qPrintable(QStringLiteral("%1 vs %2")
                                .arg(view.visualRect(longValue).height())
                                .arg(lineHeight)));
        QCOMPARE(m->index(2, MetadataModel::Value).data().toString(),
                 QStringLiteral("x\\u{202e}y"));
        view.selectionModel()->select(m->index(2, 0), QItemSelectionModel::ClearAndSelect |
                                                          QItemSelectionModel::Rows);
        QCOMPARE(view.selectionText(), QStringLiteral("spoof\t") + QString::fromStdString(hidden));
    }

    void timestampsShowAsADateWithTheirZone() {
        const std::string json =
            R"({"graph":{"nodes":{},"edges":[]},"step":3,"loss_cid":null,"optimizer_state":{},"timestamp":1732867203})";
        MetadataView view;
        view.setDocument(open(json, "memory:g.json"));
        QString shown;
        for (int r = 0; r < view.metadataModel()->rowCount(); ++r)
            if (view.metadataModel()->index(r, MetadataModel::Key).data().toString() ==
                QStringLiteral("timestamp"))
                shown = view.metadataModel()->index(r, MetadataModel::Value).data().toString();
        QCOMPARE(shown, timestampText(1732867203));
        const QDateTime local = QDateTime::fromSecsSinceEpoch(1732867203);
        QVERIFY(shown.startsWith(local.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss "))));
        QVERIFY(shown.endsWith(QStringLiteral(" (1732867203)")));
        // Out of the calendar's range: the number alone, not a made-up date.
        QCOMPARE(timestampText(std::numeric_limits<qint64>::max()),
                 QString::number(std::numeric_limits<qint64>::max()));
    }
};

QTEST_MAIN(TestMetadataView)
#include "tst_metadataview.moc"
