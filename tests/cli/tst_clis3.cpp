// ckptscope-cli on s3:// prefixes (s3rver on 127.0.0.1): every command gives
// for a prefix what it gives for the local copy of the folder — info, stats,
// export, convert, diff (no differences) and timeline of a run.
#include "awsenv.h"
#include "clirunner.h"
#include "dcpfixture.h"
#include "s3servers.h"
#include "shardedfixture.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <filesystem>

using namespace clirunner;
using namespace testsupport;

class TestCliS3 : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<S3Server> m_server;
    std::unique_ptr<AwsEnv> m_env;

    QString local(const char* rel) const { return m_dir.filePath(QString::fromLatin1(rel)); }

    // The command on the local folder and on its copy under the prefix:
    // stdout alike once the one names the other, both exit 0.
    void sameAnswer(const QStringList& before, const char* folder, const QStringList& after = {}) {
        const QString prefix = QStringLiteral("s3://ck/") + QString::fromLatin1(folder);
        const Run here = runCli(before + QStringList{local(folder)} + after);
        const Run there = runCli(before + QStringList{prefix} + after);
        QVERIFY2(here.exitCode == 0, qPrintable(describe(here)));
        QVERIFY2(there.exitCode == 0, qPrintable(describe(there)));
        QString expected = here.outText();
        QVERIFY(expected.size() > 40);
        expected.replace(local(folder), prefix);
        QString got = there.outText();
        // Where the credentials came from: said for the bucket only.
        got.remove(
            QRegularExpression(QStringLiteral("\\n  \"access\": \"[^\"]*\",|\\nAccess  [^\\n]*")));
        // A timeline's modification time is, for an object, its upload's.
        const QRegularExpression mtime(QStringLiteral("\"mtime\": \"[^\"]*\""));
        got.replace(mtime, QStringLiteral("\"mtime\""));
        expected.replace(mtime, QStringLiteral("\"mtime\""));
        QCOMPARE(got, expected);
    }

private Q_SLOTS:
    void initTestCase() {
        requireCli();
        m_server = std::make_unique<S3Server>("ck");
        QVERIFY2(m_server->start(), qPrintable(m_server->why()));
        std::filesystem::create_directories(local("sharded").toStdString());
        ShardedFixture().writeTo(local("sharded").toStdString());
        DcpFixture::make(2, {{6, 5}, {9}}).write(local("dcp").toStdString());
        for (int step : {5, 15}) {
            const std::string dir =
                local("run").toStdString() + "/checkpoint-" + std::to_string(step);
            std::filesystem::create_directories(dir);
            ShardedFixture f;
            f.aBias = {float(step), -1.0f, 0.5f};
            f.writeSingle(dir + "/model.safetensors");
        }
        for (const char* folder : {"sharded", "dcp", "run"})
            QVERIFY2(m_server->putFolder(local(folder).toStdString(), folder),
                     qPrintable(m_server->why()));
        m_env =
            std::make_unique<AwsEnv>(AwsEnv::Vars{{"AWS_ACCESS_KEY_ID", S3Server::kKey},
                                                  {"AWS_SECRET_ACCESS_KEY", "S3RVER"},
                                                  {"AWS_ENDPOINT_URL_S3", m_server->endpoint()}});
        qputenv("XDG_CACHE_HOME", m_dir.filePath(QStringLiteral("cache")).toUtf8());
    }
    void cleanupTestCase() {
        m_env.reset();
        m_server.reset();
    }

    void infoAndStatsOfPrefixes() {
        for (const char* folder : {"sharded", "dcp"}) {
            sameAnswer({QStringLiteral("info"), QStringLiteral("--json")}, folder);
            sameAnswer({QStringLiteral("info")}, folder);
            sameAnswer({QStringLiteral("stats"), QStringLiteral("--json")}, folder);
        }
    }

    void exportAndConvertOfAPrefix() {
        for (const char* folder : {"sharded", "dcp"}) {
            const QString prefix = QStringLiteral("s3://ck/") + QString::fromLatin1(folder);
            const QString a = m_dir.filePath(QStringLiteral("a.safetensors"));
            const QString b = m_dir.filePath(QStringLiteral("b.safetensors"));
            QCOMPARE(runCli({QStringLiteral("convert"), local(folder), a}).exitCode, 0);
            const Run r = runCli({QStringLiteral("convert"), prefix, b});
            QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
            const std::string written = readFile(a);
            QVERIFY(!written.empty());
            QVERIFY(readFile(b) == written);
        }
        const Run here =
            runCli({QStringLiteral("export"), local("sharded"), QStringLiteral("--tensor"),
                    QStringLiteral("b.weight"), QStringLiteral("-o"), QStringLiteral("-"),
                    QStringLiteral("--format"), QStringLiteral("csv")});
        const Run there =
            runCli({QStringLiteral("export"), QStringLiteral("s3://ck/sharded/"),
                    QStringLiteral("--tensor"), QStringLiteral("b.weight"), QStringLiteral("-o"),
                    QStringLiteral("-"), QStringLiteral("--format"), QStringLiteral("csv")});
        QVERIFY2(there.exitCode == 0, qPrintable(describe(there)));
        QVERIFY(!here.out.isEmpty());
        QCOMPARE(there.out, here.out);
    }

    void diffOfAPrefixAndItsLocalCopy() {
        const Run r =
            runCli({QStringLiteral("diff"), local("sharded"), QStringLiteral("s3://ck/sharded")});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        const Run other = runCli({QStringLiteral("diff"),
                                  QStringLiteral("s3://ck/run/checkpoint-5/model.safetensors"),
                                  QStringLiteral("s3://ck/run/checkpoint-15/model.safetensors")});
        QVERIFY2(other.exitCode == 1 && other.outText().contains(QStringLiteral("a.bias")),
                 qPrintable(describe(other)));
    }

    void timelineOfARunPrefix() {
        sameAnswer(
            {QStringLiteral("timeline"), QStringLiteral("--json"), QStringLiteral("--no-cache")},
            "run");
    }
};

QTEST_GUILESS_MAIN(TestCliS3)
#include "tst_clis3.moc"
