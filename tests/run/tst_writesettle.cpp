// Telling files still being written from finished ones: a fresh file is
// held back until two looks a moment apart see it unchanged, a file that
// changes between looks stays held, an old file is taken at once, and a
// held-back checkpoint is kept out of the run that is read.
#include "testsupport.h"

#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/run/run.h"
#include "ckptscope/run/writesettle.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace ckptscope;
using testsupport::str;

namespace {

constexpr int64_t kQuiet = 400'000'000; // 0.4 s

void writeCheckpoint(const std::string& path, float v) {
    Checkpoint c;
    c.addTensor({"w", {2}, {v, v}});
    c.save(path);
}

bool holds(const std::vector<std::string>& held, const std::string& path) {
    return std::find(held.begin(), held.end(), path) != held.end();
}

} // namespace

class TestWriteSettle : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void freshFileWaitsForASecondLook() {
        QTemporaryDir tmp;
        const std::string dir = str(tmp.path()), path = dir + "/a.oxck";
        writeCheckpoint(path, 1);
        WriteSettle settle(kQuiet);
        Discovery found = discoverCheckpoints({dir});
        QCOMPARE(found.candidates.size(), size_t(1));
        auto held = settle.holdBack(found, WriteSettle::nowNs());
        QVERIFY(holds(held, path));
        QVERIFY(found.candidates.empty()); // kept out of what is read
        QTest::qWait(int(kQuiet / 1'000'000) + 50);
        found = discoverCheckpoints({dir});
        held = settle.holdBack(found, WriteSettle::nowNs());
        QVERIFY(held.empty());
        QCOMPARE(found.candidates.size(), size_t(1));
        RunOptions noCache;
        noCache.useCache = false;
        QCOMPARE(readCandidates(found, noCache).checkpoints.size(), size_t(1));
    }

    void growingFileStaysHeld() {
        QTemporaryDir tmp;
        const std::string dir = str(tmp.path()), path = dir + "/a.oxck";
        writeCheckpoint(path, 1);
        WriteSettle settle(kQuiet);
        // Looks far enough apart, but the file grows in between each time.
        for (int i = 0; i < 3; ++i) {
            Discovery found = discoverCheckpoints({dir});
            QVERIFY(holds(settle.holdBack(found, WriteSettle::nowNs()), path));
            QTest::qWait(int(kQuiet / 1'000'000) + 50);
            std::ofstream(path, std::ios::app) << 'x';
        }
    }

    void oldFileIsTakenAtOnceAndFreshSkippedPathsAreHeld() {
        QTemporaryDir tmp;
        const std::string dir = str(tmp.path());
        writeCheckpoint(dir + "/old.oxck", 1);
        QTest::qWait(int(kQuiet / 1'000'000) + 50);
        std::ofstream(dir + "/new.oxck") << ""; // created, no magic yet
        WriteSettle settle(kQuiet);
        Discovery found = discoverCheckpoints({dir});
        QCOMPARE(found.skipped.size(), size_t(1)); // the empty file: no checkpoint yet
        const auto held = settle.holdBack(found, WriteSettle::nowNs());
        QCOMPARE(held, std::vector<std::string>{dir + "/new.oxck"});
        QCOMPARE(found.candidates.size(), size_t(1));
        QVERIFY(found.skipped.empty()); // being written: not reported as skipped
    }
};

QTEST_MAIN(TestWriteSettle)
#include "tst_writesettle.moc"
