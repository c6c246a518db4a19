#include "guisupport.h"
#include "metadata/metadatamodel.h"

#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QTest>

class TestMetadataModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rowsKeepNewlinesAndSort() {
        MetadataModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRows({{"step", "1200"}, {"multi", "line1\nline2\ttab"}, {"", "empty key"}});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), 3); // key, value, type
        QCOMPARE(model.index(1, MetadataModel::Value).data().toString(),
                 QStringLiteral("line1\nline2\ttab"));
        QCOMPARE(model.headerData(MetadataModel::Key, Qt::Horizontal).toString(),
                 QStringLiteral("Key"));
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.sort(MetadataModel::Key);
        QCOMPARE(proxy.index(0, 0).data().toString(), QString());
        QCOMPARE(proxy.index(2, 0).data().toString(), QStringLiteral("step"));
        model.setRows({});
        QCOMPARE(model.rowCount(), 0);
    }

    // Tooltips show keys and values as they are, never as HTML.
    void toolTipsShowTextExactly() {
        MetadataModel model;
        const std::string key = "<b>k</b>", value = "a &lt; <i>b</i>\n\"c\" & 'd'";
        model.setRows({{key, value}, {"plain", "1200"}});
        QCOMPARE(guisupport::shownText(
                     model.index(0, MetadataModel::Key).data(Qt::ToolTipRole).toString()),
                 QString::fromStdString(key));
        QCOMPARE(guisupport::shownText(
                     model.index(0, MetadataModel::Value).data(Qt::ToolTipRole).toString()),
                 QString::fromStdString(value));
        QCOMPARE(model.index(1, MetadataModel::Value).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("1200"));
    }

    // Keys on one line, values on their own lines (a chat template keeps its
    // line breaks); in both, what would hide or reorder text is an escape,
    // and a copy takes the text as stored (EditRole).
    void hiddenCharactersShownAsEscapes() {
        MetadataModel model;
        const std::string key = "bidi\u202e\nkey", value = "x\u202ey\nline2\u200b";
        model.setRows({{key, value}});
        QCOMPARE(model.index(0, MetadataModel::Key).data().toString(),
                 QStringLiteral("bidi\\u{202e}\\nkey"));
        QCOMPARE(model.index(0, MetadataModel::Value).data().toString(),
                 QStringLiteral("x\\u{202e}y\nline2\\u{200b}"));
        QCOMPARE(model.index(0, MetadataModel::Value).data(Qt::EditRole).toString(),
                 QString::fromStdString(value));
    }
};

QTEST_MAIN(TestMetadataModel)
#include "tst_metadatamodel.moc"
