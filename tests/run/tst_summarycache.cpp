// The summary cache: a stored summary comes back bit for bit; a file
// rewritten in place (even to the same size with its old mtime put back) is
// a miss; damaged, foreign and other-version entries are ignored and
// rebuilt; the size cap evicts the least recently used entries.
#include "testsupport.h"

#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/run/checkpointsummary.h"
#include "ckptscope/run/summarycache.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <cmath>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>

using namespace ckptscope;
using testsupport::guarded;
using testsupport::qstr;
using testsupport::str;

namespace {

Checkpoint sampleCheckpoint(float scale) {
    Checkpoint c;
    c.setMetadata("step", "10");
    c.addTensor({"a", {3}, {1.0f * scale, -2.0f, std::nanf("")}});
    c.addTensor({"b", {2, 2}, {0.5f, 0.0f, 4.0f * scale, 1.0f}});
    return c;
}

FileSummary summaryOf(const std::string& path) {
    return summarizeDocument(*Document::open(path));
}

// File timestamps come from a coarse clock: let it tick before a rewrite.
void letClockTick() {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
}

} // namespace

class TestSummaryCache : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_cacheDir;

    std::string file(const char* name) const {
        return str(m_dir.filePath(QString::fromUtf8(name)));
    }

private Q_SLOTS:
    void init() {
        QVERIFY(m_dir.isValid());
        m_cacheDir = m_dir.filePath(QStringLiteral("cache-") +
                                    QString::fromLatin1(QTest::currentTestFunction()));
    }

    void roundTripIsExact() {
        guarded([&] {
            const std::string path = file("rt.oxck");
            sampleCheckpoint(1).save(path);
            const FileSummary s = summaryOf(path);
            QCOMPARE(s.tensors.size(), size_t(2));
            QCOMPARE(s.tensors[0].histogram.counts.size(), size_t(kSummaryHistogramBins));
            SummaryCache cache(str(m_cacheDir), SummaryCache::kDefaultMaxBytes);
            const auto id = fileIdentity(path);
            QVERIFY(id);
            QVERIFY(!cache.load(*id));
            cache.store(*id, s);
            const auto back = cache.load(*id);
            QVERIFY(back);
            QVERIFY(*back == s);
            // The identity is the absolute path: a relative spelling finds it too.
            const QString cwd = QDir::currentPath();
            QDir::setCurrent(m_dir.path());
            const auto rel = fileIdentity("rt.oxck");
            QDir::setCurrent(cwd);
            QVERIFY(rel && *rel == *id);
        });
    }

    void gradientSummaryRoundTrips() {
        guarded([&] {
            const std::string path = file("g.json");
            ComputationGraphStore graph;
            graph.insertNode(ComputationNode("n1", "matmul", {}));
            GradientCheckpoint g(graph, 77);
            std::vector<uint8_t> blob(8, 0);
            blob[3] = 0x3f; // 0.5f little-endian would be 00 00 00 3f
            g.setOptimizerState("w.exp_avg", blob);
            g.setOptimizerState("odd", {1, 2, 3});
            g.save(path);
            const FileSummary s = summaryOf(path);
            QCOMPARE(s.gradientStep, uint64_t(77));
            QCOMPARE(s.blobs.size(), size_t(2));
            QVERIFY(!s.blobs[0].stats); // "odd": 3 bytes, not f32
            QVERIFY(s.blobs[1].stats);
            SummaryCache cache(str(m_cacheDir), SummaryCache::kDefaultMaxBytes);
            cache.store(*fileIdentity(path), s);
            const auto back = cache.load(*fileIdentity(path));
            QVERIFY(back && *back == s);
        });
    }

    void sameSizeRewriteWithOldMtimeIsAMiss() {
        guarded([&] {
            const std::string path = file("rewrite.oxck");
            sampleCheckpoint(1).save(path);
            const auto before = fileIdentity(path);
            SummaryCache cache(str(m_cacheDir), SummaryCache::kDefaultMaxBytes);
            cache.store(*before, summaryOf(path));
            QVERIFY(cache.load(*before));
            letClockTick();
            // Rewrite the same bytes count in place (same inode), then put
            // the old mtime back.
            const std::string bytes = sampleCheckpoint(3).encode();
            QCOMPARE(uint64_t(bytes.size()), before->size);
            QFile f(qstr(path));
            QVERIFY(f.open(QIODevice::ReadWrite));
            QCOMPARE(f.write(bytes.data(), qint64(bytes.size())), qint64(bytes.size()));
            f.close();
            struct timespec times[2];
            times[0].tv_sec = before->mtimeNs / 1'000'000'000;
            times[0].tv_nsec = before->mtimeNs % 1'000'000'000;
            times[1] = times[0];
            QCOMPARE(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
            const auto after = fileIdentity(path);
            QCOMPARE(after->inode, before->inode);
            QCOMPARE(after->size, before->size);
            QCOMPARE(after->mtimeNs, before->mtimeNs);
            QVERIFY(after->ctimeNs != before->ctimeNs);
            QVERIFY(!cache.load(*after));
            // A changed mtime alone is a miss too.
            FileIdentity moved = *before;
            moved.mtimeNs += 1;
            QVERIFY(!cache.load(moved));
        });
    }

    void damagedEntriesAreIgnored_data() {
        QTest::addColumn<int>("damage");
        QTest::newRow("payload byte flipped") << 0;
        QTest::newRow("truncated") << 1;
        QTest::newRow("other version") << 2;
        QTest::newRow("foreign file") << 3;
        QTest::newRow("empty") << 4;
        QTest::newRow("trailing byte") << 5;
    }
    void damagedEntriesAreIgnored() {
        QFETCH(int, damage);
        guarded([&] {
            const std::string path = file("dmg.oxck");
            sampleCheckpoint(2).save(path);
            const auto id = fileIdentity(path);
            const FileSummary s = summaryOf(path);
            SummaryCache cache(str(m_cacheDir), SummaryCache::kDefaultMaxBytes);
            cache.store(*id, s);
            const QString entry = qstr(cache.entryPath(id->path));
            std::string bytes = testsupport::readFile(entry);
            QVERIFY(bytes.size() > 64);
            switch (damage) {
            case 0:
                bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x40);
                break;
            case 1:
                bytes.resize(bytes.size() - 9);
                break;
            case 2:
                bytes[8] = char(bytes[8] + 1); // version field
                break;
            case 3:
                bytes = "{\"not\": \"a cache entry\"}";
                break;
            case 4:
                bytes.clear();
                break;
            case 5:
                bytes += '\0';
                break;
            }
            testsupport::writeFile(entry, bytes);
            QVERIFY(!cache.load(*id));
            // Rebuilt: storing again makes it whole.
            cache.store(*id, s);
            const auto back = cache.load(*id);
            QVERIFY(back && *back == s);
        });
    }

    void entryForAnotherIdentityIsAMiss() {
        guarded([&] {
            const std::string path = file("other.oxck");
            sampleCheckpoint(1).save(path);
            const auto id = fileIdentity(path);
            SummaryCache cache(str(m_cacheDir), SummaryCache::kDefaultMaxBytes);
            cache.store(*id, summaryOf(path));
            FileIdentity other = *id;
            other.inode += 1;
            QVERIFY(!cache.load(other));
            other = *id;
            other.device += 1;
            QVERIFY(!cache.load(other));
            QVERIFY(cache.load(*id));
        });
    }

    void sizeCapEvictsLeastRecentlyUsed() {
        guarded([&] {
            std::vector<std::string> paths;
            for (int i = 0; i < 4; ++i) {
                paths.push_back(file(("lru" + std::to_string(i) + ".oxck").c_str()));
                sampleCheckpoint(float(i + 1)).save(paths.back());
            }
            const FileSummary s = summaryOf(paths[0]);
            // Measure one entry, then allow three.
            SummaryCache probe(str(m_cacheDir) + "-probe", SummaryCache::kDefaultMaxBytes);
            probe.store(*fileIdentity(paths[0]), s);
            const auto entrySize =
                QFileInfo(qstr(probe.entryPath(fileIdentity(paths[0])->path))).size();
            QVERIFY(entrySize > 0);
            SummaryCache cache(str(m_cacheDir), uint64_t(entrySize) * 3 + 10);
            for (int i = 0; i < 3; ++i) {
                cache.store(*fileIdentity(paths[size_t(i)]), summaryOf(paths[size_t(i)]));
                letClockTick();
            }
            // Use the oldest; then a fourth entry evicts the next oldest (1).
            QVERIFY(cache.load(*fileIdentity(paths[0])));
            letClockTick();
            cache.store(*fileIdentity(paths[3]), summaryOf(paths[3]));
            QVERIFY(cache.load(*fileIdentity(paths[0])));
            QVERIFY(!cache.load(*fileIdentity(paths[1])));
            QVERIFY(cache.load(*fileIdentity(paths[2])));
            QVERIFY(cache.load(*fileIdentity(paths[3])));
            qint64 total = 0;
            for (const QFileInfo& fi : QDir(m_cacheDir).entryInfoList(QDir::Files))
                total += fi.size();
            QVERIFY(uint64_t(total) <= cache.maxBytes());
        });
    }

    void locationAndCapFromEnvironment() {
        const QByteArray oldXdg = qgetenv("XDG_CACHE_HOME");
        const QByteArray oldHome = qgetenv("HOME");
        const QByteArray oldMax = qgetenv("CKPTSCOPE_CACHE_MAX_BYTES");
        qputenv("XDG_CACHE_HOME", "/tmp/xdg-test");
        QCOMPARE(qstr(SummaryCache::defaultDir()), QStringLiteral("/tmp/xdg-test/ckptscope"));
        qputenv("XDG_CACHE_HOME", "relative/ignored");
        qputenv("HOME", "/home/someone");
        QCOMPARE(qstr(SummaryCache::defaultDir()),
                 QStringLiteral("/home/someone/.cache/ckptscope"));
        qunsetenv("XDG_CACHE_HOME");
        QCOMPARE(qstr(SummaryCache::defaultDir()),
                 QStringLiteral("/home/someone/.cache/ckptscope"));
        qputenv("CKPTSCOPE_CACHE_MAX_BYTES", "12345");
        QCOMPARE(SummaryCache::defaultMaxBytes(), uint64_t(12345));
        qputenv("CKPTSCOPE_CACHE_MAX_BYTES", "12x");
        QCOMPARE(SummaryCache::defaultMaxBytes(), SummaryCache::kDefaultMaxBytes);
        qunsetenv("CKPTSCOPE_CACHE_MAX_BYTES");
        QCOMPARE(SummaryCache::defaultMaxBytes(), uint64_t(1) << 30);
        auto restore = [](const char* name, const QByteArray& v) {
            if (v.isNull())
                qunsetenv(name);
            else
                qputenv(name, v);
        };
        restore("XDG_CACHE_HOME", oldXdg);
        restore("HOME", oldHome);
        restore("CKPTSCOPE_CACHE_MAX_BYTES", oldMax);
    }
};

QTEST_GUILESS_MAIN(TestSummaryCache)
#include "tst_summarycache.moc"
