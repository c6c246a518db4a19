#include "metadata/metadatamodel.h"
#include "metadata/metadatatext.h"
#include "metadata/metadataview.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/io/bytesource.h"
#include "testsupport.h"

#include <nlohmann/json.hpp>

#include <QApplication>
#include <QClipboard>
#include <QDateTime>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QTest>

#include <limits>

using namespace ckptscope;
using testsupport::str;

namespace {

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
        const QString tip = m->index(row, MetadataModel::Value).data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QString::fromStdString(tokens[19])), qPrintable(tip));
        QVERIFY(!tip.contains(QString::fromStdString(tokens[20])));
        QVERIFY(tip.contains(QStringLiteral("80 more")));
        const auto* proxy = static_cast<const QSortFilterProxyModel*>(view.model());
        view.selectionModel()->select(proxy->mapFromSource(m->index(row, 0)),
                                      QItemSelectionModel::Select | QItemSelectionModel::Rows);
        QStringList all;
        for (const std::string& t : tokens)
            all << QString::fromStdString(t);
        QCOMPARE(view.selectedArrayItems(), all.join(QLatin1Char('\n')));
        // An OXCK file has no types: the column stays hidden.
        Checkpoint c;
        c.setMetadata("step", "1");
        c.addTensor({"t", {1}, {1}});
        QTemporaryDir dir;
        c.save(str(dir.filePath(QStringLiteral("m.oxck"))));
        view.setDocument(Document::open(str(dir.filePath(QStringLiteral("m.oxck")))));
        QVERIFY(view.isColumnHidden(MetadataModel::Type));
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
