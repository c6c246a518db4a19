// Runs over http(s) URLs (nginx and our FaultServer on 127.0.0.1): the same
// checkpoints, steps and summaries as over the local files, and the summary
// cache keyed by URL + ETag (else Last-Modified, else the size alone).
#include "httpservers.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include "ckptscope/run/run.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

using namespace ckptscope;
using namespace testsupport;

namespace {

// A checkpoint larger than the first answer (64 KiB), so that reading its
// values takes requests of their own.
std::string checkpoint(float scale, const std::vector<std::pair<std::string, std::string>>& meta,
                       size_t n = 40000) {
    std::vector<float> values(n);
    for (size_t i = 0; i < n; ++i)
        values[i] = float(i % 977) * scale - 3.0f;
    return stFile({{"w", "F32", {n}, leBytes(values)},
                   {"b", "F32", {4}, leBytes(std::vector<float>{scale, -scale, 0.0f, 1.0f})}},
                  meta);
}

RunOptions cachedIn(const QString& dir) {
    RunOptions o;
    o.cacheDir = dir.toStdString();
    o.cacheMaxBytes = uint64_t(1) << 30;
    return o;
}

RunOptions uncached() {
    RunOptions o;
    o.useCache = false;
    return o;
}

} // namespace

class TestRunUrl : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void runOverUrlsEqualsRunOverLocalFiles();
    void secondRunAsksOnlyForTheFirstBytes();
    void fileChangedOnTheServerIsReadAgain();
    void withoutValidatorsTheSizeAloneKeys();
    void missingUrlIsSkippedWithTheStatus();

private:
    // The local run and the URL run hold the same checkpoints and summaries.
    void compareRuns(const Run& local, const Run& remote);

    QTemporaryDir m_dir;
    std::unique_ptr<NginxServer> m_nginx;
    QString m_cache;
    std::vector<std::string> m_local, m_urls;
};

void TestRunUrl::initTestCase() {
    QVERIFY(m_dir.isValid());
    QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("served")));
    m_cache = m_dir.filePath(QStringLiteral("cache"));
    // The step of the first from its name (a URL's last path segment, the
    // query of a presigned URL left out), of the second from its metadata.
    const QString a = m_dir.filePath(QStringLiteral("served/ckpt-100.safetensors"));
    const QString b = m_dir.filePath(QStringLiteral("served/late.safetensors"));
    writeFile(a, checkpoint(0.5f, {}));
    writeFile(b, checkpoint(0.25f, {{"step", "300"}}));
    m_local = {a.toStdString(), b.toStdString()};
    m_nginx = std::make_unique<NginxServer>(m_dir.filePath(QStringLiteral("served")));
    if (!m_nginx->start())
        QFAIL(qPrintable(m_nginx->why()));
    m_urls = {m_nginx->url("ckpt-100.safetensors") + "?X-Amz-Signature=0badc0de",
              m_nginx->url("late.safetensors")};
}

void TestRunUrl::compareRuns(const Run& local, const Run& remote) {
    QVERIFY(local.skipped.empty());
    QVERIFY2(remote.skipped.empty(),
             remote.skipped.empty() ? "" : remote.skipped[0].reason.c_str());
    QCOMPARE(remote.kind, local.kind);
    QCOMPARE(remote.checkpoints.size(), local.checkpoints.size());
    for (size_t i = 0; i < local.checkpoints.size(); ++i) {
        const RunCheckpoint &l = local.checkpoints[i], &r = remote.checkpoints[i];
        QCOMPARE(r.name, l.name);
        QCOMPARE(r.step, l.step);
        QCOMPARE(r.stepSource, l.stepSource);
        QCOMPARE(r.fileSize, l.fileSize);
        QVERIFY(r.summary.tensors.size() == 2);
        QVERIFY(r.summary == l.summary);
        // nginx's Last-Modified is the file's mtime in whole seconds.
        QCOMPARE(r.mtimeNs, std::optional(*l.mtimeNs / 1'000'000'000 * 1'000'000'000));
    }
}

void TestRunUrl::runOverUrlsEqualsRunOverLocalFiles() {
    const Run local = readRun(m_local, uncached());
    const Run remote = readRun(m_urls, cachedIn(m_cache));
    compareRuns(local, remote);
    QCOMPARE(remote.checkpoints[0].step, std::optional<uint64_t>(100));
    QCOMPARE(remote.checkpoints[0].stepSource, StepSource::FileName);
    QCOMPARE(remote.checkpoints[0].name, std::string("ckpt-100.safetensors"));
    QCOMPARE(remote.checkpoints[0].path, m_urls[0]);
    QCOMPARE(remote.checkpoints[1].stepSource, StepSource::MetadataKey);
    QCOMPARE(remote.cacheMisses, uint64_t(2));
}

void TestRunUrl::secondRunAsksOnlyForTheFirstBytes() {
    readRun(m_urls, cachedIn(m_cache)); // the cache filled (if the test runs alone)
    m_nginx->clearLog();
    const Run again = readRun(m_urls, cachedIn(m_cache));
    QCOMPARE(again.cacheHits, uint64_t(2));
    QCOMPARE(again.cacheMisses, uint64_t(0));
    compareRuns(readRun(m_local, uncached()), again);
    // One request per file, its first 64 KiB: no value was read again.
    const auto log = m_nginx->requests();
    QCOMPARE(log.size(), size_t(2));
    for (const auto& r : log) {
        QCOMPARE(r.status, 206);
        QVERIFY(r.bodyBytes <= 64 * 1024);
    }
}

void TestRunUrl::fileChangedOnTheServerIsReadAgain() {
    readRun(m_urls, cachedIn(m_cache));
    // Same size, other values, another mtime: nginx's ETag differs.
    const QString a = QString::fromStdString(m_local[0]);
    writeFile(a, checkpoint(2.0f, {}));
    QFile f(a);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QVERIFY(f.setFileTime(QFileInfo(a).lastModified().addSecs(-3600),
                          QFileDevice::FileModificationTime));
    f.close();
    m_nginx->clearLog();
    const Run remote = readRun(m_urls, cachedIn(m_cache));
    QCOMPARE(remote.cacheHits, uint64_t(1));
    QCOMPARE(remote.cacheMisses, uint64_t(1));
    QVERIFY(!remote.checkpoints[0].fromCache);
    QVERIFY(remote.checkpoints[1].fromCache);
    compareRuns(readRun(m_local, uncached()), remote);
    QVERIFY(m_nginx->requests().size() > 2); // the changed file's values were fetched
}

void TestRunUrl::withoutValidatorsTheSizeAloneKeys() {
    const QString cache = m_dir.filePath(QStringLiteral("cache-novalidator"));
    const std::string first = checkpoint(0.5f, {});
    FaultServer server(first, "");
    const std::vector<std::string> url{server.url("/no-validator")};
    const auto summaryOf = [&](const std::string& bytes) {
        const QString path = m_dir.filePath(QStringLiteral("novalidator.safetensors"));
        writeFile(path, bytes);
        return readRun({path.toStdString()}, uncached()).checkpoints.at(0).summary;
    };
    const Run one = readRun(url, cachedIn(cache));
    QCOMPARE(one.cacheMisses, uint64_t(1));
    QVERIFY(one.checkpoints.at(0).summary == summaryOf(first));
    QVERIFY(server.requests().at(0).headers.count("range"));

    // Same size: the cache cannot tell (the server gave nothing else).
    server.setContent(checkpoint(3.0f, {}));
    const size_t before = server.requests().size();
    const Run two = readRun(url, cachedIn(cache));
    QCOMPARE(two.cacheHits, uint64_t(1));
    QVERIFY(two.checkpoints.at(0).summary == summaryOf(first));
    QCOMPARE(server.requests().size(), before + 1);

    // Another size: read again.
    const std::string third = checkpoint(3.0f, {}, 40100);
    server.setContent(third);
    const Run three = readRun(url, cachedIn(cache));
    QCOMPARE(three.cacheMisses, uint64_t(1));
    QVERIFY(three.checkpoints.at(0).summary == summaryOf(third));
    QVERIFY(!three.checkpoints.at(0).mtimeNs); // no Last-Modified: unknown, never 1970
}

void TestRunUrl::missingUrlIsSkippedWithTheStatus() {
    const std::string absent = m_nginx->url("absent.safetensors");
    const Run run = readRun({m_urls[1], absent}, uncached());
    QCOMPARE(run.checkpoints.size(), size_t(1));
    QCOMPARE(run.skipped.size(), size_t(1));
    QCOMPARE(run.skipped[0].path, absent);
    QVERIFY2(run.skipped[0].reason.find("404 Not Found") != std::string::npos,
             run.skipped[0].reason.c_str());
}

QTEST_GUILESS_MAIN(TestRunUrl)
#include "tst_runurl.moc"
