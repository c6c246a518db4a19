#include "histogramview.h"

#include <QChart>
#include <QLogValueAxis>
#include <QTest>
#include <QValueAxis>

class TestHistogramView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void axesFollowTheHistogram() {
        HistogramView view;
        ckptscope::Histogram h;
        h.lo = -1;
        h.hi = 3;
        h.counts = {5, 0, 20, 1};
        view.setHistogram(h);
        auto* x = qobject_cast<QValueAxis*>(view.chart()->axes(Qt::Horizontal).value(0));
        QVERIFY(x);
        QCOMPARE(x->min(), -1.0);
        QCOMPARE(x->max(), 3.0);
        QVERIFY(qobject_cast<QValueAxis*>(view.chart()->axes(Qt::Vertical).value(0)));
        view.setLogScale(true);
        QVERIFY(qobject_cast<QLogValueAxis*>(view.chart()->axes(Qt::Vertical).value(0)));
        QCOMPARE(view.chart()->series().size(), 1);
    }
    void hoverTextNamesBinAndCount() {
        HistogramView view;
        ckptscope::Histogram h;
        h.lo = 0;
        h.hi = 4;
        h.counts = {1, 2, 3, 4};
        view.setHistogram(h);
        QCOMPARE(view.binText(2.5), QStringLiteral("[2, 3)\n3 values"));
        QCOMPARE(view.binText(4.0), QStringLiteral("[3, 4]\n4 values"));
        QVERIFY(view.binText(5.0).isEmpty());
        view.clear();
        QVERIFY(view.chart()->series().isEmpty());
    }
};

QTEST_MAIN(TestHistogramView)
#include "tst_histogramview.moc"
