// rowheight::followFont: a table's rows stay one line of its font tall as
// the font changes, so a larger desktop font cuts no line.
#include "widgets/rowheight.h"

#include <QHeaderView>
#include <QStandardItemModel>
#include <QTableView>
#include <QTest>

class TestRowHeight : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rowsFollowTheFont() {
        QStandardItemModel model(3, 2);
        QTableView view;
        view.setModel(&model);
        rowheight::followFont(&view, 4);
        QCOMPARE(view.verticalHeader()->defaultSectionSize(), view.fontMetrics().height() + 4);
        const int before = view.verticalHeader()->defaultSectionSize();

        QFont larger = view.font();
        larger.setPointSizeF(larger.pointSizeF() * 2);
        view.setFont(larger);
        QCOMPARE(view.verticalHeader()->defaultSectionSize(), view.fontMetrics().height() + 4);
        QVERIFY(view.verticalHeader()->defaultSectionSize() > before);
        QCOMPARE(view.rowHeight(0), view.fontMetrics().height() + 4);
    }

    // A font set on the window reaches the table, and its rows follow.
    void fontFromTheParentIsFollowed() {
        QWidget window;
        auto* view = new QTableView(&window);
        QStandardItemModel model(2, 1);
        view->setModel(&model);
        rowheight::followFont(view, 6);
        QFont larger = window.font();
        larger.setPointSizeF(larger.pointSizeF() * 1.5);
        window.setFont(larger);
        QCOMPARE(view->font(), larger);
        QCOMPARE(view->verticalHeader()->defaultSectionSize(), view->fontMetrics().height() + 6);
    }
};

QTEST_MAIN(TestRowHeight)
#include "tst_rowheight.moc"
