// ckptscope-cli on http(s) URLs served by nginx on 127.0.0.1: the same
// answers as for the local file, and --header for every command.
#include "clirunner.h"
#include "httpservers.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

using namespace clirunner;
using namespace testsupport;

class TestCliUrl : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void infoAndStatsAnswerAsForTheLocalFile();
    void diffOfUrlAndLocalCopyIsEqual();
    void malformedHeaderIsAUsageErrorThatHidesTheValue();
    void missingUrlExitsOneNamingTheStatus();
    void readErrorsNameTheFileAsEveryCommandDoes();
    void timelineOverUrlsAsOverLocalFiles();

private:
    QTemporaryDir m_dir;
    std::unique_ptr<NginxServer> m_nginx;
    QString m_local;
    QString m_url;
};

void TestCliUrl::initTestCase() {
    requireCli();
    QVERIFY(m_dir.isValid());
    std::vector<float> values(3000);
    for (size_t i = 0; i < values.size(); ++i)
        values[i] = float(i) * 0.25f - 100.0f;
    m_local = m_dir.filePath(QStringLiteral("model.safetensors"));
    writeFile(m_local, stFile({{"a", "F32", {3000}, leBytes(values)},
                               {"b", "F16", {2}, leBytes(std::vector<uint16_t>{0x3c00, 0xc000})}},
                              {{"step", "7"}}));
    m_nginx = std::make_unique<NginxServer>(m_dir.path());
    if (!m_nginx->start())
        QFAIL(qPrintable(m_nginx->why()));
    m_url = qstr(m_nginx->url("model.safetensors"));
}

void TestCliUrl::infoAndStatsAnswerAsForTheLocalFile() {
    for (const char* command : {"info", "stats"}) {
        const Run local = runCli({QString::fromLatin1(command), m_local, QStringLiteral("--json")});
        const Run remote = runCli({QString::fromLatin1(command), m_url, QStringLiteral("--json"),
                                   QStringLiteral("--header"), QStringLiteral("X-Team: ml")});
        QVERIFY2(local.exitCode == 0, qPrintable(describe(local)));
        QVERIFY2(remote.exitCode == 0, qPrintable(describe(remote)));
        const nlohmann::json a = parseOut(local), b = parseOut(remote);
        QVERIFY(!a.is_discarded() && a.size() > 1);
        QCOMPARE(QString::fromStdString(b.dump()), QString::fromStdString(a.dump()));
    }
}

void TestCliUrl::diffOfUrlAndLocalCopyIsEqual() {
    const Run r = runCli({QStringLiteral("diff"), m_local, m_url});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
}

void TestCliUrl::malformedHeaderIsAUsageErrorThatHidesTheValue() {
    const Run r = runCli({QStringLiteral("info"), m_url, QStringLiteral("--header"),
                          QStringLiteral("Bearer-secret-token")});
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.errText().contains(QStringLiteral("--header wants 'NAME: VALUE'")));
    QVERIFY(!r.errText().contains(QStringLiteral("secret")));
}

void TestCliUrl::missingUrlExitsOneNamingTheStatus() {
    const QString url = qstr(m_nginx->url("absent.safetensors"));
    const Run r = runCli({QStringLiteral("info"), url});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.errText().contains(url + QStringLiteral(": error: HTTP 404 Not Found")),
             qPrintable(describe(r)));
}

// An error met reading values (the file changed on the server after its
// header was read) reads "URL: error: …" from stats, export and diff alike;
// stats and export said "ckptscope-cli: error: URL: …".
void TestCliUrl::readErrorsNameTheFileAsEveryCommandDoes() {
    std::vector<float> values(40000, 1.5f); // values past the first 64 KiB read
    FaultServer server(stFile({{"w", "F32", {40000}, leBytes(values)}}), "");
    const QString url = qstr(server.url("/etag-changes"));
    const QString out = m_dir.filePath(QStringLiteral("w.npy"));
    for (const QStringList& args :
         {QStringList{QStringLiteral("stats"), url},
          QStringList{QStringLiteral("export"), url, QStringLiteral("--tensor"),
                      QStringLiteral("w"), QStringLiteral("-o"), out},
          QStringList{QStringLiteral("diff"), url, url}}) {
        const Run r = runCli(args);
        QVERIFY2(r.exitCode != 0, qPrintable(describe(r)));
        QVERIFY2(r.errText().startsWith(url + QStringLiteral(": error: ")),
                 qPrintable(describe(r)));
        QVERIFY2(!r.errText().contains(QStringLiteral("ckptscope-cli: error")),
                 qPrintable(describe(r)));
    }
}

void TestCliUrl::timelineOverUrlsAsOverLocalFiles() {
    // A second checkpoint whose step only its name tells.
    const QString second = m_dir.filePath(QStringLiteral("ckpt-20.safetensors"));
    std::vector<float> values(3000);
    for (size_t i = 0; i < values.size(); ++i)
        values[i] = float(i) * 0.5f;
    writeFile(second, stFile({{"a", "F32", {3000}, leBytes(values)},
                              {"b", "F16", {2}, leBytes(std::vector<uint16_t>{0x3c00, 0x3c00})}},
                             {}));
    const QString secondUrl = qstr(m_nginx->url("ckpt-20.safetensors"));
    const QStringList options{QStringLiteral("--json"), QStringLiteral("--no-cache")};
    const Run local = runCli(QStringList{QStringLiteral("timeline"), m_local, second} + options);
    const Run remote = runCli(QStringList{QStringLiteral("timeline"), m_url, secondUrl} + options);
    QVERIFY2(local.exitCode == 0, qPrintable(describe(local)));
    QVERIFY2(remote.exitCode == 0, qPrintable(describe(remote)));
    const nlohmann::json a = parseOut(local), b = parseOut(remote);
    QCOMPARE(b["checkpoints"].size(), size_t(2));
    QCOMPARE(b["skipped"].size(), size_t(0));
    for (const char* key : {"format", "tensors", "metadata", "first_nonfinite"})
        QCOMPARE(QString::fromStdString(b[key].dump()), QString::fromStdString(a[key].dump()));
    for (size_t i = 0; i < 2; ++i)
        for (const char* key : {"step", "step_source", "file_size"})
            QCOMPARE(QString::fromStdString(b["checkpoints"][i][key].dump()),
                     QString::fromStdString(a["checkpoints"][i][key].dump()));
    QCOMPARE(b["checkpoints"][1]["path"].get<std::string>(), secondUrl.toStdString());
    QCOMPARE(b["checkpoints"][0]["step"].get<int>(), 7);
    QCOMPARE(b["checkpoints"][1]["step"].get<int>(), 20);
}

QTEST_GUILESS_MAIN(TestCliUrl)
#include "tst_cliurl.moc"
