#include "graph/graphexport.h"

#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include <QFile>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace ckptscope;

namespace {
const QString kSample =
    QStringLiteral(CKPTSCOPE_SOURCE_DIR "/resources/samples/gradient_sample.json");
}

class TestGraphExport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void renderWithoutAWindow() {
        const GradientCheckpoint ck = GradientCheckpoint::load(kSample.toStdString());
        QTemporaryDir dir;
        const QString svg = dir.filePath(QStringLiteral("g.svg"));
        QCOMPARE(renderCheckpointGraph(ck, svg), QString());
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY(text.contains("<svg"));
        // Every op label is drawn.
        for (const auto& [id, n] : ck.graph.nodes())
            QVERIFY2(text.contains(QByteArray::fromStdString(n.op)), n.op.c_str());
        // Left-to-right is wider than tall, top-down taller than wide.
        const QString a = dir.filePath(QStringLiteral("td.png")),
                      b = dir.filePath(QStringLiteral("lr.png"));
        QCOMPARE(renderCheckpointGraph(ck, a, false), QString());
        QCOMPARE(renderCheckpointGraph(ck, b, true), QString());
        const QImage td(a), lr(b);
        QVERIFY(td.height() > td.width());
        QVERIFY(lr.width() > lr.height());
    }
    void cliRenderCommand() {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("cli.png"));
        QProcess p;
        // Where no session sets XDG_RUNTIME_DIR (a CI job, ssh, cron): only
        // what render itself says reaches stderr, no Qt notice.
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("XDG_RUNTIME_DIR"));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(CKPTSCOPE_CLI_PATH),
                {QStringLiteral("render"), kSample, QStringLiteral("-o"), out});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(!QImage(out).isNull());
        const QByteArray said = p.readAllStandardError();
        QVERIFY2(!said.contains("XDG_RUNTIME_DIR"), said.constData());
        // An OXCK file has no graph: exit 1 with the contract's message.
        p.start(QStringLiteral(CKPTSCOPE_CLI_PATH),
                {QStringLiteral("render"),
                 QStringLiteral(CKPTSCOPE_SOURCE_DIR "/resources/samples/model_sample.oxck"),
                 QStringLiteral("-o"), out});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(p.readAllStandardError().contains("model_sample.oxck: error: "));
        p.start(QStringLiteral(CKPTSCOPE_CLI_PATH), {QStringLiteral("render"), kSample});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2); // no -o
    }
};

QTEST_MAIN(TestGraphExport)
#include "tst_graphexport.moc"
