// The metadata tab: numeric keys charted over the steps with their exact
// values, other keys named as not charted, gaps where a checkpoint lacks the
// key, and nothing left over when the run goes.
#include "testsupport.h"

#include "guisupport.h"
#include "run/metadatachartview.h"

#include "ckptscope/formats/oxck/checkpoint.h"

#include <QCategoryAxis>
#include <QChart>
#include <QComboBox>
#include <QLabel>
#include <QTemporaryDir>
#include <QTest>
#include <QXYSeries>

using namespace ckptscope;
using testsupport::str;

class TestMetadataChartView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void numericKeysOverSteps() {
        QTemporaryDir tmp;
        const std::vector<std::string> loss = {"2.5", "1.75", "", "0.125"};
        for (int c = 0; c < 4; ++c) {
            Checkpoint ck;
            ck.setMetadata("step", std::to_string(10 * c));
            if (!loss[size_t(c)].empty())
                ck.setMetadata("loss", loss[size_t(c)]);
            ck.setMetadata("lr", c == 1 ? "nan" : "1e-3");
            ck.setMetadata("optimizer", "adamw");
            ck.addTensor({"w", {1}, {1.f}});
            ck.save(str(tmp.path()) + "/c" + std::to_string(c) + ".oxck");
        }
        RunOptions opt;
        opt.useCache = false;
        auto run = std::make_shared<const Run>(readRun({str(tmp.path())}, opt));
        MetadataChartView view;
        view.resize(800, 500);
        view.setRun(run);
        QStringList keys;
        for (int i = 0; i < view.keyChooser()->count(); ++i)
            keys << view.keyChooser()->itemText(i);
        QCOMPARE(keys, (QStringList{QStringLiteral("loss"), QStringLiteral("lr"),
                                    QStringLiteral("step")}));
        QCOMPARE(view.keyChooser()->currentText(), QStringLiteral("loss"));
        QVERIFY(view.note()->text().contains(QStringLiteral("optimizer")));
        auto* line = qobject_cast<QXYSeries*>(view.chart()->series().value(0));
        QVERIFY(line);
        QCOMPARE(line->points(), (QList<QPointF>{{0, 2.5}, {10, 1.75}, {30, 0.125}}));
        QVERIFY(view.hoverText(1).contains(QStringLiteral("loss = 1.75")));
        QVERIFY(view.hoverText(2).contains(QStringLiteral("not in this checkpoint")));
        for (QAbstractAxis* a : view.chart()->axes()) {
            const QString problem =
                guisupport::roundnessProblem(guisupport::ticksOf(qobject_cast<QValueAxis*>(a)));
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
        // lr: the NaN is not drawn, and said so.
        view.setKey(QStringLiteral("lr"));
        line = qobject_cast<QXYSeries*>(view.chart()->series().value(0));
        QCOMPARE(line->count(), 3);
        QVERIFY(view.note()->text().contains(QStringLiteral("NaN")));
        view.setRun(nullptr);
        QVERIFY(view.chart()->series().isEmpty());
        QCOMPARE(view.keyChooser()->count(), 0);
        QVERIFY(view.hoverText(0).isEmpty());
    }
};

QTEST_MAIN(TestMetadataChartView)
#include "tst_metadatachartview.moc"
