#include "ckptscope/export/samplegenerator.h"

#include <QTest>

#include <set>

using namespace ckptscope;

class TestSampleGenerator : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // `generate gradient --nodes N` makes exactly N nodes, one loss, and a
    // graph where every node but the inputs' producer feeds the next.
    void exactNodeCount_data() {
        QTest::addColumn<quint64>("nodes");
        for (quint64 n : {3, 4, 14, 15, 16, 207, 2000, 10000})
            QTest::addRow("%llu", n) << n;
    }
    void exactNodeCount() {
        QFETCH(quint64, nodes);
        SyntheticGraphSpec spec;
        spec.nodeCount = nodes;
        const GradientCheckpoint g = makeSyntheticGradient(spec);
        QCOMPARE(quint64(g.graph.nodeCount()), nodes);
        const ComputationNode* loss = g.lossNode();
        QVERIFY(loss);
        QCOMPARE(loss->op, std::string("cross_entropy"));
        // Connected: every node except the loss has a consumer.
        std::set<std::string> producers;
        for (const auto& [from, to] : g.graph.edges())
            producers.insert(from);
        QCOMPARE(quint64(producers.size()), nodes - 1);
        QVERIFY(!producers.count(loss->id));
    }
};

QTEST_MAIN(TestSampleGenerator)
#include "tst_samplegenerator.moc"
