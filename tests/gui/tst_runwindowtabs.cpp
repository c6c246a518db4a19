// The run window's chart tabs: a loaded run reaches the layer profile, the
// distribution and the metadata chart; the selected tensor reaches them by
// name; a click in the layer profile selects that layer's tensor.
#include "testsupport.h"

#include "run/distributionview.h"
#include "run/heatmapview.h"
#include "run/layerprofileview.h"
#include "run/metadatachartview.h"
#include "run/runwindow.h"

#include "ckptscope/formats/oxck/checkpoint.h"

#include <QComboBox>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace ckptscope;
using testsupport::str;

class TestRunWindowTabs : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private Q_SLOTS:
    void initTestCase() {
        qputenv("XDG_CACHE_HOME", m_tmp.filePath(QStringLiteral("cache")).toUtf8());
    }

    void tabsFollowTheSelection() {
        const QString dir = m_tmp.filePath(QStringLiteral("run"));
        QVERIFY(QDir().mkpath(dir));
        for (int c = 0; c < 3; ++c) {
            Checkpoint ck;
            ck.setMetadata("step", std::to_string(c * 5));
            ck.setMetadata("loss", std::to_string(3 - c));
            for (int layer = 0; layer < 3; ++layer)
                ck.addTensor(
                    {"h." + std::to_string(layer) + ".w", {4}, {1.f, 2.f, float(layer), float(c)}});
            ck.save(str(dir) + "/s" + std::to_string(c) + ".oxck");
        }
        RunWindow w;
        QSignalSpy loaded(&w, &RunWindow::runLoaded);
        w.show();
        w.openPaths({dir});
        // Files written a moment ago are held back until they settle (WriteSettle).
        QTRY_VERIFY_WITH_TIMEOUT(w.run() && w.run()->checkpoints.size() == 3 &&
                                     w.waitingFiles().empty() && w.run()->notCached == 0,
                                 20000);
        QVERIFY(!loaded.isEmpty());
        QStringList titles;
        for (int i = 0; i < w.chartTabs()->count(); ++i)
            titles << w.chartTabs()->tabText(i);
        QCOMPARE(titles,
                 (QStringList{QStringLiteral("Over steps"), QStringLiteral("Distribution"),
                              QStringLiteral("Layer profile"), QStringLiteral("Metadata")}));
        QVERIFY(w.showTab(QStringLiteral("layer profile")));
        QCOMPARE(w.chartTabs()->currentWidget(), w.layerProfileView());
        QCOMPARE(w.layerProfileView()->heatmap()->data().rows, 3);
        QCOMPARE(w.metadataChartView()->keyChooser()->currentText(), QStringLiteral("loss"));
        // The first tensor is selected at load; its distribution is read.
        QTRY_COMPARE_WITH_TIMEOUT(w.distributionView()->tensor(), QStringLiteral("h.0.w"), 20000);
        // A click on layer 2 selects h.2.w everywhere.
        LayerProfileView* lp = w.layerProfileView();
        QTest::mouseClick(lp->heatmap(), Qt::LeftButton, {},
                          lp->heatmap()->cellRect(2, 1).center());
        QCOMPARE(w.distributionView()->tensor(), QStringLiteral("h.2.w"));
        QTRY_VERIFY_WITH_TIMEOUT(!w.distributionView()->isLoading() &&
                                     !w.distributionView()->percentiles().empty(),
                                 20000);
        QVERIFY(w.selectTensorNamed(QStringLiteral("h.1.w")));
        QCOMPARE(w.distributionView()->tensor(), QStringLiteral("h.1.w"));
        QVERIFY(!w.selectTensorNamed(QStringLiteral("nope")));
    }
};

QTEST_MAIN(TestRunWindowTabs)
#include "tst_runwindowtabs.moc"
